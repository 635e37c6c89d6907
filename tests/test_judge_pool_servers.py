"""A pool of two real OpenAI-compatible servers — llama.cpp's ``llama_cpp.server`` on the
embedded judge's GGUF, one thread each, on free 127.0.0.1 ports — answers one run; one
server is killed mid-run. The run completes, no prompt is answered twice, and every verdict
equals a one-server run's (p(Yes) within ``P_YES_TOLERANCE``: each server reuses its own
cached prefix, so a question's logits differ by a rounding amount)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.judges.model_files import ModelMissing, model_path
from checkeval_core.judges.registry import get_judge
from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import db_path as path_of
from checkeval_core.store import open_db
from tests.conftest import free_port

pytestmark = [pytest.mark.embedded, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
# each server reuses its own cached prompt prefix, so a question is evaluated after a
# different cached prefix (or none) in the pool than in the one-server run, and p(Yes) is
# read from the server's top-20 candidates only (a spelling of yes/no entering or leaving
# them moves it by a step); measured 0.007 and 0.027 apart in two runs, every verdict equal
P_YES_TOLERANCE = 0.05
SERVE = ("import runpy\n"
         "from checkeval_core.judges.embedded import llama_model_defaults\n"
         "with llama_model_defaults():\n"
         "    runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)\n")


def start_server(tmp_path: Path, name: str) -> tuple[subprocess.Popen, str]:
    try:
        gguf = model_path("")
    except ModelMissing as e:
        pytest.fail(f"the embedded model is missing: {e}")
    port = free_port()
    log = open(tmp_path / f"{name}.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE, "--model", str(gguf), "--model_alias", "qwen-0.5b",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--seed", "1234",
         "--n_threads", "1", "--n_threads_batch", "1"],
        stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
    return proc, f"http://127.0.0.1:{port}/v1"


def wait_ready(proc: subprocess.Popen, url: str, tmp_path: Path, name: str) -> None:
    deadline = time.time() + 300
    while True:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited: {(tmp_path / f'{name}.log').read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.time() > deadline:
            pytest.fail("llama_cpp.server did not answer within 300 s")
        time.sleep(0.5)


@pytest.fixture
def two_servers(tmp_path):
    procs = [start_server(tmp_path, n) for n in ("a", "b")]
    try:
        for (p, u), n in zip(procs, ("a", "b")):
            wait_ready(p, u, tmp_path, n)
        yield procs
    finally:
        for p, _ in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(10)


def pool_task(db, tmp_path) -> None:
    facts = [("The museum reopened on Friday after two years of repairs. Entry is free in June.",
              "The museum reopened on Friday; entry is free in June.",
              "The museum closed forever and tickets cost 90 euros."),
             ("The river flooded the old town on Monday. Nobody was hurt.",
              "A flood hit the old town on Monday without injuries.",
              "A fire destroyed the new town and many were hurt."),
             ("The bakery won a national prize for its rye bread this year.",
              "The bakery's rye bread won a national prize.",
              "The bakery closed after losing a cake contest.")]
    rows = []
    for g, (src, good, bad) in enumerate(facts):
        rows += [{"id": f"g{g}-good", "group_id": f"g{g}", "source": src, "output": good},
                 {"id": f"g{g}-bad", "group_id": f"g{g}", "source": src, "output": bad}]
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    import_file(db, p, "t", kind="summarization")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"consistency": {
        "definition": "facts match the article", "sub_dimensions": {"Facts": {"seed": [
            "Is the summary consistent with the article?",
            "Does the summary avoid inventing facts?",
            "Does the summary keep the article's main event?"]}}}}))
    import_checklist(db, "t", c)
    freeze(db, "t")


def answers(db, run_id: int) -> dict[tuple[int, int], tuple[str, float | None, str]]:
    return {(r[0], r[1]): (r[2], r[3], r[4]) for r in db.execute(
        "SELECT item_id, question_id, verdict, p_yes, error FROM answer WHERE run_id = ?",
        [run_id])}


def test_two_real_servers_one_killed_mid_run(two_servers, db, tmp_path, monkeypatch):
    monkeypatch.setenv("CHECKEVAL_CONCURRENCY", "1")  # each server answers one at a time
    monkeypatch.setenv("CHECKEVAL_TIMEOUT", "300")
    pool_task(db, tmp_path)
    (pa, url_a), (pb, url_b) = two_servers
    spec = f"openai-compat:{url_a},{url_b}#qwen-0.5b"
    judge = get_judge(spec, db=db)
    rid = create_run(db, "t", spec, "rocketeval")
    out: dict = {}
    worker = threading.Thread(target=lambda: out.update(
        run=execute_run(path_of(db), rid, judge=judge)))
    worker.start()
    watch = open_db(path_of(db))
    deadline = time.time() + 600
    pool = judge.inner
    # both servers have answered and their answers are stored: then b dies mid-run
    while min(pool.answered) < 1 or watch.execute(
            "SELECT COUNT(*) FROM llm_cache WHERE backend = ?", [judge.spec]).fetchone()[0] < 4:
        assert time.time() < deadline and worker.is_alive(), out
        time.sleep(0.2)
    pb.kill()
    worker.join(900)
    run = out["run"]
    assert run["status"] == "completed", run["error"]
    assert run["n_answers"] == 18 and run["n_errors"] == 0
    assert pool.resent >= 1 and sum(pool.answered) == 18
    assert judge.n_requests == 18  # nothing answered was asked again
    one = execute_run(path_of(db), create_run(db, "t", f"openai-compat:{url_a}#qwen-0.5b",
                                              "rocketeval"))
    assert one["status"] == "completed", one["error"]
    a, b = answers(db, rid), answers(db, one["id"])
    assert len(a) == len(b) == 18
    assert all(not error for _, _, error in a.values())
    assert {k: v[0] for k, v in a.items()} == {k: v[0] for k, v in b.items()}  # every verdict
    assert max(abs(a[k][1] - b[k][1]) for k in a) <= P_YES_TOLERANCE
