"""From stored answers to the ``score`` table, every aggregation side by side.

* checkeval / rocketeval: ``share_yes`` and ``mean_p_yes`` per item and dimension; with human
  scores of the dimension, also ``linear`` (CheckEval's learned question weights) and, for
  rocketeval, ``supervised`` (Extremely Randomized Trees blended by α) — both predicted out of
  sample (an item's score never comes from a model fitted on its own group); and
  ``calibrated`` (ridge on every question of the checklist, leave-one-group-out) and
  ``calibrated_len`` (the same plus the output's length in words as a feature).
* seal: ``weighted`` (mean over units of Σ w·v) and ``share_yes`` over all verifications;
  when the answers carry p(Yes), also ``weighted_p_yes`` (the same with v = p(Yes)) and
  ``mean_p_yes``.
* geval: ``likert`` (parsed 1–5) and ``likert_prob`` (probability-weighted, if available).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.runs import aggregate as A
from checkeval_core.store import loads, transaction


def compute_scores(db: sqlite_utils.Database, run_id: int) -> int:
    run = db.execute("SELECT method, params FROM run WHERE id = ?", [run_id]).fetchone()
    method, params = run[0], loads(run[1], {})
    ans = db.execute("SELECT item_id, question_id, unit, dimension, verdict, p_yes, value "
                     "FROM answer WHERE run_id = ?", [run_id]).fetchall()
    out: list[tuple[int, str, str, float | None, int, int]] = []
    by_item_dim: dict[tuple[int, str], list[tuple]] = defaultdict(list)
    for a in ans:
        by_item_dim[(a[0], a[3])].append(a)
    if method in ("checkeval", "rocketeval"):
        for (item, dim), lst in by_item_dim.items():
            share, inv = A.share_yes([a[4] for a in lst])
            out.append((item, dim, "share_yes", share, len(lst), inv))
            out.append((item, dim, "mean_p_yes", A.mean_p_yes([(a[4], a[5]) for a in lst]),
                        len(lst), inv))
        out += _learned(db, run_id, method, by_item_dim, params)
    elif method == "seal":
        weights = params.get("seal_weights", {})
        for (item, dim), lst in by_item_dim.items():
            units: dict[str, dict[str, str]] = defaultdict(dict)
            probs: dict[str, dict[str, float | None]] = defaultdict(dict)
            for a in lst:
                _, sub, idx = a[2].split("|", 2)
                units[idx][sub] = a[4]
                probs[idx][sub] = a[5] if a[4] in ("yes", "no") else None
            w = weights.get(dim) or A.normalize_weights({}, sorted({s for u in units.values()
                                                                     for s in u}))
            score = A.seal_dimension_score([A.seal_unit_score(v, w) for v in units.values()])
            share, inv = A.share_yes([a[4] for a in lst])
            out.append((item, dim, "weighted", score, len(lst), inv))
            out.append((item, dim, "share_yes", share, len(lst), inv))
            if any(a[5] is not None for a in lst):
                score_p = A.seal_dimension_score([A.seal_unit_score_p(v, w)
                                                  for v in probs.values()])
                out.append((item, dim, "weighted_p_yes", score_p, len(lst), inv))
                out.append((item, dim, "mean_p_yes",
                            A.mean_p_yes([(a[4], a[5]) for a in lst]), len(lst), inv))
    elif method == "geval":
        for (item, dim), lst in by_item_dim.items():
            a = lst[0]
            out.append((item, dim, "likert", a[6], 1, int(a[6] is None)))
            if a[5] is not None:
                out.append((item, dim, "likert_prob", a[5], 1, 0))
    with transaction(db):
        db.execute("DELETE FROM score WHERE run_id = ?", [run_id])
        db.conn.executemany(
            "INSERT INTO score (run_id, item_id, dimension, aggregation, value, n_questions, "
            "n_invalid) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(run_id, i, d, agg, v, n, inv) for i, d, agg, v, n, inv in out])
    return len(out)


def _learned(db: sqlite_utils.Database, run_id: int, method: str,
             by_item_dim: dict[tuple[int, str], list[tuple]],
             params: dict[str, Any]) -> list[tuple]:
    """Out-of-sample learned aggregations where human scores exist."""
    human = {(r[0], r[1]): r[2] for r in db.execute(
        "SELECT hs.item_id, hs.dimension, hs.value FROM human_score hs WHERE hs.annotator = '' "
        "AND hs.item_id IN (SELECT DISTINCT item_id FROM answer WHERE run_id = ?)", [run_id])}
    group = {r[0]: r[1] for r in db.execute(
        "SELECT id, group_id FROM item WHERE id IN (SELECT DISTINCT item_id FROM answer "
        "WHERE run_id = ?)", [run_id])}
    out: list[tuple] = []
    dims = sorted({d for _, d in by_item_dim})
    # every question of the checklist, for the cross-dimension calibration
    all_q: dict[int, dict[int, float]] = defaultdict(dict)
    for (i, _d), lst in by_item_dim.items():
        for a in lst:
            v = A.answer_value(a[4], a[5])
            if v is not None:
                all_q[i][a[1]] = v
    all_ids = sorted({q for vals in all_q.values() for q in vals})
    n_words = {r[0]: len((r[1] or "").split()) for r in db.execute(
        "SELECT id, output FROM item WHERE id IN (SELECT DISTINCT item_id FROM answer "
        "WHERE run_id = ?)", [run_id])}
    for dim in dims:
        its = sorted(i for (i, d) in by_item_dim if d == dim and (i, dim) in human)
        if len(its) < 4 or len({group[i] for i in its}) < 2:
            continue
        qids = sorted({a[1] for i in its for a in by_item_dim[(i, dim)]})
        instance = params.get("instance", False)
        X = np.full((len(its), len(qids)), np.nan)
        for r, i in enumerate(its):
            for a in by_item_dim[(i, dim)]:
                v = A.answer_value(a[4], a[5])
                if v is not None:
                    X[r, qids.index(a[1])] = v
        y = np.array([human[(i, dim)] for i in its])
        g = [group[i] for i in its]
        unsup = np.array([A.mean_p_yes([(a[4], a[5]) for a in by_item_dim[(i, dim)]]) or 0.5
                          for i in its])
        if not instance:
            lin = A.linear_weight_scores(X, y, g)
            out += [(i, dim, "linear", None if np.isnan(v) else float(v), len(qids), 0)
                    for i, v in zip(its, lin)]
        if method == "rocketeval":
            sup, _ = A.supervised_scores(X, y, g, unsup, mode="within" if instance else "across")
            out += [(i, dim, "supervised", float(v), len(qids), 0) for i, v in zip(its, sup)]
        if not instance and len({group[i] for i in its}) >= 3:
            Xa = np.array([[all_q[i].get(q, np.nan) for q in all_ids] for i in its])
            cal = A.calibrated_scores(Xa, y, g)
            out += [(i, dim, "calibrated", None if np.isnan(v) else float(v), len(all_ids), 0)
                    for i, v in zip(its, cal)]
            # the same with the output's length as one more feature: length is a strong,
            # free signal on some dimensions (Topical-Chat engagingness); reported apart so
            # the judge's own contribution stays visible
            Xl = np.column_stack([Xa, [np.log1p(n_words[i]) for i in its]])
            cal = A.calibrated_scores(Xl, y, g)
            out += [(i, dim, "calibrated_len", None if np.isnan(v) else float(v),
                     len(all_ids), 0) for i, v in zip(its, cal)]
    return out
