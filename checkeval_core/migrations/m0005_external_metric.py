"""External metric scores (ROUGE, an in-house metric…) imported per item, analysed like runs."""

STATEMENTS = [
    """CREATE TABLE external_metric (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (task_id, name)
    )""",
    """CREATE TABLE external_score (
        metric_id INTEGER NOT NULL REFERENCES external_metric(id) ON DELETE CASCADE,
        item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
        dimension TEXT NOT NULL,
        value REAL NOT NULL,
        PRIMARY KEY (metric_id, item_id, dimension)
    )""",
]


def apply(db) -> None:
    for sql in STATEMENTS:
        db.execute(sql)
