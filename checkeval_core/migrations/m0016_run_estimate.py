"""A run's cost estimate, stored when it starts, beside what it really cost.

``run.estimate`` (JSON: calls, cached, prompt_tokens, completion_tokens, seconds, usd, the
notes saying where each figure comes from, and when it was made; or ``{"error": …}`` when
none could be made) is written once, before the run's first judge call
(``runs/estimate.record_estimate``). ``run.actual`` (JSON: the same figures measured, summed
over every execution of the run, and how many executions) is updated when an execution
ends (``runs/estimate.record_actual``). Both NULL for runs made before this migration.
"""

import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    cols = {r[1] for r in db.execute("PRAGMA table_info(run)").fetchall()}
    if "estimate" not in cols:
        db.execute("ALTER TABLE run ADD COLUMN estimate TEXT")
    if "actual" not in cols:
        db.execute("ALTER TABLE run ADD COLUMN actual TEXT")
