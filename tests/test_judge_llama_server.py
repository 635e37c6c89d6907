"""The OpenAI-compatible path against a real server: llama.cpp's (``llama_cpp.server`` from
llama-cpp-python[server]) serving the embedded judge's GGUF on a free 127.0.0.1 port.

A tiny run (2 items x 3 questions, rocketeval) is judged in logprob mode through
``openai-compat:<url>#<model>`` and again in process by the ``embedded`` judge; the two must
agree on every verdict and on p(Yes) within ``P_YES_TOLERANCE``. Both format the prompt with
the GGUF's own chat template, so they see the same tokens; the differences left are
numerical: the embedded judge evaluates the prompt in segments (its prefix reuse) and sums
p(Yes) over the whole vocabulary's yes/no spellings, the server evaluates it in one pass and
returns the top 20 candidates only. Measured on the 0.5B model (2 threads) over the 6
answers (p(Yes) from 0.39 to 0.76): at most 3e-6 apart with the portable AVX2 build of
llama.cpp, at most 0.016 with the AVX-512 build ``scripts/setup.sh`` makes where the CPU has it
(its kernels round a row differently with the batch's shape: a segment vs the whole prompt);
the tolerance covers the AVX-512 build. The verdicts must be equal.

The server runs inside ``embedded.llama_model_defaults()``, so it loads the model with the
same llama.cpp parameters as the embedded judge (no AMX buffers where they crash).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
from tests.conftest import free_port

pytestmark = pytest.mark.embedded

REPO = Path(__file__).resolve().parent.parent
P_YES_TOLERANCE = 0.02
SERVE = ("import runpy\n"
         "from checkeval_core.judges.embedded import llama_model_defaults\n"
         "with llama_model_defaults():\n"
         "    runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)\n")


@pytest.fixture
def llama_server(tmp_path):
    # the project's setup installs both: a missing one is a failure, never a silent skip
    try:
        import llama_cpp.server.app  # noqa: F401
    except ImportError as e:
        pytest.fail(f"llama-cpp-python[server]'s packages are missing ({e}): run the README's "
                    "test command (it installs requirements-dev.txt)")
    try:
        gguf = model_path("")
    except ModelMissing as e:
        pytest.fail(f"the embedded model is missing: {e}")
    port = free_port()
    threads = os.environ.get("CHECKEVAL_EMBEDDED_THREADS", str(os.cpu_count() or 2))
    log = open(tmp_path / "llama_server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE, "--model", str(gguf), "--model_alias", "qwen-0.5b",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--seed", "1234",
         "--n_threads", threads, "--n_threads_batch", threads],
        stdout=log, stderr=subprocess.STDOUT, cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)))
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 180
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}: "
                            + (tmp_path / "llama_server.log").read_text()[-2000:])
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline:
                pytest.fail("llama_cpp.server did not answer within 180 s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


def tiny_task(db, tmp_path) -> None:
    src = "The museum reopened on Friday after two years of repairs. Entry is free in June."
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in [
        {"id": "good", "group_id": "g", "source": src,
         "output": "The museum reopened on Friday after repairs; entry is free in June."},
        {"id": "bad", "group_id": "g", "source": src,
         "output": "The museum closed forever on Monday and tickets cost 90 euros."}]) + "\n")
    import_file(db, p, "t", kind="summarization")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"consistency": {
        "definition": "facts match the article", "sub_dimensions": {"Facts": {"seed": [
            "Does the summary say the museum reopened?",
            "Is the summary consistent with the article?",
            "Does the summary state the entry price correctly?"]}}}}))
    import_checklist(db, "t", c)
    freeze(db, "t")


def answers(db, run_id: int) -> dict[tuple[int, int], tuple[str, float | None, str, str]]:
    return {(r[0], r[1]): (r[2], r[3], r[4], r[5]) for r in db.execute(
        "SELECT item_id, question_id, verdict, p_yes, mode, error FROM answer "
        "WHERE run_id = ?", [run_id])}


def test_real_openai_compatible_server_matches_the_embedded_judge(llama_server, db, tmp_path,
                                                                   monkeypatch):
    monkeypatch.setenv("CHECKEVAL_CONCURRENCY", "1")  # the server answers one at a time
    monkeypatch.setenv("CHECKEVAL_TIMEOUT", "300")  # a loaded 2-core machine is slow
    tiny_task(db, tmp_path)
    spec = f"openai-compat:{llama_server}#qwen-0.5b"
    served = execute_run(path_of(db), create_run(db, "t", spec, "rocketeval"))
    assert served["status"] == "completed", served["error"]
    # one question after another, as the server evaluates them: side by side in one batch,
    # llama.cpp's kernels round differently (docs/benchmarks.md)
    local = execute_run(path_of(db), create_run(db, "t", "embedded", "rocketeval"),
                        judge=get_judge("embedded", db=db, parallel=False))
    assert local["status"] == "completed", local["error"]
    a, b = answers(db, served["id"]), answers(db, local["id"])
    assert len(a) == len(b) == 6 and set(a) == set(b)
    diffs = []
    for key, (verdict, p_yes, mode, error) in a.items():
        assert not error and mode == "logprob" and p_yes is not None, a[key]
        assert verdict == b[key][0], (key, a[key], b[key])
        diffs.append(abs(p_yes - b[key][1]))
    assert max(diffs) <= P_YES_TOLERANCE, diffs
