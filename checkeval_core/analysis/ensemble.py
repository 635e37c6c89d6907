"""Ensembles of judges: one score per item and dimension from several runs on the same items.

Small CPU judges are noisy in different ways (the 0.5B and the 1.5B model, or one model
under several prompt layouts); averaging them is a cheap way to cancel some of that noise.
Each member's scores are standardised per dimension (z-score over the items all members
scored), so members on different scales — mean p(Yes), share of Yes, Likert 1–5 — weigh
equally; the ensemble score is the mean of the z-scores. How much the members agree
(pairwise Spearman of their scores, per dimension) is reported beside it: members that agree
perfectly add nothing, members that do not correlate at all are mostly noise.

Edge cases: a member whose scores for a dimension are constant has no z-score there and is
left out of that dimension (its agreement is NaN); an item missing from any member is left
out; fewer than two members is an error.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
import sqlite_utils

from checkeval_core.analysis.frames import correlation_report, run_frame
from checkeval_core.runs.score_math import answer_value, calibrated_scores
from checkeval_core.stats.correlation import corr
from checkeval_core.store import rows
from checkeval_core.task_split import filter_frame, task_of_run


def ensemble_frame(db: sqlite_utils.Database, run_ids: list[int],
                   aggregation: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ensemble's scores in :func:`run_frame`'s shape, and per-dimension agreement."""
    if len(run_ids) < 2:
        raise ValueError("an ensemble needs at least two runs (--run A --run B)")
    frames, metas = [], []
    for rid in run_ids:
        df, meta = run_frame(db, rid, aggregation)
        if df.empty:
            raise ValueError(f"run {rid} has no scores with aggregation "
                             f"{meta['aggregation']!r}")
        frames.append(df.dropna(subset=["metric"]))
        metas.append(meta)
    if len({m["task_id"] for m in metas}) != 1:
        raise ValueError("the runs of an ensemble must be on the same task")
    key = ["item_pk", "dimension"]
    wide = frames[0][key + ["item_id", "group", "system", "human", "metric"]].rename(
        columns={"metric": f"m{run_ids[0]}"})
    for rid, df in zip(run_ids[1:], frames[1:]):
        wide = wide.merge(df[key + ["metric"]].rename(columns={"metric": f"m{rid}"}), on=key)
    cols = [f"m{r}" for r in run_ids]
    parts, agree = [], {}
    for dim, part in wide.groupby("dimension", sort=True):
        part = part.copy()
        z = []
        for c in cols:
            sd = part[c].std(ddof=0)
            if sd > 0 and not math.isnan(sd):
                z.append((part[c] - part[c].mean()) / sd)
        part["metric"] = pd.concat(z, axis=1).mean(axis=1) if z else np.nan
        parts.append(part)
        pair = {}
        for a, b in combinations(run_ids, 2):
            x, y = part[f"m{a}"].to_numpy(float), part[f"m{b}"].to_numpy(float)
            pair[f"{a}-{b}"] = math.nan if len(x) < 3 else corr(x, y, "spearman")
        agree[dim] = pair
    out = pd.concat(parts, ignore_index=True) if parts else wide.assign(metric=np.nan)
    return out.drop(columns=cols), {"members": [
        {k: m[k] for k in ("run", "judge", "method", "aggregation")} for m in metas],
        "member_agreement": agree}


def stacked_frame(db: sqlite_utils.Database, run_ids: list[int],
                  with_length: bool = False) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A learned ensemble: :func:`~checkeval_core.runs.score_math.calibrated_scores` on the
    per-question answers of *all* member runs side by side (and the output's length with
    ``with_length``), fitted leave-one-document-out against the human scores — so the
    members' questions get weights learned on other documents instead of equal z-weights."""
    if len(run_ids) < 2:
        raise ValueError("an ensemble needs at least two runs (--run A --run B)")
    metas = [run_frame(db, rid, None)[1] for rid in run_ids]
    if len({m["task_id"] for m in metas}) != 1:
        raise ValueError("the runs of an ensemble must be on the same task")
    marks = ",".join("?" * len(run_ids))
    feats: dict[int, dict[tuple, float]] = {}
    for a in rows(db, f"SELECT run_id, item_id, question_id, unit, verdict, p_yes FROM answer "
                      f"WHERE run_id IN ({marks})", run_ids):
        v = answer_value(a["verdict"], a["p_yes"])
        if v is not None:
            feats.setdefault(a["item_id"], {})[(a["run_id"], a["question_id"], a["unit"])] = v
    cols = sorted({k for f in feats.values() for k in f})
    items = pd.DataFrame(rows(db, "SELECT i.id AS item_pk, i.item_id, i.group_id AS \"group\", "
                                  "i.system_id AS system, i.output, hs.dimension, hs.value AS "
                                  "human FROM item i JOIN human_score hs ON hs.item_id = i.id "
                                  "WHERE i.task_id = ? AND hs.annotator = ''",
                             [metas[0]["task_id"]]))
    items = items[items["item_pk"].isin(feats)]
    parts = []
    for _dim, part in items.groupby("dimension", sort=True):
        part = part.copy()
        X = np.array([[feats[i].get(c, np.nan) for c in cols] for i in part["item_pk"]])
        if with_length:
            X = np.column_stack([X, np.log1p(part["output"].str.split().str.len())])
        part["metric"] = calibrated_scores(X, part["human"].to_numpy(float), part["group"])
        parts.append(part.drop(columns=["output"]))
    df = pd.concat(parts, ignore_index=True) if parts else items.assign(metric=np.nan)
    return df, {"members": [{k: m[k] for k in ("run", "judge", "method", "aggregation")}
                            for m in metas], "n_features": len(cols) + int(with_length)}


ENSEMBLE_MODES = ("mean", "stack", "stack_len")


def analyze_ensemble(db: sqlite_utils.Database, run_ids: list[int],
                     aggregation: str | None = None, n_boot: int = 200,
                     seed: int = 0, mode: str = "mean", split: str = "all") -> dict[str, Any]:
    """Correlation report of the ensemble plus its members and their agreement.

    ``mode``: ``mean`` (mean of standardised scores), ``stack`` (calibration on all members'
    answers), ``stack_len`` (the same plus the output's length). ``split``: the correlations
    read only the task's ``dev`` or ``heldout`` items."""
    if mode not in ENSEMBLE_MODES:
        raise ValueError(f"ensemble mode {mode!r}: use one of {', '.join(ENSEMBLE_MODES)}")
    df, meta = ensemble_frame(db, run_ids, aggregation)  # members and their agreement
    if mode != "mean":
        df, extra = stacked_frame(db, run_ids, with_length=mode == "stack_len")
        meta = {**meta, "n_features": extra["n_features"]}
    if split != "all":
        df = filter_frame(db, task_of_run(db, run_ids[0]), df, split)
    return {**meta, "mode": mode, **correlation_report(df, n_boot, seed)}
