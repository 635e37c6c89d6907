"""Annotation jobs that are pools: each item needs *k* answers from *k* different people, and
annotators pull the next item instead of working down a fixed list.

``annotation_job.mode`` is ``fixed`` (the assignment of before, every existing job) or
``pool``; ``claim_minutes`` is how long a pool claim holds. ``annotation_pool_item`` lists a
pool's items in order. A claim is an ``annotation_assignment`` row (status ``todo``) with
``claimed_at`` and ``expires_at``: it holds the item until ``expires_at``; releasing or handing
it on sets ``expires_at`` to that moment (the row stays). Fixed assignments keep
``expires_at`` NULL: they never expire.
"""

STATEMENTS = [
    "ALTER TABLE annotation_job ADD COLUMN mode TEXT NOT NULL DEFAULT 'fixed'",
    "ALTER TABLE annotation_job ADD COLUMN claim_minutes REAL NOT NULL DEFAULT 30",
    "ALTER TABLE annotation_assignment ADD COLUMN claimed_at TEXT",
    "ALTER TABLE annotation_assignment ADD COLUMN expires_at TEXT",
    """CREATE TABLE annotation_pool_item (
        job_id INTEGER NOT NULL REFERENCES annotation_job(id) ON DELETE CASCADE,
        item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        PRIMARY KEY (job_id, item_id)
    )""",
    "CREATE INDEX assignment_item ON annotation_assignment (job_id, item_id, status)",
]


def apply(db) -> None:
    for sql in STATEMENTS:
        db.execute(sql)
