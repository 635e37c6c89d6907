"""The review history: every decision on a question, and every annotation job's creation,
appended to ``review_event`` — who, in which role, when, what, and why.

The ``annotation`` rows of kind ``validation`` keep one current decision per reviewer and
question (agreement reads them), and a question's ``status``/``reason`` show only the latest
decision: a reject → keep → edit sequence left "(edited into #N)" and lost the rejection and
its reason. History rows are only ever inserted. ``annotation_job`` gains its coordinator.

Backfill: one event per current review decision (its reviewer, value, reason, time) and one
per existing job (coordinator unknown: empty), marked ``backfilled`` in ``detail``.
"""

import sqlite_utils

STATEMENTS = [
    """CREATE TABLE review_event (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        question_id INTEGER REFERENCES question(id) ON DELETE CASCADE,
        job_id INTEGER REFERENCES annotation_job(id) ON DELETE CASCADE,
        actor TEXT NOT NULL DEFAULT '',
        role TEXT NOT NULL,
        action TEXT NOT NULL,
        reason TEXT NOT NULL DEFAULT '',
        detail TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX review_event_question ON review_event (question_id, id)",
    "CREATE INDEX review_event_task ON review_event (task_id, id)",
    "ALTER TABLE annotation_job ADD COLUMN coordinator TEXT NOT NULL DEFAULT ''",
    # what exists: the current decision of each reviewer (an edit's reason is its note)
    """INSERT INTO review_event (task_id, question_id, actor, role, action, reason, detail,
                                 created_at)
       SELECT task_id, question_id, annotator, 'reviewer', value,
              CASE WHEN value = 'reject' THEN reason ELSE '' END,
              CASE WHEN value = 'edit' THEN json_object('backfilled', 1, 'note', reason)
                   ELSE json_object('backfilled', 1) END,
              COALESCE(updated_at, created_at)
       FROM annotation WHERE kind = 'validation' AND question_id IS NOT NULL
       ORDER BY COALESCE(updated_at, created_at), id""",
    """INSERT INTO review_event (task_id, job_id, actor, role, action, detail, created_at)
       SELECT task_id, id, '', 'coordinator', 'create_job', json_object('backfilled', 1,
              'name', name), created_at FROM annotation_job ORDER BY id""",
]


def apply(db: sqlite_utils.Database) -> None:
    for sql in STATEMENTS:
        db.execute(sql)
