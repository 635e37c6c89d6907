"""The one SQLite store for tasks, checklists, runs, answers, caches and annotations.

Opened through sqlite-utils with WAL journaling and a busy timeout so a background job, the
CLI and several browser sessions can write at the same time. Every open applies the pending
named migrations from :mod:`checkeval_core.migrations` (idempotent), so a fresh path yields a
ready database and an old one is upgraded in place.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from checkeval_core.config import default_db_path
from checkeval_core.migrations import apply_migrations

BUSY_TIMEOUT_MS = 30_000


class NotFound(LookupError):
    """A named object (task, run, version…) does not exist; the message says which."""


class NotADatabase(ValueError):
    """The database path is a directory, not an SQLite file, or a truncated one."""


SQLITE_HEADER = b"SQLite format 3\x00"
# sqlite3 errors that mean the file itself is unusable (a lock or a full disk is not that)
_NOT_A_DB = ("file is not a database", "database disk image is malformed",
             "unable to open database file")


def check_database_file(path: str | Path) -> None:
    """Refuse a path that cannot be a CheckEval database before SQLite touches it: a
    directory, a file that is not SQLite, a file shorter than its own header says (truncated).
    A missing or empty file is fine (a new database)."""
    p = Path(path)
    if str(p) == ":memory:" or not p.exists():
        return
    if p.is_dir():
        raise NotADatabase(f"not a CheckEval database: {p} (a directory)")
    size = p.stat().st_size
    if size == 0:
        return
    head = _read_header(p)
    if head is None:  # this process has it open and its descriptor could not be read
        return
    if len(head) < 100 or not head.startswith(SQLITE_HEADER):
        raise NotADatabase(f"not a CheckEval database: {p} (not an SQLite file)")
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    # the header's page count is valid when its change counter matches (SQLite ≥ 3.7.0); a
    # checkpoint cut short (kill -9) may leave the file shorter while its write-ahead log
    # still holds the pages: SQLite recovers from the log, so that file is not refused
    wal = p.with_name(p.name + "-wal")
    in_log = wal.exists() and wal.stat().st_size > 0
    if head[24:28] == head[92:96] and pages and size < page_size * pages and not in_log:
        raise NotADatabase(f"not a CheckEval database: {p} (truncated: {size:,} of "
                           f"{page_size * pages:,} bytes)")


# Closing *any* descriptor of a file drops every POSIX lock the process holds on it, SQLite's
# included (SQLite only guards against this among its own connections). A plain open()/close()
# of the database in a process that has a connection to it — every page's first open_db, every
# background start — let another process's last close checkpoint and delete the live
# write-ahead log under that connection: its next write failed with "disk I/O error", a new
# connection with "database disk image is malformed" (tests/test_store_locks.py). So the header
# is read through a descriptor SQLite already holds when there is one, and opened only when the
# process holds none; the lock keeps a connection from opening in between.
_OPENING = threading.Lock()
_CONNECTED: set[tuple[int, int]] = set()  # (device, inode) connected to (where no /proc)


def _held_descriptor(st: os.stat_result) -> int | None:
    """A descriptor this process holds on the file ``st`` describes; -1 when this cannot be
    known (no ``/proc/self/fd``)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return -1
    for name in names:
        try:
            t = os.stat(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if (t.st_dev, t.st_ino) == (st.st_dev, st.st_ino):
            return int(name)
    return None


def _read_header(p: Path) -> bytes | None:
    """The file's first 100 bytes without closing a descriptor SQLite may hold locks through;
    None when the process holds it open but its descriptor cannot be read safely."""
    with _OPENING:
        st = p.stat()
        fd = _held_descriptor(st)
        if fd is None or (fd == -1 and (st.st_dev, st.st_ino) not in _CONNECTED):
            with open(p, "rb") as f:  # no connection of this process: nothing to drop
                return f.read(100)
        if fd == -1:
            return None
        try:
            head = os.pread(fd, 100, 0)
            same = (os.fstat(fd).st_ino, os.fstat(fd).st_dev) == (st.st_ino, st.st_dev)
        except OSError:
            return None
        return head if same else None  # closed and reused meanwhile: not our file


def now_iso() -> str:
    """UTC timestamp used for every created_at/updated_at column."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def connect(path: str | Path | None = None) -> sqlite3.Connection:
    """A raw sqlite3 connection with WAL, busy timeout and foreign keys enabled."""
    p = Path(path) if path is not None else default_db_path()
    if str(p) != ":memory:":
        p.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: autocommit unless a transaction is opened explicitly with
    # :func:`transaction`, so a write is never left pending by Python's implicit BEGIN.
    with _OPENING:  # not while a header is read with open() (see _read_header)
        conn = sqlite3.connect(
            str(p), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False, isolation_level=None
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if str(p) != ":memory:":
            st = p.stat()
            _CONNECTED.add((st.st_dev, st.st_ino))
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def open_db(path: str | Path | None = None) -> sqlite_utils.Database:
    """Open (creating if needed) and migrate the database at ``path`` (default: ``CHECKEVAL_DB``).

    Raises :class:`NotADatabase` ("not a CheckEval database: PATH") for a directory, a file
    that is not SQLite or a truncated one."""
    p = Path(path) if path is not None else default_db_path()
    check_database_file(p)
    try:
        db = sqlite_utils.Database(connect(p))
        apply_migrations(db)
    except sqlite3.DatabaseError as e:
        if not any(m in str(e) for m in _NOT_A_DB):
            raise
        raise NotADatabase(f"not a CheckEval database: {p} ({e})") from None
    return db


@contextmanager
def transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """All-or-nothing block: ``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any exception).

    Inside it, write with ``db.execute`` / ``db.conn.executemany`` only: sqlite-utils' table
    helpers (``insert_all``, ``upsert``…) commit on their own and would break atomicity.
    Nested use on the thread that opened it joins the outer transaction. A connection whose
    transaction another thread holds raises instead of joining it: the write would commit or
    roll back with that thread's block, unseen by anyone until then (two Streamlit script runs
    of one session overlap for a moment, which is why the frame opens one connection per run).
    """
    conn = db.conn
    me = threading.get_ident()
    if conn.in_transaction:
        owner = _TX_OWNER.get(id(conn), me)
        if owner != me:
            raise RuntimeError("this database connection is inside another thread's "
                               "transaction: open a connection per thread")
        yield db
        return
    conn.execute("BEGIN IMMEDIATE")
    _TX_OWNER[id(conn)] = me
    try:
        yield db
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")
    finally:
        if not conn.in_transaction:
            _TX_OWNER.pop(id(conn), None)


#: The thread that opened each connection's current transaction (by ``id(connection)``).
_TX_OWNER: dict[int, int] = {}


def db_path(db: sqlite_utils.Database) -> str:
    """The file behind an open database (worker processes open their own connection to it)."""
    row = db.execute("PRAGMA database_list").fetchone()
    return row[2]


def dumps(value: Any) -> str:
    """JSON for TEXT columns (stable key order, UTF-8 kept)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def loads(text: str | None, default: Any = None) -> Any:
    """Inverse of :func:`dumps`, tolerant of NULL."""
    if text is None or text == "":
        return default
    return json.loads(text)


def task_id(db: sqlite_utils.Database, name: str) -> int:
    """The id of the task called ``name``; raises :class:`NotFound` naming it."""
    row = db.execute("SELECT id FROM task WHERE name = ?", [name]).fetchone()
    if row is None:
        raise NotFound(f"no task named {name!r}")
    return int(row[0])


def rows(db: sqlite_utils.Database, sql: str, params: list | tuple | dict = ()) -> list[dict]:
    """Run a query and return the rows as dicts."""
    cur = db.execute(sql, params)
    cols = [c[0] for c in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


#: The item columns :func:`item_column` may read (the name goes into SQL).
ITEM_COLUMNS = ("group_id", "system_id", "output", "item_id")


def item_column(db: sqlite_utils.Database, pks: list[int], column: str) -> dict[int, Any]:
    """``{item pk: value of column}`` for the given items, read in chunks of 500 (SQLite's
    bound-parameter limit)."""
    if column not in ITEM_COLUMNS:
        raise ValueError(f"item column {column!r}: use one of {', '.join(ITEM_COLUMNS)}")
    out: dict[int, Any] = {}
    for i in range(0, len(pks), 500):
        chunk = pks[i:i + 500]
        out.update(db.execute(f"SELECT id, {column} FROM item WHERE id IN "
                              f"({','.join('?' * len(chunk))})", chunk).fetchall())
    return out
