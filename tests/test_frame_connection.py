"""Two script runs of one Streamlit session can overlap for a moment (``runner.fastReruns``,
Streamlit's default, which the launcher turns off): each run's thread has its own connection,
and a transaction never joins another thread's."""

import threading

import pytest

from checkeval_core.store import open_db, rows, transaction


def _insert(db, name):
    db.execute("INSERT INTO task (name, created_at) VALUES (?, 'now')", [name])


def _hold(db, name):
    """Another thread opens a transaction on ``db``, writes ``name`` and waits; setting the
    returned event rolls it back. Returns (thread, release event, rolled-back list)."""
    opened, release, rolled_back = threading.Event(), threading.Event(), []

    def holder():
        try:
            with transaction(db):
                _insert(db, name)
                opened.set()
                release.wait(10)
                raise RuntimeError("stopped")
        except RuntimeError:
            rolled_back.append(name)

    t = threading.Thread(target=holder)
    t.start()
    assert opened.wait(10)
    return t, release, rolled_back


def test_a_transaction_refuses_to_join_another_threads(db):
    t, done, rolled_back = _hold(db, "held")
    try:
        with pytest.raises(RuntimeError, match="another thread's transaction"):
            with transaction(db):
                _insert(db, "joined")
    finally:
        done.set()
        t.join()
    assert rolled_back == ["held"]
    # the holder rolled back; nothing of the refused block was written either
    assert rows(db, "SELECT name FROM task") == []
    with transaction(db):  # the owner is forgotten once the block ended
        with transaction(db):  # nested on one thread joins
            _insert(db, "mine")
    assert [r["name"] for r in rows(db, "SELECT name FROM task")] == ["mine"]


def test_each_script_run_thread_has_its_own_connection(db_path, monkeypatch):
    """Before, the session's one connection was shared: a freeze on the new run joined the
    interrupted run's transaction and was lost with its rollback (the flaky browser test)."""
    from studio_ui import frame

    monkeypatch.setenv("CHECKEVAL_DB", str(db_path))
    session: dict = {}  # both runs belong to one session: they share its state
    monkeypatch.setattr(frame.st, "session_state", session)
    got = {}

    def run(k):
        a, b = frame.page_db(), frame.page_db()
        got[k] = (a, b)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (a0, b0), (a1, b1) = got[0], got[1]
    assert a0 is b0 and a1 is b1  # one connection per run, reused by the run
    assert a0.conn is not a1.conn
    assert session == {frame._KEY: str(db_path)}  # migrated once for the session, not per run

    # the interrupted run holds a write; the new run's write waits for it and then commits
    # on its own, so it is there even though the other rolled back
    t, done, rolled_back = _hold(a0, "interrupted")
    threading.Timer(0.3, done.set).start()
    with transaction(a1):
        _insert(a1, "freeze")
    t.join()
    assert rolled_back == ["interrupted"]
    assert [r["name"] for r in rows(open_db(db_path), "SELECT name FROM task")] == ["freeze"]
