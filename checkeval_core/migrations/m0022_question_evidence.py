"""Evidence for a question before review, and where a generated question came from.

``question_evidence``: each time a judge answers questions on a small stratified sample of
dev items (:mod:`checkeval_core.checklists.evidence`), one row per question — the judge, the
figures as JSON (yes-rate, separation of people's high and low items with its interval or
reason, redundancy with kept questions, cost per item), and the flag of the dev-only rule
('' = none). Rows are only ever inserted; the review page shows the latest.

``question_provenance``: JSON of what a question grounded in examples was written from (the
pairs of outputs, or the people's notes), one row per such question — a table of its own, so
the ``question`` table keeps its columns.
"""

import sqlite_utils

STATEMENTS = [
    """CREATE TABLE question_evidence (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        question_id INTEGER NOT NULL REFERENCES question(id) ON DELETE CASCADE,
        judge TEXT NOT NULL,
        flag TEXT NOT NULL DEFAULT '',
        evidence TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX question_evidence_question ON question_evidence (question_id, id)",
    """CREATE TABLE question_provenance (
        question_id INTEGER PRIMARY KEY REFERENCES question(id) ON DELETE CASCADE,
        provenance TEXT NOT NULL
    )""",
]


def apply(db: sqlite_utils.Database) -> None:
    for sql in STATEMENTS:
        db.execute(sql)
