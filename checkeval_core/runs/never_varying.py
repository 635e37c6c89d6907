"""Checklist questions that never vary in a run: every valid Yes/No answer the same, so they
cannot separate outputs. Read by judge health (:mod:`checkeval_core.analysis.health`) and the
Traces page's never-varying filter (:mod:`checkeval_core.runs.traces`)."""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.store import db_path

#: A question "never varies" only when it has at least this many valid answers.
NEVER_VARY_MIN_ANSWERS = 5


def never_varying(db: sqlite_utils.Database, run_ids: list[int],
                  question_ids: list[int] | None = None,
                  min_answers: int = NEVER_VARY_MIN_ANSWERS) -> dict[int, dict[int, str]]:
    """``{run_id: {question_id: the one verdict}}``: checklist questions whose ≥
    ``min_answers`` valid answers in the run are all the same (optionally only among
    ``question_ids``)."""
    if not run_ids:
        return {}
    marks = ",".join("?" * len(run_ids))
    sql = (f"SELECT run_id, question_id, MIN(verdict) FROM answer WHERE run_id IN ({marks}) "
           "AND question_id != 0 AND verdict IN ('yes', 'no') AND value IS NULL")
    params: list[Any] = list(run_ids)
    if question_ids is not None:
        if not question_ids:
            return {r: {} for r in run_ids}
        sql += f" AND question_id IN ({','.join('?' * len(question_ids))})"
        params += list(question_ids)
    sql += " GROUP BY run_id, question_id HAVING COUNT(DISTINCT verdict) = 1 AND COUNT(*) >= ?"
    out: dict[int, dict[int, str]] = {r: {} for r in run_ids}
    for rid, qid, verdict in db.execute(sql, [*params, min_answers]):
        out[rid][qid] = verdict
    return out


#: Never-varying questions of whole runs, by (database file, run, run state): a run's answers
#: change only while its state (status, progress, finish time) does.
_NV_CACHE: dict[tuple, dict[int, str]] = {}
_NV_CACHE_SIZE = 64


def run_never_varying(db: sqlite_utils.Database, run_id: int) -> dict[int, str]:
    """:func:`never_varying` of one whole run, remembered until the run's state changes (the
    Traces filter asks it on every rerun; the scan costs about a second at 250,000 answers)."""
    state = db.execute("SELECT status, progress_done, finished_at FROM run WHERE id = ?",
                       [run_id]).fetchone()
    path = db_path(db)
    if not path or state is None:  # an in-memory database has no identity to key on
        return never_varying(db, [run_id])[run_id]
    key = (path, run_id, *state)
    if key not in _NV_CACHE:
        if len(_NV_CACHE) >= _NV_CACHE_SIZE:
            _NV_CACHE.pop(next(iter(_NV_CACHE)))
        _NV_CACHE[key] = never_varying(db, [run_id])[run_id]
    return _NV_CACHE[key]
