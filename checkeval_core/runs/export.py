"""Rows for ``checkeval export --run ID --what answers|scores``.

An answer row says which judge gave it (``judge``): the run's judge, or the second judge of an
escalating run where the first was unsure; there ``first_judge_verdict`` and
``first_judge_p_yes`` keep the first judge's answer (empty on a row it kept)."""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.runs.score_read import run_scores
from checkeval_core.store import NotFound, rows


def run_rows(db: sqlite_utils.Database, run_id: int, what: str) -> list[dict[str, Any]]:
    if not db.execute("SELECT 1 FROM run WHERE id = ?", [run_id]).fetchone():
        raise NotFound(f"no run {run_id}")
    if what == "answers":
        return rows(db, "SELECT a.run_id, i.item_id, i.group_id, i.system_id, a.dimension, "
                        "s.name AS sub_dimension, q.text AS question, a.unit, "
                        "COALESCE(NULLIF(a.judge, ''), r.judge_spec) AS judge, a.verdict, "
                        "a.p_yes, a.a_verdict AS first_judge_verdict, a.a_p_yes AS "
                        "first_judge_p_yes, a.value, a.mode, a.raw, a.error, a.cached "
                        "FROM answer a JOIN run r ON r.id = a.run_id "
                        "JOIN item i ON i.id = a.item_id LEFT JOIN question q ON q.id = "
                        "a.question_id LEFT JOIN sub_dimension s ON s.id = q.sub_dimension_id "
                        "WHERE a.run_id = ? ORDER BY i.position, a.dimension, a.question_id, "
                        "a.unit", [run_id])
    if what == "scores":
        return [{k: r[k] for k in ("item_id", "group_id", "system_id", "dimension", "aggregation",
                                   "value", "n_questions", "n_invalid")}
                for r in run_scores(db, run_id, "all")]
    raise ValueError(f"--what {what!r}: use answers or scores for a run")
