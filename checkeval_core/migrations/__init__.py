"""Named schema migrations, applied in name order and recorded in ``_migrations``.

Each module ``mNNNN_<name>.py`` in this package defines ``apply(db)``; one module is one
small, named, append-only schema change. Never edit a landed migration: add a new one.
Each migration runs in a transaction together with its bookkeeping row, so a failure leaves
the database as it was. A migration that rebuilds a table (SQLite cannot drop a constraint in
place) sets ``REBUILDS_TABLES = True``: it then runs with foreign keys off — dropping the old
table must not cascade to the rows that reference it — and ``PRAGMA foreign_key_check`` must
pass before it commits.
"""

from __future__ import annotations

import importlib
import pkgutil

import sqlite_utils


def migration_names() -> list[str]:
    """All migration module names, in the order they are applied."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("m"))


def apply_migrations(db: sqlite_utils.Database) -> list[str]:
    """Apply every migration not yet recorded; return the names applied now."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {r[0] for r in db.execute("SELECT name FROM _migrations").fetchall()}
    applied = []
    for name in migration_names():
        if name in done:
            continue
        module = importlib.import_module(f"{__name__}.{name}")
        conn = db.conn
        rebuild = getattr(module, "REBUILDS_TABLES", False)
        fk_on = bool(conn.execute("PRAGMA foreign_keys").fetchone()[0])
        if rebuild and fk_on:  # a no-op inside a transaction: switched before BEGIN
            conn.execute("PRAGMA foreign_keys = OFF")
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                # Another process may have applied it while we waited for the write lock.
                if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", [name]).fetchone():
                    conn.execute("COMMIT")
                    continue
                module.apply(db)
                if rebuild:
                    bad = conn.execute("PRAGMA foreign_key_check").fetchall()
                    if bad:
                        raise RuntimeError(f"migration {name}: foreign key check failed: "
                                           f"{bad[:5]}")
                conn.execute(
                    "INSERT INTO _migrations (name, applied_at) VALUES (?, datetime('now'))",
                    [name]
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            if rebuild and fk_on:
                conn.execute("PRAGMA foreign_keys = ON")
        applied.append(name)
    return applied
