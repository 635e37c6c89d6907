"""A run's pending requests as OpenAI batch files (``run --batch-out``) and the results stored
back (``run --resume R --batch-in FILE…``): the same answers and scores as the same run online,
bad result files refused with file and line and nothing stored, ``kill -9`` while storing
loses nothing; the batch price beside the online one."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from checkeval_core.judges.openai_compat import binary_arguments, generate_arguments
from checkeval_core.runs import create_run, execute_run, get_run
from checkeval_core.runs.batch import offline_judge, plan_run
from checkeval_core.runs.estimate import estimate_new_run
from checkeval_core.store import open_db
from tests.helpers import BATCH_ANSWER_COLS as ANSWER_COLS
from tests.helpers import batch_answers as _answers
from tests.helpers import batch_lines as _lines
from tests.helpers import cli
from tests.helpers import fake_batch_results as fake_results
from tests.helpers import same_batch_answers as _same_answers


def _scores(db, rid):
    return {tuple(r[:3]): r[3] for r in db.execute(
        "SELECT item_id, dimension, aggregation, value FROM score WHERE run_id = ?", [rid])}


def _state(path):
    """The database's content, row by row (what 'unchanged' is checked against)."""
    d = open_db(path)
    try:
        return list(d.conn.iterdump())
    finally:
        d.close()


def _batch_out(db_file, task, method, out, *extra):
    r = cli(db_file, "run", "--task", task, "--judge", "fake", "--method", method, "--limit",
            "4", "--batch-out", str(out), *extra, "--json")
    assert r.exit_code == 0, (r.stdout + r.stderr)
    return json.loads(r.stdout)


@pytest.mark.parametrize("method", ["rocketeval", "checkeval", "geval"])
def test_batch_files_give_the_online_answers_and_scores(db, db_path, task, tmp_path,
                                                        monkeypatch, method):
    log = tmp_path / "calls.log"
    monkeypatch.setenv("CHECKEVAL_FAKE_LOG", str(log))
    online = create_run(db, task, "fake", method, limit=4)
    assert execute_run(db_path, online)["status"] == "completed"
    assert log.exists()
    log.unlink()
    db.execute("DELETE FROM llm_cache")  # the batch run must not find the online answers

    res = _batch_out(db_path, task, method, tmp_path / "out", "--shards", "2")
    rid = res["run"]
    assert set(res) == {"run", "files", "requests"} and len(res["files"]) == 2
    lines = [x for f in res["files"] for x in _lines(f)]
    assert res["requests"] == len(lines) > 0
    assert not log.exists()  # no request was sent
    assert get_run(db, rid)["n_answers"] == 0
    rows = db.execute("SELECT judge_spec, mode, file_name, n_requests FROM run_batch WHERE "
                      "run_id = ?", [rid]).fetchall()
    assert [r[:2] for r in rows] == [("fake", "files")] * 2
    assert sum(r[3] for r in rows) == len(lines)
    assert db.execute("SELECT batch FROM run WHERE id = ?", [rid]).fetchone()[0] == "files"

    # each line: the request's id and exactly the body the online backend sends
    run = get_run(db, rid)
    plan = plan_run(db, run, offline_judge(db, "fake"))
    assert [json.loads(x)["custom_id"] for x in lines] == list(plan.pending)
    for x in lines:
        req = json.loads(x)
        assert set(req) == {"custom_id", "method", "url", "body"}
        assert (req["method"], req["url"]) == ("POST", "/v1/chat/completions")
        p = plan.pending[req["custom_id"]]
        args = binary_arguments(p.request) if p.kind == "binary" else \
            generate_arguments(p.request)
        assert req["body"] == {"model": "fake", **args}
    if method == "rocketeval":
        body = json.loads(lines[0])["body"]
        assert (body["max_tokens"], body["logprobs"], body["top_logprobs"]) == (1, True, 20)

    outs = []
    for k, f in enumerate(res["files"]):
        o = tmp_path / f"results-{k}.jsonl"
        o.write_text("\n".join(fake_results(db, rid, _lines(f))) + "\n", encoding="utf-8")
        outs.append(str(o))
    r = cli(db_path, "run", "--resume", str(rid), "--batch-in", *outs, "--json")
    assert r.exit_code == 0, (r.stdout + r.stderr)
    out = json.loads(r.stdout)
    assert out["status"] == "completed" and out["pending"] == 0
    assert out["stored"] == len(lines) and out["failed"] == 0
    assert not log.exists()  # still nothing asked online
    _same_answers(_answers(db, rid), _answers(db, online))
    cols = ("status", "scoring_mode", "tokens_in", "tokens_out", "n_errors", "progress_done",
            "progress_total")
    assert {k: get_run(db, rid)[k] for k in cols} == {k: get_run(db, online)[k] for k in cols}
    a, b = _scores(db, rid), _scores(db, online)
    assert a.keys() == b.keys() and a
    for k in a:
        assert a[k] == pytest.approx(b[k], abs=1e-9)
    # the answers are in the response cache under the same request ids: an online run of the
    # same work now asks nothing
    again = create_run(db, task, "fake", method, limit=4)
    assert execute_run(db_path, again)["status"] == "completed"
    assert not log.exists()
    actual = json.loads(get_run(db, rid)["actual"])
    assert actual["paid"] == "batch" and actual["calls"] == len(lines)


def test_results_in_parts_and_the_same_file_again(db, db_path, task, tmp_path):
    res = _batch_out(db_path, task, "rocketeval", tmp_path / "out", "--shards", "3")
    rid = res["run"]
    files = res["files"]
    results = []
    for k, f in enumerate(files):
        lines = fake_results(db, rid, _lines(f))
        if k == 2:  # the provider could not answer one request: it stays pending
            bad = json.loads(lines[0])
            bad["response"], bad["error"] = None, {"code": "server_error", "message": "boom"}
            lines[0] = json.dumps(bad)
        o = tmp_path / f"r{k}.jsonl"
        o.write_text("\n".join(lines) + "\n", encoding="utf-8")
        results.append(str(o))
    first = json.loads(cli(db_path, "run", "--resume", str(rid), "--batch-in", results[0],
                           "--json").stdout)
    assert first["pending"] > 0 and first["status"] == "pending"
    n1 = get_run(db, rid)["n_answers"]
    assert n1 == first["stored"] > 0
    again = json.loads(cli(db_path, "run", "--resume", str(rid), "--batch-in", results[0],
                           results[1], results[2], "--json").stdout)
    assert again["skipped"] == first["stored"] and again["failed"] == 1
    assert again["pending"] == 1 and again["status"] == "pending"
    assert "boom" in again["errors"][0] and "r2.jsonl: line 1" in again["errors"][0]
    # a later pass writes only the one request still missing
    more = _batch_out(db_path, task, "rocketeval", tmp_path / "more", "--resume", str(rid))
    assert more["requests"] == 1
    o = tmp_path / "last.jsonl"
    o.write_text(fake_results(db, rid, _lines(more["files"][0]))[0] + "\n", encoding="utf-8")
    last = json.loads(cli(db_path, "run", "--resume", str(rid), "--batch-in", str(o),
                          "--json").stdout)
    assert last["status"] == "completed" and last["stored"] == 1


def _refused(db_path, rid, path, *more):
    before = _state(db_path)
    r = cli(db_path, "run", "--resume", str(rid), "--batch-in", str(path), *more)
    assert r.exit_code == 2, (r.stdout + r.stderr)
    assert _state(db_path) == before  # nothing stored
    return (r.stdout + r.stderr)


def test_bad_result_files_are_refused_and_nothing_is_stored(db, db_path, task, tmp_path):
    res = _batch_out(db_path, task, "rocketeval", tmp_path / "out")
    rid = res["run"]
    good = fake_results(db, rid, _lines(res["files"][0]))
    assert len(good) > 3

    def write(name, lines):
        p = tmp_path / name
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return p

    foreign = json.loads(good[2])
    foreign["custom_id"] = hashlib.sha256(b"another run").hexdigest()
    msg = _refused(db_path, rid, write("foreign.jsonl", [good[0], good[1],
                                                          json.dumps(foreign)]))
    assert "foreign.jsonl: line 3" in msg and "not one of run" in msg

    other = json.loads(good[1])
    other["response"]["body"]["model"] = "gpt-4o-mini"
    msg = _refused(db_path, rid, write("model.jsonl", [good[0], json.dumps(other)]))
    assert "model.jsonl: line 2" in msg and "gpt-4o-mini" in msg

    msg = _refused(db_path, rid, write("cut.jsonl", [good[0], good[1][:len(good[1]) // 2]]))
    assert "cut.jsonl: line 2" in msg and "JSON" in msg

    msg = _refused(db_path, rid, write("twice.jsonl", [good[0], good[1], good[0]]))
    assert "twice.jsonl: line 3" in msg and "twice" in msg
    # the same id in two files, and a good file beside a bad one: nothing of either stored
    msg = _refused(db_path, rid, write("a.jsonl", good[:2]), str(write("b.jsonl", good[1:3])))
    assert "b.jsonl: line 1" in msg
    assert get_run(db, rid)["n_answers"] == 0
    # not a result object at all
    msg = _refused(db_path, rid, write("shape.jsonl", ['{"custom_id": "x"}']))
    assert "shape.jsonl: line 1" in msg


def test_batch_options_are_checked_before_anything_is_made(db, db_path, task, tmp_path):
    n_runs = db.execute("SELECT COUNT(*) FROM run").fetchone()[0]
    for args, words in [
        (["--judge", "embedded", "--batch-out", str(tmp_path)], "cannot be batched"),
        (["--judge", "fake", "--batch"], "cannot be batched"),
        (["--judge", "openai-compat:http://a:1/v1,http://b:2/v1#m", "--batch-out",
          str(tmp_path)], "pool"),
        (["--judge", "fake", "--batch-out", str(tmp_path), "--shards", "0"], "--shards"),
        (["--judge", "fake", "--batch-in", "x.jsonl"], "--resume"),
        (["--judge", "fake", "--batch", "--batch-out", str(tmp_path)], "one of"),
        (["--judge", "fake", "--escalate-to", "fake", "--margin", "0.1", "--batch-out",
          str(tmp_path)], "second judge"),
    ]:
        r = cli(db_path, "run", "--task", task, "--method", "rocketeval", "--limit", "2", *args)
        assert r.exit_code == 2, (args, (r.stdout + r.stderr))
        assert words in (r.stdout + r.stderr), (args, (r.stdout + r.stderr))
    assert db.execute("SELECT COUNT(*) FROM run").fetchone()[0] == n_runs


def test_the_batch_price_beside_the_online_price(db, task, monkeypatch):
    monkeypatch.delenv("CHECKEVAL_PRICES", raising=False)
    est = estimate_new_run(db, task, "openai:gpt-4o-mini", "rocketeval", limit=2)
    assert est.batchable and est.usd > 0
    assert est.usd_batch == pytest.approx(est.usd * 0.5)
    assert "with the Batch API" in est.text() and est.to_json()["usd_batch"] is not None
    local = estimate_new_run(db, task, "fake", "rocketeval", limit=2)
    assert not local.batchable and "usd_batch" not in local.to_json()
    spec = "openai-compat:http://127.0.0.1:9/v1#m"
    monkeypatch.setenv("CHECKEVAL_PRICES", json.dumps(
        {"m": {"input": 1.0, "output": 2.0, "batch_input": 0.25, "batch_output": 0.5}}))
    priced = estimate_new_run(db, task, spec, "rocketeval", limit=2)
    assert priced.usd_batch == pytest.approx(priced.usd * 0.25)
    monkeypatch.setenv("CHECKEVAL_PRICES", json.dumps({"m": [1.0, 2.0]}))
    unknown = estimate_new_run(db, task, spec, "rocketeval", limit=2)
    assert unknown.usd > 0 and unknown.usd_batch is None
    assert "batch price unknown" in unknown.text() or "cost unknown" in unknown.text()
    both = est + local
    assert both.usd_batch == pytest.approx(est.usd_batch + local.usd)


@pytest.mark.slow
def test_kill_during_batch_in_loses_nothing(tmp_path):
    """SIGKILL ``--batch-in`` while it stores its files; feed the same files again: every file
    stored before the kill stays, none is stored twice, and the run completes (that stored
    answers equal online ones is the first test's)."""
    db = tmp_path / "k.db"
    base = [sys.executable, "-m", "checkeval_core", "--db", str(db)]
    env = dict(os.environ, CHECKEVAL_DEMO_RUNS="0", CHECKEVAL_CACHE_DIR=str(tmp_path / "c"))
    subprocess.run([*base, "demo"], check=True, capture_output=True, timeout=120, env=env)
    r = subprocess.run([*base, "run", "--task", "summeval-demo", "--judge", "fake", "--method",
                        "rocketeval", "--limit", "4", "--batch-out", str(tmp_path / "out"),
                        "--shards", "8", "--json"], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    rid, n = res["run"], res["requests"]
    d = open_db(db)
    outs = []
    for k, f in enumerate(res["files"]):  # (fake_results plans the run once per file)
        o = tmp_path / f"r{k:02d}.jsonl"
        o.write_text("\n".join(fake_results(d, rid, _lines(f))) + "\n", encoding="utf-8")
        outs.append(str(o))
    proc = subprocess.Popen([*base, "run", "--resume", str(rid), "--batch-in", *outs],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    seen = 0
    while time.time() < deadline and seen == 0:
        seen = d.execute("SELECT COUNT(*) FROM answer WHERE run_id = ?", [rid]).fetchone()[0]
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    before = d.execute("SELECT COUNT(*) FROM answer WHERE run_id = ?", [rid]).fetchone()[0]
    assert 0 < before < n  # killed while storing
    sizes = [len(_lines(f)) for f in res["files"]]
    # whole files only: the answers stored are the first k files' requests
    assert before in {sum(sizes[:k]) for k in range(1, len(sizes))}
    snapshot = set(d.execute(f"SELECT {ANSWER_COLS} FROM answer WHERE run_id = ?", [rid]))
    r = subprocess.run([*base, "run", "--resume", str(rid), "--batch-in", *outs, "--json"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "completed" and out["skipped"] == before
    assert out["stored"] == n - before
    after = set(d.execute(f"SELECT {ANSWER_COLS} FROM answer WHERE run_id = ?", [rid]))
    assert snapshot <= after and len(after) == n
