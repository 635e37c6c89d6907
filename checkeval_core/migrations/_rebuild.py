"""SQLite's documented table rebuild, for migrations that drop a constraint.

SQLite cannot drop a CHECK in place: the new table's SQL is the stored one minus the
constraint — every other column, default, foreign key and CHECK stays as it is, including
columns added by later ``ALTER TABLE``s — the rows are copied with their ids, the old table
is dropped and the new one renamed. Indexes and triggers of the table, and views or triggers
that read it (a rename would fail on them), are set aside and recreated. The caller's
migration sets ``REBUILDS_TABLES = True`` so foreign keys are off meanwhile and the rows that
reference the table are kept.
"""

from __future__ import annotations

import re

import sqlite_utils


def drop_check(db: sqlite_utils.Database, table: str, check: re.Pattern[str]) -> bool:
    """Rebuild ``table`` without the first constraint matching ``check``; False when the
    stored SQL has none (already dropped)."""
    sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                     [table]).fetchone()[0]
    new_sql, n = check.subn("", sql, count=1)
    if not n:
        return False
    extras = [(t, name, q) for t, name, tbl, q in db.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND "
        "type IN ('index', 'trigger', 'view')").fetchall()
        if tbl == table or (t != "index" and re.search(rf"\b{table}\b", q, re.IGNORECASE))]
    for t, name, _ in extras:
        if t != "index":
            db.execute(f'DROP {t.upper()} IF EXISTS "{name}"')
    tmp = f"{table}_rebuilt"
    new_sql = re.sub(rf"^\s*CREATE TABLE\s+(\"{table}\"|{table})\b", f"CREATE TABLE {tmp}",
                     new_sql, count=1)
    cols = ", ".join(f'"{c}"' for c in db[table].columns_dict)
    db.execute(new_sql)
    db.execute(f"INSERT INTO {tmp} ({cols}) SELECT {cols} FROM {table}")
    db.execute(f"DROP TABLE {table}")
    db.execute(f"ALTER TABLE {tmp} RENAME TO {table}")
    for _, _, statement in extras:
        db.execute(statement)
    return True
