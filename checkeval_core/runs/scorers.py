"""One scoring function per kind of method: a run's answers → score rows, every aggregation.

A method's entry in :mod:`checkeval_core.runs.registry` names its scorer; the scorer gets
the run's answers (named fields, no tuple positions) and a :class:`ScoreContext` that reads
the human scores, groups and output lengths only when a learned aggregation asks for them.
Scorers write nothing (:mod:`checkeval_core.runs.score_write` stores their rows).

* :func:`score_yes_no` (checkeval, rocketeval): ``share_yes`` and ``mean_p_yes`` per item and
  dimension; with human scores of the dimension, the learned aggregations the method lists —
  ``linear`` (CheckEval's learned question weights), ``supervised`` (Extremely Randomized
  Trees blended by α), ``calibrated`` (ridge on every question of the checklist) and
  ``calibrated_len`` (the same plus the output's length in words) — all predicted out of
  sample (an item's score never comes from a model fitted on its own group).
* :func:`score_seal`: ``weighted`` (mean over units of Σ w·v) and ``share_yes`` over all
  verifications; when the answers carry p(Yes), also ``weighted_p_yes`` (v = p(Yes)) and
  ``mean_p_yes``.
* :func:`score_likert` (geval): ``likert`` (parsed 1–5) and ``likert_prob``
  (probability-weighted, if available).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import sqlite_utils

from checkeval_core.runs import score_math as A

_RUN_ITEMS = "SELECT DISTINCT item_id FROM answer WHERE run_id = ?"


class Answer(NamedTuple):
    """One stored judge decision, as the scorers read it."""

    item_id: int  # the item's internal id
    question_id: int  # 0 when the answer is not about one question (SEAL unit, Likert)
    unit: str  # '' = the whole item; SEAL: "dimension|sub-dimension|unit index"
    dimension: str
    verdict: str  # yes | no | invalid
    p_yes: float | None
    value: float | None  # a number the method parsed (G-Eval's 1–5)


class ScoreRow(NamedTuple):
    """One row of the ``score`` table (the run id is added when it is written)."""

    item_id: int
    dimension: str
    aggregation: str
    value: float | None
    n_questions: int
    n_invalid: int


@dataclass
class ScoreContext:
    """What a scorer may need besides the answers; the database is read lazily, once."""

    db: sqlite_utils.Database
    run_id: int
    params: dict[str, Any]
    aggregations: tuple[str, ...]  # the method's aggregations (a scorer computes only these)

    @cached_property
    def human(self) -> dict[tuple[int, str], float]:
        """The reference human score of each (item, dimension) of the run."""
        return {(r[0], r[1]): r[2] for r in self.db.execute(
            "SELECT hs.item_id, hs.dimension, hs.value FROM human_score hs WHERE "
            f"hs.annotator = '' AND hs.item_id IN ({_RUN_ITEMS})", [self.run_id])}

    @cached_property
    def group(self) -> dict[int, str]:
        return {r[0]: r[1] for r in self.db.execute(
            f"SELECT id, group_id FROM item WHERE id IN ({_RUN_ITEMS})", [self.run_id])}

    @cached_property
    def n_words(self) -> dict[int, int]:
        return {r[0]: len((r[1] or "").split()) for r in self.db.execute(
            f"SELECT id, output FROM item WHERE id IN ({_RUN_ITEMS})", [self.run_id])}


def by_item_dimension(answers: list[Answer]) -> dict[tuple[int, str], list[Answer]]:
    out: dict[tuple[int, str], list[Answer]] = defaultdict(list)
    for a in answers:
        out[(a.item_id, a.dimension)].append(a)
    return out


def _mean_p(lst: list[Answer]) -> float | None:
    return A.mean_p_yes([(a.verdict, a.p_yes) for a in lst])


def score_yes_no(answers: list[Answer], ctx: ScoreContext) -> list[ScoreRow]:
    """One Yes/No answer per checklist question (CheckEval, RocketEval)."""
    groups = by_item_dimension(answers)
    out: list[ScoreRow] = []
    for (item, dim), lst in groups.items():
        share, inv = A.share_yes([a.verdict for a in lst])
        out.append(ScoreRow(item, dim, "share_yes", share, len(lst), inv))
        out.append(ScoreRow(item, dim, "mean_p_yes", _mean_p(lst), len(lst), inv))
    return out + _learned(groups, ctx)


def _learned(groups: dict[tuple[int, str], list[Answer]], ctx: ScoreContext) -> list[ScoreRow]:
    """Out-of-sample learned aggregations (those the method lists) where human scores exist."""
    wanted = {"linear", "supervised", "calibrated", "calibrated_len"} & set(ctx.aggregations)
    if not wanted:
        return []
    human, group = ctx.human, ctx.group
    out: list[ScoreRow] = []
    # every question of the checklist, for the cross-dimension calibration
    all_q: dict[int, dict[int, float]] = defaultdict(dict)
    for (i, _d), lst in groups.items():
        for a in lst:
            v = A.answer_value(a.verdict, a.p_yes)
            if v is not None:
                all_q[i][a.question_id] = v
    all_ids = sorted({q for vals in all_q.values() for q in vals})
    instance = ctx.params.get("instance", False)
    for dim in sorted({d for _, d in groups}):
        its = sorted(i for (i, d) in groups if d == dim and (i, dim) in human)
        if len(its) < 4 or len({group[i] for i in its}) < 2:
            continue
        qids = sorted({a.question_id for i in its for a in groups[(i, dim)]})
        X = np.full((len(its), len(qids)), np.nan)
        for r, i in enumerate(its):
            for a in groups[(i, dim)]:
                v = A.answer_value(a.verdict, a.p_yes)
                if v is not None:
                    X[r, qids.index(a.question_id)] = v
        y = np.array([human[(i, dim)] for i in its])
        g = [group[i] for i in its]
        if "linear" in wanted and not instance:
            lin = A.linear_weight_scores(X, y, g)
            out += [ScoreRow(i, dim, "linear", None if np.isnan(v) else float(v), len(qids), 0)
                    for i, v in zip(its, lin)]
        if "supervised" in wanted:
            unsup = np.array([_mean_p(groups[(i, dim)]) or 0.5 for i in its])
            sup, _ = A.supervised_scores(X, y, g, unsup, mode="within" if instance else "across")
            out += [ScoreRow(i, dim, "supervised", float(v), len(qids), 0)
                    for i, v in zip(its, sup)]
        if not instance and len(set(g)) >= 3 and wanted & {"calibrated", "calibrated_len"}:
            Xa = np.array([[all_q[i].get(q, np.nan) for q in all_ids] for i in its])
            if "calibrated" in wanted:
                cal = A.calibrated_scores(Xa, y, g)
                out += [ScoreRow(i, dim, "calibrated", None if np.isnan(v) else float(v),
                                 len(all_ids), 0) for i, v in zip(its, cal)]
            if "calibrated_len" in wanted:
                # the output's length as one more feature: a strong, free signal on some
                # dimensions (Topical-Chat engagingness); reported apart so the judge's own
                # contribution stays visible
                n_words = ctx.n_words
                Xl = np.column_stack([Xa, [np.log1p(n_words[i]) for i in its]])
                cal = A.calibrated_scores(Xl, y, g)
                out += [ScoreRow(i, dim, "calibrated_len", None if np.isnan(v) else float(v),
                                 len(all_ids), 0) for i, v in zip(its, cal)]
    return out


def score_seal(answers: list[Answer], ctx: ScoreContext) -> list[ScoreRow]:
    """Unit × sub-dimension verifications, weighted by sub-dimension (SEAL)."""
    weights = ctx.params.get("seal_weights", {})
    out: list[ScoreRow] = []
    for (item, dim), lst in by_item_dimension(answers).items():
        units: dict[str, dict[str, str]] = defaultdict(dict)
        probs: dict[str, dict[str, float | None]] = defaultdict(dict)
        for a in lst:
            _, sub, idx = a.unit.split("|", 2)
            units[idx][sub] = a.verdict
            probs[idx][sub] = a.p_yes if a.verdict in ("yes", "no") else None
        w = weights.get(dim) or A.normalize_weights({}, sorted({s for u in units.values()
                                                                 for s in u}))
        score = A.seal_dimension_score([A.seal_unit_score(v, w) for v in units.values()])
        share, inv = A.share_yes([a.verdict for a in lst])
        out.append(ScoreRow(item, dim, "weighted", score, len(lst), inv))
        out.append(ScoreRow(item, dim, "share_yes", share, len(lst), inv))
        if any(a.p_yes is not None for a in lst):
            score_p = A.seal_dimension_score([A.seal_unit_score_p(v, w)
                                              for v in probs.values()])
            out.append(ScoreRow(item, dim, "weighted_p_yes", score_p, len(lst), inv))
            out.append(ScoreRow(item, dim, "mean_p_yes", _mean_p(lst), len(lst), inv))
    return out


def score_likert(answers: list[Answer], ctx: ScoreContext) -> list[ScoreRow]:
    """One 1–5 answer per item and dimension (G-Eval)."""
    out: list[ScoreRow] = []
    for (item, dim), lst in by_item_dimension(answers).items():
        a = lst[0]
        out.append(ScoreRow(item, dim, "likert", a.value, 1, int(a.value is None)))
        if a.p_yes is not None:
            out.append(ScoreRow(item, dim, "likert_prob", a.p_yes, 1, 0))
    return out
