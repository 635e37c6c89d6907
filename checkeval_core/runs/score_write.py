"""Writing a run's ``score`` table: its answers go through its method's scorer, every
aggregation side by side, replaced in one transaction.

Which aggregations a method computes, and how, is its registry entry's business
(:mod:`checkeval_core.runs.registry`, scorers in :mod:`checkeval_core.runs.scorers`); this
module only loads the answers and stores the rows, refusing a row of an aggregation the
method does not declare (the Run page, the CLI and the analysis read that declaration).
"""

from __future__ import annotations

import numpy as np
import sqlite_utils

from checkeval_core.runs.escalation.judge_calibration import calibrated_p
from checkeval_core.runs.registry import method as method_entry
from checkeval_core.runs.scorers import Answer, ScoreContext
from checkeval_core.store import loads, transaction


def compute_scores(db: sqlite_utils.Database, run_id: int) -> int:
    """Recompute every aggregation of a run from its answers; returns the rows written."""
    name, params = db.execute("SELECT method, params FROM run WHERE id = ?", [run_id]).fetchone()
    m = method_entry(name)
    params = loads(params, {})
    found = db.execute("SELECT item_id, question_id, unit, dimension, verdict, p_yes, value, "
                       "judge FROM answer WHERE run_id = ?", [run_id]).fetchall()
    # an escalating run that calibrated its judges scores each answer's p(Yes) on one scale
    p = calibrated_p(params, [r[7] for r in found],
                     [np.nan if r[5] is None else r[5] for r in found])
    answers = [Answer(*r[:5], None if np.isnan(q) else float(q), r[6])
               for r, q in zip(found, p)]
    out = m.score(answers, ScoreContext(db, run_id, params, m.aggregations))
    undeclared = sorted({r.aggregation for r in out} - set(m.aggregations))
    if undeclared:
        raise ValueError(f"method {name!r} scored aggregation(s) {', '.join(undeclared)} that "
                         f"its registry entry does not list ({', '.join(m.aggregations)})")
    with transaction(db):
        db.execute("DELETE FROM score WHERE run_id = ?", [run_id])
        db.conn.executemany(
            "INSERT INTO score (run_id, item_id, dimension, aggregation, value, n_questions, "
            "n_invalid) VALUES (?, ?, ?, ?, ?, ?, ?)", [(run_id, *r) for r in out])
    return len(out)
