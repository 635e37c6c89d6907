"""Annotation jobs: which annotator answers which items of a frozen checklist, and the
coordinator's settled answers where annotators disagree."""

STATEMENTS = [
    """CREATE TABLE annotation_job (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        checklist_version_id INTEGER NOT NULL REFERENCES checklist_version(id),
        name TEXT NOT NULL,
        params TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE annotation_assignment (
        id INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL REFERENCES annotation_job(id) ON DELETE CASCADE,
        item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
        annotator TEXT NOT NULL,
        position INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'done', 'skipped')),
        skip_reason TEXT NOT NULL DEFAULT '',
        updated_at TEXT,
        UNIQUE (job_id, item_id, annotator)
    )""",
    "CREATE INDEX assignment_queue ON annotation_assignment (job_id, annotator, position)",
    """CREATE TABLE adjudication (
        id INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL REFERENCES annotation_job(id) ON DELETE CASCADE,
        item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
        question_id INTEGER NOT NULL REFERENCES question(id) ON DELETE CASCADE,
        value TEXT NOT NULL CHECK (value IN ('yes', 'no')),
        coordinator TEXT NOT NULL,
        note TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        UNIQUE (job_id, item_id, question_id)
    )""",
]


def apply(db) -> None:
    for sql in STATEMENTS:
        db.execute(sql)
