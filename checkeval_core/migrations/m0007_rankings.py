"""Ranking models: per-query (instance) checklist questions keyed by the query's
group, human pairwise preferences between two answers to one query, and reference ratings
per system (e.g. Chatbot Arena Elo) to compare judge rankings against."""

STATEMENTS = [
    # A per-query question has item_id NULL and group_id = the query's item.group_id.
    "ALTER TABLE question ADD COLUMN group_id TEXT NOT NULL DEFAULT ''",
    "CREATE INDEX question_task_group ON question (task_id, group_id)",
    """CREATE TABLE preference (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        group_id TEXT NOT NULL DEFAULT '',
        item_a INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
        item_b INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
        winner TEXT NOT NULL CHECK (winner IN ('a', 'b', 'tie')),
        source TEXT NOT NULL DEFAULT '',
        annotator TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        UNIQUE (task_id, item_a, item_b, source, annotator)
    )""",
    "CREATE INDEX preference_task_group ON preference (task_id, group_id)",
    """CREATE TABLE system_rating (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        system_id TEXT NOT NULL,
        rating REAL NOT NULL,
        lower REAL,
        upper REAL,
        source TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL DEFAULT '',
        UNIQUE (task_id, system_id, source)
    )""",
]


def apply(db) -> None:
    for sql in STATEMENTS:
        db.execute(sql)
