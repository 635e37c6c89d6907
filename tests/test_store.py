"""The store: migrations, WAL, busy timeout, transactions, default path."""

import threading

import pytest

from checkeval_core.config import default_db_path
from checkeval_core.migrations import apply_migrations, migration_names
from checkeval_core.store import open_db, rows, transaction


def test_migrations_recorded_and_idempotent(db):
    names = [r["name"] for r in rows(db, "SELECT name FROM _migrations ORDER BY name")]
    assert names == migration_names()
    assert apply_migrations(db) == []
    tables = set(db.table_names())
    for t in ("task", "item", "human_score", "dimension", "sub_dimension", "question",
              "checklist_version", "judge", "run", "answer", "llm_cache", "annotation", "score"):
        assert t in tables


def test_wal_and_busy_timeout(db):
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_transaction_rolls_back_everything(db):
    with pytest.raises(RuntimeError):
        with transaction(db):
            db.execute("INSERT INTO task (name, created_at) VALUES ('a', 'now')")
            raise RuntimeError("boom")
    assert rows(db, "SELECT COUNT(*) AS n FROM task")[0]["n"] == 0


def test_two_connections_write_concurrently(db_path):
    open_db(db_path).execute("INSERT INTO task (name, created_at) VALUES ('t', 'now')")
    errors = []

    def writer(k):
        try:
            d = open_db(db_path)
            tid = d.execute("SELECT id FROM task").fetchone()[0]
            for i in range(50):
                with transaction(d):
                    d.execute("INSERT INTO item (task_id, item_id) VALUES (?, ?)",
                              [tid, f"{k}-{i}"])
        except Exception as e:  # noqa: BLE001 - collected for the assertion
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert open_db(db_path).execute("SELECT COUNT(*) FROM item").fetchone()[0] == 200


def test_default_db_path_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CHECKEVAL_DB", str(tmp_path / "x.db"))
    assert default_db_path() == tmp_path / "x.db"
    monkeypatch.delenv("CHECKEVAL_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_db_path() == tmp_path / "checkeval" / "checkeval.db"
