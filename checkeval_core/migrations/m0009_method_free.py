"""The ``run`` table without ``CHECK (method IN (…))``: the method registry validates names.

A method added to :mod:`checkeval_core.runs.registry` must be storable without a schema
change; ``create_run`` and bundle import refuse unknown names with the available ones. SQLite
cannot drop a constraint in place, so the table is rebuilt (SQLite's documented procedure):
the new table's SQL is the stored one minus that one CHECK — every other column, default,
foreign key and the ``status`` CHECK stay as they are, including columns added by later
``ALTER TABLE``s — the rows are copied with their ids, the old table is dropped and the new
one renamed. Foreign keys are off meanwhile (``REBUILDS_TABLES``), so the answers, scores and
units that reference runs are kept.
"""

import re

import sqlite_utils

REBUILDS_TABLES = True

_METHOD_CHECK = re.compile(r"\s*CHECK\s*\(\s*method\s+IN\s*\([^()]*\)\s*\)", re.IGNORECASE)


def apply(db: sqlite_utils.Database) -> None:
    sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'run'"
                     ).fetchone()[0]
    new_sql, n = _METHOD_CHECK.subn("", sql, count=1)
    if not n:  # nothing to drop
        return
    # run's indexes and triggers go with it, and a view or trigger that reads run would fail
    # the rename: set aside (SQLite's procedure, steps 2 and 10) and recreate them after
    extras = [(t, name, q) for t, name, tbl, q in db.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND "
        "type IN ('index', 'trigger', 'view')").fetchall()
        if tbl == "run" or (t != "index" and re.search(r"\brun\b", q, re.IGNORECASE))]
    for t, name, _ in extras:
        if t != "index":
            db.execute(f'DROP {t.upper()} IF EXISTS "{name}"')
    new_sql = re.sub(r"^\s*CREATE TABLE\s+(\"run\"|run)\b", "CREATE TABLE run_m0009", new_sql,
                     count=1)
    cols = ", ".join(f'"{c}"' for c in db["run"].columns_dict)
    db.execute(new_sql)
    db.execute(f"INSERT INTO run_m0009 ({cols}) SELECT {cols} FROM run")
    db.execute("DROP TABLE run")
    db.execute("ALTER TABLE run_m0009 RENAME TO run")
    for _, _, statement in extras:
        db.execute(statement)
