"""One item's Yes/No trace across runs: every question, each run's answer, the scores."""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.store import rows


def item_trace(db: sqlite_utils.Database, item_pk: int, run_ids: list[int]) -> dict[str, Any]:
    """``{"item", "runs", "answers", "scores", "units", "human", "annotations"}`` (SQL by
    index on (item_id, question_id): cost grows with this item's answers only)."""
    item = rows(db, "SELECT * FROM item WHERE id = ?", [item_pk])
    if not item or not run_ids:
        return {"item": item[0] if item else None, "runs": [], "answers": [], "scores": [],
                "units": [], "human": {}, "annotations": []}
    marks = ",".join("?" * len(run_ids))
    runs = rows(db, f"SELECT id, judge_spec, method FROM run WHERE id IN ({marks}) ORDER BY id",
                run_ids)
    answers = rows(db, "SELECT a.run_id, a.question_id, a.unit, a.dimension, a.verdict, a.p_yes, "
                       "a.value, a.raw, a.error, q.text AS question, s.name AS sub_dimension "
                       "FROM answer a LEFT JOIN question q ON q.id = a.question_id "
                       "LEFT JOIN sub_dimension s ON s.id = q.sub_dimension_id "
                       f"WHERE a.item_id = ? AND a.run_id IN ({marks}) "
                       "ORDER BY a.dimension, s.position, q.position, a.question_id, a.unit",
                   [item_pk, *run_ids])
    scores = rows(db, f"SELECT run_id, dimension, aggregation, value FROM score WHERE item_id = ? "
                      f"AND run_id IN ({marks}) ORDER BY dimension, aggregation",
                  [item_pk, *run_ids])
    units = rows(db, f"SELECT run_id, dimension, unit, kind, text FROM seal_unit WHERE item_id = ? "
                     f"AND run_id IN ({marks}) ORDER BY dimension, position", [item_pk, *run_ids])
    human = {r["dimension"]: r["value"] for r in rows(
        db, "SELECT dimension, value FROM human_score WHERE item_id = ? AND annotator = ''",
        [item_pk])}
    ann = rows(db, "SELECT question_id, annotator, value FROM annotation WHERE item_id = ? "
                   "AND kind = 'answer'", [item_pk])
    return {"item": item[0], "runs": runs, "answers": answers, "scores": scores, "units": units,
            "human": human, "annotations": ann}


def disagreements(answers: list[dict[str, Any]], annotations: list[dict[str, Any]] | None = None
                  ) -> set[tuple[int, str]]:
    """(question_id, unit) keys where runs give different verdicts, or differ from the
    majority human annotation."""
    by: dict[tuple[int, str], set[str]] = {}
    for a in answers:
        if a["verdict"] in ("yes", "no"):
            by.setdefault((a["question_id"], a["unit"]), set()).add(a["verdict"])
    out = {k for k, v in by.items() if len(v) > 1}
    if annotations:
        votes: dict[int, list[str]] = {}
        for a in annotations:
            if a["value"] in ("yes", "no"):
                votes.setdefault(a["question_id"], []).append(a["value"])
        for (qid, unit), v in by.items():
            if qid in votes:
                major = max(set(votes[qid]), key=votes[qid].count)
                if v != {major}:
                    out.add((qid, unit))
    return out


def items_by_gap(db: sqlite_utils.Database, run_id: int, dimension: str,
                 aggregation: str | None = None) -> list[dict[str, Any]]:
    """Items sorted by |judge score − human score| (both min-max scaled to 0–1 over the run)."""
    from checkeval_core.runs.scores import run_scores

    sc = {r["item_pk"]: r for r in run_scores(db, run_id, aggregation) if
          r["dimension"] == dimension and r["value"] is not None}
    hs = {r[0]: r[1] for r in db.execute(
        "SELECT item_id, value FROM human_score WHERE dimension = ? AND annotator = ''",
        [dimension]) if r[0] in sc}
    if not sc:
        return []

    def scale(d: dict[int, float]) -> dict[int, float]:
        lo, hi = min(d.values()), max(d.values())
        return {k: (v - lo) / (hi - lo) if hi > lo else 0.5 for k, v in d.items()}

    s = scale({k: r["value"] for k, r in sc.items()})
    h = scale(hs) if hs else {}
    out = []
    for k, r in sc.items():
        out.append({"item_pk": k, "item_id": r["item_id"], "group_id": r["group_id"],
                    "system_id": r["system_id"], "judge": r["value"], "human": hs.get(k),
                    "gap": abs(s[k] - h[k]) if k in h else None})
    return sorted(out, key=lambda r: -(r["gap"] if r["gap"] is not None else -1))
