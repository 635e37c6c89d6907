"""A task's dev / held-out split: which groups (documents, contexts, queries) — and, for
ranking tasks, which systems — are used to fit or choose things (dev) and which only to report
on (held-out). One row of settings per task plus one row per assigned group or system, so the
assignment is stored with the task and stays put when groups are added later. No row: no split.
"""

STATEMENTS = [
    """CREATE TABLE task_split (
        task_id INTEGER PRIMARY KEY REFERENCES task(id) ON DELETE CASCADE,
        seed INTEGER NOT NULL,
        heldout_share REAL NOT NULL CHECK (heldout_share > 0 AND heldout_share < 1),
        by_system INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    """CREATE TABLE task_split_member (
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('group', 'system')),
        key TEXT NOT NULL,
        part TEXT NOT NULL CHECK (part IN ('dev', 'heldout')),
        PRIMARY KEY (task_id, kind, key)
    )""",
]


def apply(db) -> None:
    for sql in STATEMENTS:
        db.execute(sql)
