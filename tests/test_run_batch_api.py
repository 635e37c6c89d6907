"""``checkeval run --batch``: the provider's Batch API driven by the real ``openai`` client
against a fake OpenAI-compatible server on 127.0.0.1 (files, batches, their status, output
files and chat completions): a completed batch gives the online answers, a failed or expired
one leaves what it answered stored and the rest pending, a killed worker resumes polling
instead of submitting again, *Cancel* cancels the batch."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from checkeval_core.judges.batch_format import chat_completion as completion
from checkeval_core.judges.fake import stable_unit
from checkeval_core.runs import cancel_run, create_run, execute_run, get_run
from checkeval_core.runs.estimate import estimate_vs_actual
from checkeval_core.store import open_db
from tests.helpers import batch_answers as _answers
from tests.helpers import cli
from tests.helpers import same_batch_answers as _same_answers

MODEL = "judge-m"


class BatchServer:
    """OpenAI's ``/v1/files``, ``/v1/files/{id}/content``, ``/v1/batches``,
    ``/v1/batches/{id}``, ``/v1/batches/{id}/cancel`` and ``/v1/chat/completions``.

    A batch is ``validating`` (OpenAI's queued state) when created, ``in_progress`` at the next
    retrieve (half its requests counted done), then ends as ``outcome``: ``completed`` (every
    answer in its output file), ``expired`` (the first half answered), ``failed`` (no output).
    While ``hold`` is set a batch stays in progress; a cancelled one ends ``cancelled`` with
    its first third answered."""

    def __init__(self, outcome="completed"):
        self.outcome = outcome
        self.hold = threading.Event()
        self.lock = threading.Lock()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.inputs: list[list[dict]] = []  # the request lines of each batch created
        self.cancelled: list[str] = []
        self.auth: set[str] = set()  # every Authorization header received
        self.chat = 0
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, code, obj, raw=None):
                data = raw if raw is not None else json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/octet-stream" if raw is not None
                                 else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with srv.lock:
                    srv.auth.add(self.headers.get("Authorization", ""))
                    if self.path == "/v1/files":
                        return self._send(200, srv.upload(self.headers["Content-Type"], body))
                    if self.path == "/v1/batches":
                        return self._send(200, srv.create(json.loads(body)))
                    m = re.fullmatch(r"/v1/batches/([\w-]+)/cancel", self.path)
                    if m:
                        b = srv.batches[m.group(1)]
                        srv.cancelled.append(b["id"])
                        if b["status"] not in ("completed", "failed", "expired", "cancelled"):
                            b["status"] = "cancelling"
                        return self._send(200, b)
                    if self.path == "/v1/chat/completions":
                        srv.chat += 1
                        return self._send(200, answer(json.loads(body)))
                return self._send(404, {"error": {"message": f"no {self.path}"}})

            def do_GET(self):
                with srv.lock:
                    srv.auth.add(self.headers.get("Authorization", ""))
                    m = re.fullmatch(r"/v1/batches/([\w-]+)", self.path)
                    if m and m.group(1) in srv.batches:
                        return self._send(200, srv.advance(m.group(1)))
                    m = re.fullmatch(r"/v1/files/([\w-]+)/content", self.path)
                    if m and m.group(1) in srv.files:
                        return self._send(200, None, srv.files[m.group(1)])
                return self._send(404, {"error": {"message": f"no {self.path}"}})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.spec = f"openai-compat:http://127.0.0.1:{self.port}/v1#{MODEL}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    # -- the provider's side ------------------------------------------------------------------
    def upload(self, ctype, body):
        boundary = ctype.split("boundary=")[1].strip('"').encode()
        content = b""
        for part in body.split(b"--" + boundary):
            head, _, rest = part.partition(b"\r\n\r\n")
            if b'name="file"' in head:
                content = rest[:-2] if rest.endswith(b"\r\n") else rest
        fid = f"file-{len(self.files) + 1}"
        self.files[fid] = content
        return {"id": fid, "object": "file", "bytes": len(content), "created_at": 1,
                "filename": "in.jsonl", "purpose": "batch", "status": "processed"}

    def create(self, req):
        lines = [json.loads(x) for x in self.files[req["input_file_id"]].decode().splitlines()
                 if x.strip()]
        self.inputs.append(lines)
        bid = f"batch_{len(self.batches) + 1}"
        self.batches[bid] = {
            "id": bid, "object": "batch", "endpoint": req["endpoint"], "errors": None,
            "input_file_id": req["input_file_id"], "completion_window": "24h",
            "status": "validating", "output_file_id": None, "error_file_id": None,
            "created_at": 1, "metadata": req.get("metadata"), "_lines": lines,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
        return self._public(bid)

    def _public(self, bid):
        return {k: v for k, v in self.batches[bid].items() if not k.startswith("_")}

    def _finish(self, b, status, n_answered):
        out = []
        for i, req in enumerate(b["_lines"][:n_answered]):
            out.append(json.dumps({"id": f"batch_req_{i}", "custom_id": req["custom_id"],
                                   "response": {"status_code": 200, "request_id": f"r{i}",
                                                "body": answer(req["body"])}, "error": None}))
        if out:
            fid = f"file-{len(self.files) + 1}"
            self.files[fid] = ("\n".join(out) + "\n").encode()
            b["output_file_id"] = fid
        b["status"] = status
        b["request_counts"]["completed"] = n_answered

    def advance(self, bid):
        b = self.batches[bid]
        n = len(b["_lines"])
        if b["status"] == "validating":
            b["status"] = "in_progress"
            b["request_counts"]["completed"] = n // 2
        elif b["status"] == "cancelling":
            self._finish(b, "cancelled", n // 3)
        elif b["status"] == "in_progress" and not self.hold.is_set():
            if self.outcome == "failed":
                b["status"] = "failed"
                b["errors"] = {"object": "list", "data": [
                    {"code": "invalid_request", "message": "the input file is refused",
                     "line": None, "param": None}]}
                b["request_counts"]["completed"] = 0
            else:
                self._finish(b, self.outcome, n if self.outcome == "completed" else n // 2)
        return self._public(bid)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def answer(body):
    """A deterministic chat completion for a request body (the same online and in a batch)."""
    user = body["messages"][-1]["content"]
    p = round(0.05 + 0.9 * stable_unit(user), 4)
    text = "Yes" if p >= 0.5 else "No"
    return completion(body["model"], text, p if body.get("logprobs") else None,
                      len(user.split()), 1)


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("CHECKEVAL_BATCH_POLL", "0.01")
    for var in ("CHECKEVAL_OPENAI_COMPAT_KEY", "OPENAI_API_KEY", "CHECKEVAL_KEY_HOSTS"):
        monkeypatch.delenv(var, raising=False)
    s = BatchServer()
    yield s
    s.close()


def _batch(db_path, task, spec, *extra):
    r = cli(db_path, "run", "--task", task, "--judge", spec, "--method", "rocketeval",
            "--limit", "3", *extra)
    return r


def _rows(db, rid):
    cur = db.execute("SELECT batch_id, status, stored, n_requests, counts FROM run_batch "
                     "WHERE run_id = ? AND mode = 'api' ORDER BY id", [rid])
    return cur.fetchall()


def test_a_completed_batch_gives_the_online_answers(db, db_path, task, server, monkeypatch):
    # a key in the backend's default variable, approved for no address: the batch client is
    # the online backend's, so it is passed over and never sent to this server
    monkeypatch.setenv("CHECKEVAL_OPENAI_COMPAT_KEY", "sk-never-sent-123")
    monkeypatch.setenv("CHECKEVAL_PRICES", json.dumps(
        {MODEL: {"input": 1.0, "output": 2.0, "batch_input": 0.5, "batch_output": 1.0}}))
    r = _batch(db_path, task, server.spec, "--batch", "--json")
    assert r.exit_code == 0, (r.stdout + r.stderr)
    out = json.loads(r.stdout)
    rid = out["run"]
    assert out["status"] == "completed" and out["n_answers"] > 0
    assert server.chat == 0 and len(server.inputs) == 1  # nothing asked online, one batch
    assert server.auth and not any("sk-never-sent" in a for a in server.auth)
    assert "requests done" in (r.stdout + r.stderr)  # the provider's counts as progress
    n = len(server.inputs[0])
    assert out["n_answers"] == n
    assert server.inputs[0][0]["body"]["model"] == MODEL
    [(bid, status, stored, n_req, counts)] = _rows(db, rid)
    assert (bid, status, stored, n_req) == ("batch_1", "completed", 1, n)
    assert json.loads(counts) == {"total": n, "completed": n, "failed": 0}
    run = get_run(db, rid)
    actual, est = json.loads(run["actual"]), json.loads(run["estimate"])
    assert run["batch"] == "api" and actual["paid"] == "batch"
    # paid at the batch price, and compared with the batch estimate on the Run page
    t_in, t_out = db.execute("SELECT SUM(tokens_in), SUM(tokens_out) FROM answer WHERE "
                             "run_id = ?", [rid]).fetchone()
    assert actual["usd"] == pytest.approx((t_in * 0.5 + t_out * 1.0) / 1e6, abs=1e-6)
    assert est["usd_batch"] == pytest.approx(est["usd"] / 2, abs=1e-6) and est["usd"] > 0
    usd = {r["figure"]: r for r in estimate_vs_actual(run)}["usd"]
    assert usd["estimate"] == est["usd_batch"] and usd["actual"] == actual["usd"]
    # the same run online against the same server: the same answers
    db.execute("DELETE FROM llm_cache")
    online = create_run(db, task, server.spec, "rocketeval", limit=3)
    assert execute_run(db_path, online)["status"] == "completed"
    assert server.chat == n
    _same_answers(_answers(db, rid), _answers(db, online))


def test_a_failed_batch_leaves_the_run_pending_and_resume_submits_again(db, db_path, task,
                                                                         server):
    server.outcome = "failed"
    r = _batch(db_path, task, server.spec, "--batch", "--json")
    assert r.exit_code == 1
    rid = json.loads(r.stdout)["run"]
    run = get_run(db, rid)
    assert run["status"] == "failed" and run["n_answers"] == 0
    assert "batch_1 failed: the input file is refused" in run["error"]
    assert _rows(db, rid)[0][:3] == ("batch_1", "failed", 1)
    server.outcome = "completed"
    r = cli(db_path, "run", "--resume", str(rid), "--json")  # no flag: the run says 'api'
    assert r.exit_code == 0, (r.stdout + r.stderr)
    assert json.loads(r.stdout)["status"] == "completed"
    assert len(server.inputs) == 2 and server.chat == 0


def test_an_expired_batch_keeps_its_answers_and_the_rest_is_submitted(db, db_path, task,
                                                                      server):
    server.outcome = "expired"
    r = _batch(db_path, task, server.spec, "--batch", "--json")
    assert r.exit_code == 1
    rid = json.loads(r.stdout)["run"]
    n = len(server.inputs[0])
    run = get_run(db, rid)
    assert run["status"] == "failed" and run["n_answers"] == n // 2 > 0
    assert "expired" in run["error"] and "still pending" in run["error"]
    server.outcome = "completed"
    r = cli(db_path, "run", "--resume", str(rid), "--json")
    assert r.exit_code == 0, (r.stdout + r.stderr)
    assert len(server.inputs) == 2 and len(server.inputs[1]) == n - n // 2  # only the rest
    done = {x["custom_id"] for x in server.inputs[0][:n // 2]}
    assert not done & {x["custom_id"] for x in server.inputs[1]}
    assert get_run(db, rid)["n_answers"] == n


def _worker(db_file, spec, env):
    base = [sys.executable, "-m", "checkeval_core", "--db", str(db_file)]
    return subprocess.Popen([*base, "run", "--task", "t", "--judge", spec, "--method",
                             "rocketeval", "--limit", "3", "--batch", "--quiet"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _wait_batch_id(d, proc):
    rid = int(proc.stderr.readline().split()[1])
    deadline = time.time() + 60
    while time.time() < deadline:
        row = d.execute("SELECT batch_id FROM run_batch WHERE run_id = ?", [rid]).fetchone()
        if row and row[0]:
            return rid
        time.sleep(0.02)
    raise AssertionError("no batch submitted")


@pytest.mark.slow
def test_a_killed_worker_resumes_polling_and_cancel_cancels(db, db_path, task, server):
    env = dict(os.environ, CHECKEVAL_BATCH_POLL="0.05")
    db.close()
    d = open_db(db_path)
    server.hold.set()
    proc = _worker(db_path, server.spec, env)
    rid = _wait_batch_id(d, proc)
    time.sleep(0.3)  # a few polls while in progress
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert get_run(d, rid)["status"] == "running" and len(server.inputs) == 1
    server.hold.clear()
    r = subprocess.run([sys.executable, "-m", "checkeval_core", "--db", str(db_path), "run",
                        "--resume", str(rid), "--json", "--quiet"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "completed"
    assert len(server.inputs) == 1 and server.chat == 0  # polled, never submitted again

    # Cancel (the Run page's button) while a batch runs: the batch is cancelled at the
    # provider, what it answered is stored, the run ends cancelled
    d.execute("DELETE FROM llm_cache")
    server.hold.set()
    proc = _worker(db_path, server.spec, env)
    rid2 = _wait_batch_id(d, proc)
    cancel_run(d, rid2)
    assert proc.wait(60) == 1
    run = get_run(d, rid2)
    assert run["status"] == "cancelled" and server.cancelled == ["batch_2"]
    assert run["n_answers"] == len(server.inputs[1]) // 3 > 0
    assert _rows(d, rid2)[0][:3] == ("batch_2", "cancelled", 1)
