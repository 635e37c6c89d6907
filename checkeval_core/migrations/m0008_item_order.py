"""Items in import order per task, by index: a page of a large task (``LIMIT/OFFSET``) and
the count no longer sort the whole task (100,000 items: 0.44 s → see docs/benchmarks.md).
And ``run.progress_at``: when the last item finished, so the Run page's ETA counts down while
an item is being judged instead of growing."""

import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db.execute("CREATE INDEX IF NOT EXISTS item_task_position ON item (task_id, position, id)")
    db.execute("ALTER TABLE run ADD COLUMN progress_at TEXT")
