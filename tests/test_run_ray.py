"""``checkeval run --engine ray`` on a local Ray (2 CPUs, started once for the module): the
answers equal a local run's, a worker killed mid-run is restarted by Ray and the run completes
with the same answers, a driver killed with SIGKILL resumes asking only what is missing, and
the options are checked before any run or judge call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import ray

from checkeval_core.runs.jobs import create_run, execute_run
from checkeval_core.runs.ray_engine import RayEngine, engine_for, init_ray, worker_env
from checkeval_core.store import db_path as path_of
from checkeval_core.store import open_db
from tests.helpers import make_runs_task, run_cli

# a local Ray and its workers take seconds to start (minutes on a loaded 2-core machine)
pytestmark = pytest.mark.slow
ANSWER = "SELECT i.item_id, a.question_id, a.unit, a.verdict, a.p_yes, a.mode, a.raw, a.error " \
         "FROM answer a JOIN item i ON i.id = a.item_id WHERE a.run_id = ?"


@pytest.fixture(scope="module")
def cluster():
    """One local Ray for the module (its start is the slow part); yields its address."""
    init_ray(num_cpus=2)  # retried: a loaded machine can miss Ray's fixed 30 s start
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def engine(cluster):
    """Two fake-judge workers kept across the module's runs (starting one takes seconds)."""
    eng = RayEngine(workers=2)
    yield eng
    eng.shutdown()


def answers(db, rid):
    return sorted(tuple(r) for r in db.execute(ANSWER, [rid]))


def local_then_ray(db, task, method, **kw):
    """A local run, then the same run on two Ray workers from a cold cache."""
    local = create_run(db, task, "fake", method, **kw)
    assert execute_run(path_of(db), local)["status"] == "completed"
    db.execute("DELETE FROM llm_cache")
    rid = create_run(db, task, "fake", method, **kw)
    return local, rid


@pytest.mark.parametrize("method", ["rocketeval", "checkeval", "seal"])
def test_ray_run_equals_local_run(db, tmp_path, engine, method):
    task = make_runs_task(db, tmp_path)
    local, rid = local_then_ray(db, task, method)
    r = execute_run(path_of(db), rid, engine=engine)
    assert r["status"] == "completed", r["error"]
    assert answers(db, rid) == answers(db, local) and answers(db, rid)
    # asked of the workers (not the cache), every answer cached by the driver
    assert db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ? AND cached = 1",
                      [rid]).fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0] > 0
    scores = "SELECT item_id, dimension, aggregation, value FROM score WHERE run_id = ?"
    assert sorted(db.execute(scores, [rid])) == sorted(db.execute(scores, [local]))
    actual = json.loads(db.execute("SELECT actual FROM run WHERE id = ?", [rid]).fetchone()[0])
    assert actual["calls"] > 0 and actual["cached"] == 0
    # a rerun of the same requests is answered from the cache, on no worker
    again = create_run(db, task, "fake", method)
    assert execute_run(path_of(db), again, engine=engine)["status"] == "completed"
    assert answers(db, again) == answers(db, local)
    assert db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ? AND cached = 0",
                      [again]).fetchone()[0] == 0


def test_cancel_stops_submitting_and_keeps_the_units_in_flight(db, tmp_path, engine):
    from checkeval_core.runs.jobs import cancel_run, prepare_resume

    task = make_runs_task(db, tmp_path)
    rid = create_run(db, task, "fake", "rocketeval")

    def progress(done, total):
        if done == 1:
            cancel_run(db, rid)

    r = execute_run(path_of(db), rid, progress=progress, engine=engine)
    # the first item, then at most the 2 units per worker already in flight (5 questions each)
    assert r["status"] == "cancelled" and 5 < r["n_answers"] <= 5 * (1 + 2 * 2)
    assert r["progress_done"] == r["n_answers"] // 5
    prepare_resume(db, rid)
    r = execute_run(path_of(db), rid, engine=engine)
    assert r["status"] == "completed" and r["n_answers"] == 45


def test_a_worker_killed_mid_run_is_restarted_and_nothing_is_stored_twice(
        db, tmp_path, engine, monkeypatch):
    engine.release()  # the cluster's 2 CPUs for this test's own workers
    task = make_runs_task(db, tmp_path)
    local, rid = local_then_ray(db, task, "rocketeval")
    log = tmp_path / "calls.log"
    monkeypatch.setenv("CHECKEVAL_FAKE_DELAY", "0.2")  # 1 s per item of 5 questions
    monkeypatch.setenv("CHECKEVAL_FAKE_LOG", str(log))
    engine = RayEngine(workers=2)
    killed = []

    def progress(done, total):
        if not killed:  # worker 0 holds a unit not yet answered (2 units per worker)
            time.sleep(0.3)  # well into it
            os.kill(engine.pids[0], signal.SIGKILL)
            killed.append(engine.pids[0])

    try:
        r = execute_run(path_of(db), rid, progress=progress, engine=engine)
    finally:
        engine.shutdown()
    assert killed and r["status"] == "completed", r["error"]
    assert answers(db, rid) == answers(db, local)
    assert r["n_answers"] == 45 and r["n_errors"] == 0
    calls = log.read_text().split()
    # every request asked, and the killed worker's unit asked again by its restarted worker
    assert len(set(calls)) == 45 and len(calls) > 45


def test_a_driver_killed_resumes_asking_only_what_is_missing(db, tmp_path, cluster, engine):
    engine.release()  # the cluster's 2 CPUs for the driver's workers
    task = make_runs_task(db, tmp_path)
    reference = create_run(db, task, "fake", "rocketeval")
    assert execute_run(path_of(db), reference)["status"] == "completed"
    db.execute("DELETE FROM llm_cache")
    log = tmp_path / "calls.log"
    env = dict(os.environ, CHECKEVAL_FAKE_DELAY="0.2", CHECKEVAL_FAKE_LOG=str(log))
    base = [sys.executable, "-m", "checkeval_core", "--db", str(path_of(db)), "run",
            "--engine", "ray", "--ray-address", cluster, "--workers", "2", "--quiet"]
    proc = subprocess.Popen([*base, "--task", task, "--judge", "fake", "--method",
                             "rocketeval"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        first = ""
        while not first.endswith(" started"):  # after Ray's own lines
            first = proc.stderr.readline().strip()
            assert first or proc.poll() is None, "the run ended before it started"
        rid = int(first.split()[1])
        d = open_db(path_of(db))
        deadline = time.time() + 120
        while time.time() < deadline and d.execute(
                "SELECT COUNT(*) FROM answer WHERE run_id = ?", [rid]).fetchone()[0] < 10:
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    before = answers(d, rid)
    assert 10 <= len(before) < 45
    assert d.execute("SELECT status FROM run WHERE id = ?", [rid]).fetchone()[0] == "running"
    n = -1  # the driver's workers die with it: wait until nothing more reaches the judge
    while n != len(log.read_text().split()):
        n = len(log.read_text().split())
        time.sleep(1.0)
    r = subprocess.run([*base, "--resume", str(rid), "--json"], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"run": rid, "status": "completed", "n_answers": 45}
    after = answers(d, rid)
    assert set(before) <= set(after) and after == answers(d, reference)
    calls = log.read_text().split()
    # the resumed run asked at most the answers that were missing, and nothing twice
    assert len(set(calls)) == 45 and len(calls) - n <= 45 - len(before)
    assert len(set(calls[n:])) == len(calls[n:])


def test_options_are_checked_before_any_run(db, tmp_path, cluster, monkeypatch):
    task = make_runs_task(db, tmp_path)
    log = tmp_path / "calls.log"
    monkeypatch.setenv("CHECKEVAL_FAKE_LOG", str(log))
    cmd = ["run", "--task", task, "--judge", "fake"]
    for extra, msg in [(["--engine", "spark"], "choose one of local, ray"),
                       (["--workers", "2"], "go with --engine ray"),
                       (["--engine", "ray", "--workers", "0"], "--workers 0"),
                       (["--engine", "ray", "--workers", "3"], "has 2 CPUs")]:
        r = run_cli([*cmd, *extra], db=path_of(db))
        assert r.returncode == 2 and msg in r.stderr, (extra, r.stderr)
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    r = run_cli([*cmd, "--engine", "ray"], db=path_of(db))
    assert r.returncode == 2 and "pip install -e '.[scale]'" in r.stderr
    assert db.execute("SELECT COUNT(*) FROM run").fetchone()[0] == 0 and not log.exists()


def test_a_worker_gets_the_settings_but_no_secret():
    env = worker_env({"CHECKEVAL_TIMEOUT": "9", "CHECKEVAL_OPENAI_COMPAT_KEY": "sk-x",
                      "CHECKEVAL_KEY_HOSTS": "A=http://h", "CHECKEVAL_DB": "/x.db",
                      "OPENAI_API_KEY": "sk-y", "CHECKEVAL_HF_TOKEN": "t"})
    assert env == {"CHECKEVAL_TIMEOUT": "9", "CHECKEVAL_KEY_HOSTS": "A=http://h",
                   "CHECKEVAL_EMBEDDED_THREADS": "1"}
    assert engine_for("local") is None and engine_for(None) is None


@pytest.mark.embedded
def test_embedded_judge_on_two_workers_equals_a_local_run(db, tmp_path, engine):
    engine.release()
    task = make_runs_task(db, tmp_path)
    kw = {"item_ids": ["d0-s0", "d1-s2"]}
    local = create_run(db, task, "embedded", "rocketeval", **kw)
    assert execute_run(path_of(db), local)["status"] == "completed"
    db.execute("DELETE FROM llm_cache")
    rid = create_run(db, task, "embedded", "rocketeval", **kw)
    assert execute_run(path_of(db), rid, engine=engine)["status"] == "completed"
    engine.release()
    a, b = answers(db, local), answers(db, rid)
    assert len(a) == len(b) == 10
    for x, y in zip(a, b):
        assert x[:4] == y[:4] and x[5] == y[5] == "logprob"  # same verdicts
        assert y[4] == pytest.approx(x[4], abs=0.02)  # p(Yes), another process and thread count


def test_bench_grounded_on_ray_workers_answers_as_locally(tmp_path, cluster, engine):
    """`bench grounded --engine ray`: the held-out runs' items answered by two workers give
    the answers the bench gives in one process (each version, item and question)."""
    from checkeval_core.bench.grounded import bench_grounded
    from checkeval_core.cli.app import clean_json
    from tests.helpers import summeval_bench_folder

    engine.release()  # the cluster's 2 CPUs for the command's workers
    src = summeval_bench_folder(tmp_path)
    opts = {"docs": 4, "items": 4, "n": 1, "n_boot": 20}
    local = bench_grounded(src, "fake", "fake", db_file=tmp_path / "l.db", **opts)
    r = run_cli(["bench", "grounded", "--data", str(src), "--generator", "fake", "--judge",
                 "fake", "--docs", "4", "--items", "4", "--n", "1", "--bootstrap", "20",
                 "--db", str(tmp_path / "r.db"), "--engine", "ray", "--ray-address", cluster,
                 "--workers", "2", "--json"], db=tmp_path / "x.db")
    assert r.returncode == 0, r.stderr
    on_ray = json.loads(r.stdout)

    def held_out(res):
        d = open_db(res["db"])
        return sorted((name, tuple(row)) for name, v in res["versions"].items()
                      for row in d.execute(
                          "SELECT i.item_id, q.text, a.verdict, a.p_yes FROM answer a JOIN run "
                          "r ON r.id = a.run_id JOIN item i ON i.id = a.item_id JOIN question "
                          "q ON q.id = a.question_id WHERE r.checklist_version_id = ?", [v]))

    mine = held_out(local)
    assert mine and held_out(on_ray) == mine
    assert on_ray["heldout"] == clean_json(local["heldout"])  # the same rows (NaN as null)
    bad = run_cli(["bench", "grounded", "--data", str(src), "--workers", "2", "--db",
                   str(tmp_path / "n.db")], db=tmp_path / "x.db")
    assert bad.returncode == 2 and "go with --engine ray" in bad.stderr
    assert not (tmp_path / "n.db").exists()  # refused before any database or judge
