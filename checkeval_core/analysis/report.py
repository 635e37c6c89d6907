"""The Analysis report, put together: what the Analysis page and ``checkeval analyze`` compute
from the selected runs and external metrics — their correlations with human scores on the
items they share (the frames and correlations of :mod:`checkeval_core.analysis.frames`),
agreement across judges, stability across judges and the significance of method vs method.

Everything is computed from the stored answers and scores, so every number can be traced
down to Yes/No decisions (the page links each chart to the Traces page). Elsewhere: the
sentences and display rows (:mod:`checkeval_core.analysis.notes`), the per-question
diagnostics (:mod:`checkeval_core.analysis.diagnostics`), the page's view-model
(:mod:`checkeval_core.analysis.analysis_view`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
import sqlite_utils

from checkeval_core.analysis.ensemble import analyze_ensemble
from checkeval_core.analysis.frames import (
    YesNoAnswers,
    correlation_points,
    correlation_report,
    metric_frame,
    run_frame,
    run_scores,
)
from checkeval_core.analysis.notes import (
    agreement_reasons,
    coverage_note,
    judges_by_method,
    kappa_note,
)
from checkeval_core.runs.labels import run_labels
from checkeval_core.stats.agreement import (
    binary_alpha_ci,
    cohen_kappa,
    krippendorff_alpha,
)
from checkeval_core.stats.significance import wilcoxon_bh
from checkeval_core.stats.values import isnan
from checkeval_core.task_split import check_which, filter_frame, split_note, task_of_run
from checkeval_core.tasks import item_groups


def _correlate(frames: dict[str, tuple[pd.DataFrame, dict[str, Any]]], shared: bool,
               n_boot: int, seed: int,
               report: Callable[[pd.DataFrame], dict[str, Any]] | None = None
               ) -> tuple[dict[str, Any], dict[str, Any], set[int]]:
    """Each frame's correlation report — on the items all frames share when ``shared`` (and
    they share any) — with the coverage and the item keys the reports read. ``report``: what
    is computed of each frame (default: :func:`correlation_report` with ``n_boot``, ``seed``)."""
    cov = coverage({k: f for k, (f, _) in frames.items()}, shared)
    out: dict[str, Any] = {"runs": {}}
    kept: set[int] = set()
    for key, (df, meta) in frames.items():
        if cov["shared"]:
            df = df[df["item_pk"].isin(cov["items"])]
        kept |= set(df["item_pk"].tolist())
        out["runs"][key] = {**{k: meta[k] for k in ("judge", "method", "aggregation")},
                            **(report(df) if report else correlation_report(df, n_boot, seed))}
    return out, cov, kept


def analyze_runs(db: sqlite_utils.Database, run_ids: list[int], aggregation: str | None = None,
                 n_boot: int = 200, seed: int = 0, split: str = "all",
                 shared: bool = False) -> dict[str, Any]:
    """Correlations per run, agreement across the runs, stability (the CLI's JSON).

    ``split``: read only the task's ``dev`` or ``heldout`` items (``all``: every item); the
    result's ``split`` block says which part was read and how many groups it has.
    ``coverage`` says which items each run scored and how many all of them share; with
    ``shared`` the correlations are computed on the shared items only (so that the runs'
    numbers can be compared), unless they share none (then ``coverage["note"]`` says so)."""
    check_which(split)
    tasks = list(dict.fromkeys(task_of_run(db, rid) for rid in run_ids))
    if split != "all" and len(tasks) > 1:
        raise ValueError(f"--split {split}: the runs belong to different tasks "
                         f"({', '.join(tasks)}); a split is a task's")
    frames = {}
    for rid in run_ids:
        df, meta = run_frame(db, rid, aggregation)
        if split != "all":
            df = filter_frame(db, tasks[0], df, split)
        frames[str(rid)] = (df, meta)
    out, cov, kept = _correlate(frames, shared, n_boot, seed)
    out["agreement"] = agreement(db, run_ids, item_pks=None if split == "all" else kept)
    out["stability"] = stability(out["runs"])
    out["coverage"] = {k: v for k, v in cov.items() if k != "items"}
    out["split"] = split_note(db, tasks[0], split) if tasks else {"which": split}
    return out


def coverage(frames: dict[str, pd.DataFrame], shared: bool = True) -> dict[str, Any]:
    """Which items each frame (run, metric) scored and which all of them share.

    ``{"runs": {key: {"n_items", "n_groups", "n_systems"}}, "n_shared_items",
    "n_shared_groups", "same_items", "shared" (the correlations use only the shared items),
    "note" (what the reader must know, or None), "items" (the shared item keys)}``. Runs over
    different items are not comparable: a correlation over 3 summaries is not the same
    quantity as one over 16, so the comparison is made on the items they share, and when they
    share none the note says loudly that the bars cannot be compared."""
    scored = {k: f.dropna(subset=["metric"]) for k, f in frames.items()}
    per = {k: {"n_items": int(f["item_pk"].nunique()), "n_groups": int(f["group"].nunique()),
               "n_systems": int(f["system"].nunique())} for k, f in scored.items()}
    sets = [set(f["item_pk"]) for f in scored.values()]
    common = set.intersection(*sets) if sets else set()
    same = all(s == sets[0] for s in sets)
    groups = {g for f in scored.values() for g in f.loc[f["item_pk"].isin(common), "group"]}
    use = bool(shared and len(frames) >= 2 and common and not same)
    return {"runs": per, "n_shared_items": len(common), "n_shared_groups": len(groups),
            "same_items": same, "shared": use,
            "note": coverage_note(per, len(common), len(groups), same, use), "items": common}


def scores_stamp(db: sqlite_utils.Database) -> str:
    """Changes whenever a score is written (the page's cache key for :func:`analyze_runs`)."""
    return str(db.execute("SELECT MAX(id) FROM score").fetchone()[0])


def analyze_metric(db: sqlite_utils.Database, task: str, name: str, n_boot: int = 200,
                   seed: int = 0, split: str = "all") -> dict[str, Any]:
    """Correlations of an external metric with human scores (on one part of the task's
    split: then the result has a ``split`` block too)."""
    df = metric_frame(db, task, name)
    if split == "all":
        return correlation_report(df, n_boot, seed)
    return {**correlation_report(filter_frame(db, task, df, split), n_boot, seed),
            "split": split_note(db, task, split)}


def _page_frames(db: sqlite_utils.Database, task: str, run_ids: list[int],
                 metrics: list[str] | tuple[str, ...], aggregation: str | None,
                 split: str) -> dict[str, tuple[pd.DataFrame, dict[str, Any]]]:
    """The frames of the page's runs and external metrics (on one part of the split)."""
    frames = {str(r): run_frame(db, r, aggregation) for r in run_ids}
    frames.update({f"metric:{m}": (metric_frame(db, task, m), {"judge": m, "method": "external",
                                                                "aggregation": m})
                   for m in metrics})
    if split != "all":
        frames = {k: (filter_frame(db, task, f, split), meta) for k, (f, meta) in frames.items()}
    return frames


def _label(db: sqlite_utils.Database, runs: dict[str, Any]) -> None:
    """Every entry's ``label``: the run's one label, else its key (a metric's name)."""
    names = run_labels(db, [int(k) for k in runs if k.isdigit()])
    for key, r in runs.items():
        r["label"] = names.get(int(key), f"#{key}") if key.isdigit() else key


def page_points(db: sqlite_utils.Database, task: str, run_ids: list[int],
                metrics: list[str] | tuple[str, ...] = (), aggregation: str | None = None,
                level: str = "sample_level", coef: str = "spearman", shared: bool = True,
                split: str = "all") -> dict[str, Any]:
    """The point figures of :func:`page_report` for one level and coefficient, without any
    resampling, agreement or ensemble — what the page draws first while the rest is computed.
    ``{"runs": {key: {"judge", "method", "aggregation", "label", "dimensions", "support"}},
    "coverage"}``: the same runs, items (shared or not), values, n, support and reasons as
    :func:`page_report` (the same frames, coverage rule and
    :func:`~checkeval_core.analysis.frames.correlation_points`); every interval is NaN, its
    reason :data:`~checkeval_core.analysis.frames.PENDING`."""
    check_which(split)
    out, cov, _ = _correlate(_page_frames(db, task, run_ids, metrics, aggregation, split),
                             shared, 0, 0, lambda df: correlation_points(df, level, coef))
    _label(db, out["runs"])
    out["coverage"] = {k: v for k, v in cov.items() if k != "items"}
    return out


def page_report(db: sqlite_utils.Database, task: str, run_ids: list[int],
                metrics: list[str] | tuple[str, ...] = (), aggregation: str | None = None,
                ensemble: bool = False, mode: str = "mean", n_boot: int = 100,
                shared: bool = True, split: str = "all") -> dict[str, Any]:
    """What the Analysis page shows: :func:`analyze_runs` of the runs, plus (optionally) their
    ensemble and each external metric as one more entry of ``runs``; every entry gets a
    ``label`` (the run's one label, ``#12 · v1 · fake · checkeval · 16 items``; ``ensemble of
    #1, #2``; the metric's name).

    With ``shared`` (the default) every run and metric is compared on the items all of them
    share (``coverage`` says how many, and what each covers). ``split``: every figure reads
    the task's ``dev`` / ``heldout`` items (``split`` block)."""
    check_which(split)
    out, cov, kept = _correlate(_page_frames(db, task, run_ids, metrics, aggregation, split),
                                shared, n_boot, 0)
    _label(db, out["runs"])
    # on the items the correlations read: the shared ones when the runs are compared on them
    out["agreement"] = agreement(db, list(run_ids), item_pks=kept if split != "all"
                                 or cov["shared"] else None)
    out["stability"] = stability({k: v for k, v in out["runs"].items() if k.isdigit()})
    out["coverage"] = {k: v for k, v in cov.items() if k != "items"}
    # the items behind each bar, for the page's "items behind a bar" table
    out["coverage"]["shared_item_pks"] = sorted(int(i) for i in cov["items"]) \
        if cov["shared"] else None
    out["judges"] = {k: v["judge"] for k, v in out["runs"].items() if k.isdigit()}
    out["split"] = split_note(db, task, split)
    if ensemble and len(run_ids) >= 2:
        ens = analyze_ensemble(db, list(run_ids), aggregation, n_boot=n_boot, mode=mode,
                               split=split)
        # the ensemble is scored on the items every member scored: the shared items already
        out["runs"]["ensemble:" + "+".join(map(str, run_ids))] = {
            "judge": "ensemble", "method": "ensemble", "aggregation": aggregation or "each run's",
            **ens, "label": "ensemble of " + ", ".join(f"#{r}" for r in run_ids)}
    return out


# -- agreement across judges ------------------------------------------------------------------
def agreement(db: sqlite_utils.Database, run_ids: list[int],
              item_pks: set[int] | None = None) -> dict[str, Any]:
    """Across runs: Krippendorff α (nominal) and Fleiss κ on Yes/No answers per
    (item, question, unit); α (interval) on dimension scores; pairwise Cohen κ.
    One run → every statistic NaN (documented: agreement needs two coders).

    ``reasons`` says why each NaN statistic is undefined (or what makes a defined one
    misleading, e.g. a judge answering the same everywhere); ``pairwise`` gives each pair's
    κ with its number of units, raw agreement and such a note. ``item_pks``: only answers
    and scores of these items (a dev / held-out part of the task). ``support`` counts the
    items, groups and systems of the units; ``ci`` holds α's group-bootstrap interval and
    ``ci_reasons`` why a statistic has none."""
    if len(run_ids) < 2:
        why = (f"needs ≥ 2 runs (judges); {len(run_ids)} selected — select another run of "
               "the same task")
        return {"krippendorff_alpha": math.nan, "fleiss_kappa": math.nan,
                "krippendorff_alpha_scores": math.nan, "pairwise_cohen": {}, "n_units": 0,
                "pairwise": {}, "reasons": {"krippendorff_alpha": why, "fleiss_kappa": why,
                                            "krippendorff_alpha_scores": why},
                "support": {"n_items": 0, "n_groups": 0, "n_systems": 0, "n_runs":
                            len(run_ids)}, "ci": {"krippendorff_alpha": [math.nan, math.nan]},
                "ci_reasons": dict.fromkeys(("krippendorff_alpha", "fleiss_kappa",
                                             "krippendorff_alpha_scores"),
                                            "no interval: " + why)}
    yn = YesNoAnswers(db, run_ids, item_pks)
    alpha = krippendorff_alpha(yn.matrix()) if yn.n else math.nan
    fk = yn.fleiss()
    pair, detail = {}, {}
    for a, b in combinations(run_ids, 2):
        la, lb, agree_ab = yn.pair(a, b)
        pair[f"{a}-{b}"] = cohen_kappa(la, lb)
        detail[f"{a}-{b}"] = {"kappa": pair[f"{a}-{b}"], "n": len(la), "agree": agree_ab,
                              "reason": kappa_note({a: la, b: lb}, pair[f"{a}-{b}"])}
    sc = run_scores(db, run_ids, item_pks)
    su = [k for k, v in sc.items() if len(v) >= 2]
    smat = [[sc[u].get(rid, np.nan) for u in su] for rid in run_ids]
    alpha_s = krippendorff_alpha(smat, "interval") if su else math.nan
    agree = yn.all_agree()
    reasons = agreement_reasons({rid: yn.of_run(rid) for rid in run_ids}, alpha, fk, yn.n,
                                agree, alpha_s, len(su))
    where = item_groups(db, set(yn.items))
    sup = {"n_items": len(where), "n_groups": len({g for g, _ in where.values()}),
           "n_systems": len({s_ for _, s_ in where.values()}), "n_runs": len(run_ids)}
    ci = binary_alpha_ci(yn.group_sums([where[i][0] for i in yn.items]))
    no_ci = "no interval: computed for Krippendorff α (Yes/No) only"
    return {"krippendorff_alpha": alpha, "fleiss_kappa": fk,
            "krippendorff_alpha_scores": alpha_s, "pairwise_cohen": pair, "n_units": yn.n,
            "n_agree": agree, "pairwise": detail, "reasons": reasons, "support": sup,
            "ci": {"krippendorff_alpha": ci["ci"]},
            "ci_reasons": {"krippendorff_alpha": ci["reason"], "fleiss_kappa": no_ci,
                           "krippendorff_alpha_scores": no_ci}}


# -- stability and significance -----------------------------------------------------------------
def stability_points(per_run: dict[str, Any], level: str = "sample_level",
                     coef: str = "spearman") -> dict[str, list[dict[str, Any]]]:
    """Per method, the per-dimension correlations of one run per *distinct* judge.

    Stability across judges asks how much the value moves when the judge changes: two runs
    of the same judge (a rerun, another aggregation) are not two judges, so only the first
    run of each (method, judge) counts. Ensembles and external metrics have no judge."""
    seen: set[tuple[str, str]] = set()
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for key, r in per_run.items():
        method = r.get("method")
        if method in ("external", "ensemble"):
            continue
        judge = r.get("judge", key)
        if (method, judge) in seen:
            continue
        seen.add((method, judge))
        for dim, d in r["dimensions"].items():
            v = d[level][coef]
            if not isnan(v):
                out[method].append({"run": key, "judge": judge, "dimension": dim, "value": v})
    return dict(out)


def stability(per_run: dict[str, Any], level: str = "sample_level",
              coef: str = "spearman") -> dict[str, Any]:
    """Mean and variance of the runs' average correlation across *distinct* judges, per
    method (CheckEval Fig. 2); a judge's second run of the method is not counted."""
    by_method: dict[str, dict[str, float]] = defaultdict(dict)
    for key, r in per_run.items():
        if r.get("method") in ("external", "ensemble"):
            continue
        v = r["average"][level][coef]
        if not math.isnan(v):
            by_method[r["method"]].setdefault(r.get("judge", key), v)
    runs = judges_by_method(per_run)
    out = {}
    for m, per_judge in by_method.items():
        v = list(per_judge.values())
        reason = None
        if len(v) < 2:
            reason = (f"variance needs ≥ 2 runs of this method with different judges; "
                      f"{len(runs[m])} run(s) of {len(set(runs[m]))} judge(s) selected")
        out[m] = {"mean": float(np.mean(v)), "variance": float(np.var(v, ddof=1))
                  if len(v) > 1 else math.nan, "n_runs": len(runs[m]), "n_judges": len(v),
                  "values": v, "reason": reason}
    return out


def method_significance(per_run: dict[str, Any], level: str = "sample_level",
                        coef: str = "spearman") -> dict[str, dict[str, Any]]:
    """Method vs method over judges, per dimension: Wilcoxon on the paired correlations (the
    same judge under both methods), BH-corrected (empty with fewer than 2 methods)."""
    runs = [r for r in per_run.values() if r["method"] not in ("external", "ensemble")]
    methods = sorted({r["method"] for r in runs})
    dims = sorted({d for r in runs for d in r["dimensions"]})
    by = {(r["method"], r["judge"]): r for r in runs}
    pairs = {}
    for a, b in combinations(methods, 2):
        judges = sorted({j for m, j in by if m == a} & {j for m, j in by if m == b})
        for dim in dims:
            va = [by[(a, j)]["dimensions"].get(dim, {}).get(level, {}).get(coef) for j in judges]
            vb = [by[(b, j)]["dimensions"].get(dim, {}).get(level, {}).get(coef) for j in judges]
            ok = [(x, y) for x, y in zip(va, vb) if not isnan(x) and not isnan(y)]
            pairs[f"{a} vs {b} · {dim}"] = ([x for x, _ in ok], [y for _, y in ok])
    return wilcoxon_bh(pairs)


