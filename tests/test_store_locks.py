"""Opening the database again in a process that holds a connection to it keeps that
connection's locks: another process's last close must not delete the live write-ahead log.

The header check used to read the file with open()/close(); closing any descriptor of a file
drops every POSIX lock the process holds on it, SQLite's too. The Run page's Start (a second
open in the server process) then let the finishing worker checkpoint and delete the log under
the page's connection: the next connection failed with "database disk image is malformed" and
the runs panel never showed the finished run (the CI failure of 2026-11-27)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from checkeval_core import store
from checkeval_core.store import connect, open_db


def _other_process_writes_and_closes(path: Path) -> None:
    code = (f"import sqlite3; c = sqlite3.connect({str(path)!r}, isolation_level=None); "
            "c.execute('PRAGMA journal_mode = WAL'); "
            "c.execute(\"INSERT INTO task (name, kind, created_at) VALUES ('other', 'custom', "
            "'now')\"); c.close()")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_second_open_keeps_the_first_connections_locks(tmp_path):
    path = tmp_path / "app.db"
    db = open_db(path)
    assert db.execute("SELECT COUNT(*) FROM task").fetchone()[0] == 0  # holds its locks
    open_db(path).close()  # what a page's first open or a background start does
    _other_process_writes_and_closes(path)
    # the other process was not the last one on the file: the log is still there
    assert (tmp_path / "app.db-wal").exists() and (tmp_path / "app.db-shm").exists()
    db.execute("INSERT INTO task (name, kind, created_at) VALUES ('mine', 'custom', 'now')")
    fresh = connect(path)
    assert [r[0] for r in fresh.execute("SELECT name FROM task ORDER BY name")] == \
        ["mine", "other"]
    assert fresh.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_the_header_is_read_through_the_descriptor_sqlite_holds(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    db = open_db(path)
    db.execute("SELECT 1 FROM task").fetchall()
    opened = []
    real_open = open

    def spy(file, *a, **k):
        opened.append(str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr("builtins.open", spy)
    head = store._read_header(path)
    assert head.startswith(store.SQLITE_HEADER) and len(head) == 100
    assert str(path) not in opened  # no open()/close() of a file this process has open
    db.close()
    other = tmp_path / "other.db"
    open_db(other).close()
    monkeypatch.setattr(store, "_held_descriptor", lambda st: None)  # no descriptor held
    assert store._read_header(other).startswith(store.SQLITE_HEADER)
    assert str(other) in opened  # then a plain read is safe
