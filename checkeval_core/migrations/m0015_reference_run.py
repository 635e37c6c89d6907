"""The reference run a person pinned for one checklist version × judge × method of a task.

Figures that show one run per version, judge and method (Versions, Compare runs, Improve
checklist) use the run covering the most items unless a run is pinned here. One pin per key:
pinning another run of the same key replaces it; deleting the run removes its pin. Runs of no
checklist version (a Likert run) use ``checklist_version_id = 0``.
"""

import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db.execute("""CREATE TABLE reference_run (
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        checklist_version_id INTEGER NOT NULL DEFAULT 0,
        judge_spec TEXT NOT NULL,
        method TEXT NOT NULL,
        run_id INTEGER NOT NULL UNIQUE REFERENCES run(id) ON DELETE CASCADE,
        pinned_at TEXT NOT NULL,
        PRIMARY KEY (task_id, checklist_version_id, judge_spec, method)
    )""")
