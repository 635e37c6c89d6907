"""Kill a real ``checkeval run`` with SIGKILL mid-run, resume it: no answer lost, no judge
call repeated (the fake judge logs every request that reaches it)."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from checkeval_core.store import open_db

# real processes killed and restarted: 10-15 s each on 2 cores
pytestmark = pytest.mark.slow


def test_sigkill_and_resume(tmp_path):
    db = tmp_path / "k.db"
    log = tmp_path / "calls.log"
    base = [sys.executable, "-m", "checkeval_core", "--db", str(db)]
    subprocess.run([*base, "demo"], check=True, capture_output=True, timeout=120)
    env = dict(os.environ, CHECKEVAL_FAKE_DELAY="0.01", CHECKEVAL_FAKE_LOG=str(log))
    proc = subprocess.Popen([*base, "run", "--task", "summeval-demo", "--judge", "fake",
                             "--method", "rocketeval", "--limit", "6", "--quiet"],
                            env=env, stderr=subprocess.PIPE, text=True)
    first = proc.stderr.readline().strip()
    assert first.startswith("run ") and first.endswith(" started")
    run_id = int(first.split()[1])
    d = open_db(db)
    deadline = time.time() + 120
    while time.time() < deadline:
        n = d.execute("SELECT COUNT(*) FROM answer WHERE run_id = ?", [run_id]).fetchone()[0]
        if n >= 200:  # well into the run (6 items x 122 questions = 732 answers)
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    before = d.execute("SELECT COUNT(*) FROM answer WHERE run_id = ?", [run_id]).fetchone()[0]
    assert 200 <= before < 732
    assert d.execute("SELECT status FROM run WHERE id = ?", [run_id]).fetchone()[0] == "running"
    snapshot = {tuple(r) for r in d.execute(
        "SELECT item_id, question_id, verdict, p_yes FROM answer WHERE run_id = ?", [run_id])}

    r = subprocess.run([*base, "run", "--resume", str(run_id), "--json", "--quiet"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out == {"run": run_id, "status": "completed", "n_answers": 732}
    after = {tuple(x) for x in d.execute(
        "SELECT item_id, question_id, verdict, p_yes FROM answer WHERE run_id = ?", [run_id])}
    assert snapshot <= after  # nothing stored before the kill was lost or changed
    calls = log.read_text().split()
    # every request reached the judge, and none whose answer was stored before the kill was
    # asked again: only the requests in flight at the SIGKILL (answered by the judge but not
    # yet stored; at most the fake judge's 8 concurrent requests) can be asked twice
    assert len(set(calls)) == 732 and len(calls) - 732 <= 8


def test_kill_remote_run_with_slow_request_then_resume(tmp_path):
    """A remote judge with concurrency 4; one request hangs while the others of the item come
    back. SIGKILL the run while it hangs: every response that arrived is in ``llm_cache``, so
    the resumed run sends the server only the one that never got an answer."""
    from tests.helpers import ScriptedServer

    db = tmp_path / "r.db"
    base = [sys.executable, "-m", "checkeval_core", "--db", str(db)]
    env = dict(os.environ, CHECKEVAL_CONCURRENCY="4", CHECKEVAL_DEMO_RUNS="0",
               CHECKEVAL_CACHE_DIR=str(tmp_path / "cache"))
    subprocess.run([*base, "demo"], check=True, capture_output=True, timeout=120, env=env)
    d = open_db(db)
    server = ScriptedServer()
    try:
        first_q = d.execute("SELECT q.text FROM question q JOIN task t ON t.id = q.task_id "
                            "WHERE t.name = 'topical-chat-demo' ORDER BY q.id LIMIT 1"
                            ).fetchone()[0]
        server.block_marker = first_q + "\n"
        proc = subprocess.Popen([*base, "run", "--task", "topical-chat-demo", "--judge",
                                 server.spec, "--method", "rocketeval", "--limit", "1",
                                 "--quiet"], env=env, stderr=subprocess.PIPE, text=True)
        run_id = int(proc.stderr.readline().split()[1])
        assert server.blocked.wait(60)
        n_questions = d.execute("SELECT COUNT(*) FROM question q JOIN task t ON t.id = "
                                "q.task_id WHERE t.name = 'topical-chat-demo'").fetchone()[0]
        deadline = time.time() + 120
        cached = 0
        while time.time() < deadline and cached < n_questions - 1:
            cached = d.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert cached == n_questions - 1  # all but the hanging one (old code: in order only)
        assert d.execute("SELECT COUNT(*) FROM answer WHERE run_id = ?",
                         [run_id]).fetchone()[0] == 0  # the item was not finished
        sent = len(server.requests)
        server.block_marker = None
        server.release.set()
        r = subprocess.run([*base, "run", "--resume", str(run_id), "--json", "--quiet"],
                           env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == {"run": run_id, "status": "completed",
                                        "n_answers": n_questions}
        assert len(server.requests) - sent == 1  # only the request that never came back
    finally:
        server.close()


def test_a_finished_background_worker_is_reaped(db, task, tmp_path, monkeypatch):
    """The app starts runs in worker processes; one that finished stayed a zombie of the
    server (never waited for) for as long as the server ran."""
    from checkeval_core.runs import create_run, get_run, start_background
    from checkeval_core.store import db_path

    monkeypatch.setenv("CHECKEVAL_CACHE_DIR", str(tmp_path / "cache"))
    rid = create_run(db, task, "fake", "rocketeval", limit=1)
    pid = start_background(db_path(db), rid)
    deadline = time.time() + 120
    while get_run(db, rid)["status"] != "completed" and time.time() < deadline:
        time.sleep(0.5)
    assert get_run(db, rid)["status"] == "completed"

    def state() -> str | None:
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().split(") ")[-1][:1]
        except OSError:
            return None  # gone: reaped

    while state() not in (None, "Z") and time.time() < deadline:
        time.sleep(0.2)  # the worker writes its status, then exits
    time.sleep(1.0)
    assert state() is None, f"worker {pid} left as state {state()}"
