"""The OpenAI-compatible adapter against a local scripted HTTP server (127.0.0.1, free port).

The server answers in OpenAI chat-completions format with log-probabilities, and on demand
with 429 (Retry-After), 500, a hang, malformed JSON or no choices. The adapter must classify
transient failures so that the wrapper retries them (``get_judge``; the raw backend never
retries), time out, and record invalid/error results without crashing; reruns must be served
from the cache; the key must never reach the database or the logs.
"""

import json
import logging
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from checkeval_core.judges.base import BinaryRequest, GenerateRequest
from checkeval_core.judges.keys import KEY_HOSTS_ENV
from checkeval_core.judges.registry import get_judge, load_backend
from tests.helpers import completion

KEY = "sk-test-SECRET-1234567890"



class Script:
    """A queue of behaviours; when empty, answer 'Yes' with log-probabilities."""

    def __init__(self):
        self.queue, self.requests, self.lock = [], [], threading.Lock()

    def next(self):
        with self.lock:
            return self.queue.pop(0) if self.queue else "ok"


@pytest.fixture
def server():
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            script.requests.append({"body": body, "auth": self.headers.get("Authorization")})
            kind = script.next()
            if kind == "429":
                self._send(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})
            elif kind == "500":
                self._send(500, {"error": {"message": "oops"}})
            elif kind == "hang":
                time.sleep(2.5)
                self._send(200, completion("Yes"))
            elif kind == "malformed":
                self._raw(200, b'{"id": "x", "choices": [')
            elif kind == "empty":
                self._send(200, {**completion("Yes"), "choices": []})
            elif kind == "neither":
                self._send(200, completion("Maybe", {"Maybe": -0.1, "Perhaps": -2.5}))
            elif kind == "nologprobs":
                self._send(400, {"error": {"message": "logprobs are not supported"}})
            elif kind == "text-no":
                self._send(200, completion("No."))
            else:
                if body.get("logprobs"):
                    self._send(200, completion("Yes", {"Yes": math.log(0.7), " yes":
                                                       math.log(0.1), "No": math.log(0.2)}))
                else:
                    self._send(200, completion("Yes"))

        def _send(self, code, obj, headers=None):
            self._raw(code, json.dumps(obj).encode(), headers)

        def _raw(self, code, data, headers=None):
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    script.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield script
    httpd.shutdown()
    httpd.server_close()


def req(q="Is it good?"):
    return BinaryRequest("Judge strictly.", ("Text: a fine summary.\n\nQuestion: ",), q)


def test_logprob_answer_and_request_shape(server, monkeypatch):
    monkeypatch.setenv("CHECKEVAL_OPENAI_COMPAT_KEY", KEY)
    monkeypatch.setenv(KEY_HOSTS_ENV, f"CHECKEVAL_OPENAI_COMPAT_KEY={server.url}")
    j = load_backend(f"openai-compat:{server.url}#tiny-model")
    r = j.binary([req()])[0]
    assert r.verdict == "yes" and r.mode == "logprob"
    assert r.p_yes == pytest.approx(0.8) and r.yes_no_mass == pytest.approx(1.0)
    body = server.requests[0]["body"]
    assert body["model"] == "tiny-model" and body["max_tokens"] == 1
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["temperature"] == 0
    assert body["messages"][-1]["content"].endswith("Is it good?\nAnswer Yes or No.")
    assert server.requests[0]["auth"] == f"Bearer {KEY}"


def test_retries_on_429_and_500_then_succeeds(server):
    server.queue = ["429", "500", "ok"]
    j = get_judge(f"openai-compat:{server.url}#m", cache=False)
    r = j.binary([req()])[0]
    assert r.verdict == "yes" and not r.error
    assert len(server.requests) == 3 and j.counters()["retries"] == 2


def test_raw_backend_classifies_but_does_not_retry(server):
    """The adapter raises a transient failure (the wrapper owns the retries) and turns a
    non-transient one into an error result."""
    import openai

    j = load_backend(f"openai-compat:{server.url}#m")
    server.queue = ["500"]
    with pytest.raises(openai.InternalServerError) as exc:
        j.binary([req()])
    decision = j.should_retry(exc.value)
    assert decision is not None and "server error 500" in decision.message
    server.queue = ["429"]
    with pytest.raises(openai.RateLimitError) as exc:
        j.binary([req()])
    assert j.should_retry(exc.value).delay == 0.0  # the server's Retry-After
    assert len(server.requests) == 2  # one call each: no retry inside the adapter
    server.queue = ["text-no"]
    assert j.binary([req()])[0].verdict == "no"


def test_gives_up_after_attempts_with_error(server):
    server.queue = ["500"] * 10
    j = get_judge(f"openai-compat:{server.url}#m", cache=False, attempts=3)
    r = j.binary([req()])[0]
    assert r.verdict == "invalid" and "server error 500" in r.error
    assert len(server.requests) == 3


def test_timeout_malformed_empty_are_recorded(server):
    server.queue = ["hang", "hang", "malformed", "empty"]
    # one request at a time, so the queued behaviours meet the requests in order
    j = get_judge(f"openai-compat:{server.url}#m", cache=False, timeout=0.5, attempts=2,
                  concurrency=1)
    res = j.binary([req("a?"), req("b?"), req("c?")])
    assert res[0].verdict == "invalid" and "timed out" in res[0].error
    assert res[1].verdict == "invalid" and res[1].error  # malformed JSON
    assert res[2].verdict == "invalid" and "no choices" in res[2].error


def test_neither_yes_nor_no_and_text_fallback(server):
    server.queue = ["neither", "nologprobs", "text-no"]
    j = load_backend(f"openai-compat:{server.url}#m")
    r1 = j.binary([req()])[0]
    assert r1.p_yes is None and r1.yes_no_mass == 0.0 and r1.verdict == "invalid"
    r2 = j.binary([req()])[0]  # server refuses logprobs -> remembered, asked in text mode
    assert r2.verdict == "no" and r2.mode == "text" and r2.p_yes is None
    assert "logprobs" not in server.requests[-1]["body"]


def test_cache_hits_no_second_request_and_key_never_stored(server, db, db_path, monkeypatch,
                                                           caplog, capsys):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("CHECKEVAL_OPENAI_COMPAT_KEY", KEY)
    spec = f"openai-compat:{server.url}#m"
    first = get_judge(spec, db=db).binary([req("a?"), req("b?")])
    n = len(server.requests)
    again = get_judge(spec, db=db).binary([req("a?"), req("b?")])
    assert len(server.requests) == n  # served from the cache
    assert all(r.cached for r in again) and [r.p_yes for r in again] == [r.p_yes for r in first]
    server.queue = ["500"] * 10
    get_judge(spec, db=db, attempts=2).binary([req("c?")])
    db.conn.execute("PRAGMA wal_checkpoint(FULL)")
    for path in db_path.parent.glob(db_path.name + "*"):
        assert KEY.encode() not in path.read_bytes()
    out = capsys.readouterr()
    assert KEY not in caplog.text and KEY not in out.out and KEY not in out.err


def test_concurrent_requests_and_generate(server):
    j = get_judge(f"openai-compat:{server.url}#m", concurrency=4)
    res = j.binary([req(f"q{i}?") for i in range(12)])
    assert len(res) == 12 and all(r.verdict == "yes" for r in res)
    g = j.generate([GenerateRequest.chat("sys", "hello", max_tokens=5)])[0]
    assert g.text == "Yes" and g.tokens_in == 11


def test_connection_error_names_the_url():
    from checkeval_core.judges.base import BinaryRequest
    from tests.conftest import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    j = get_judge(f"openai-compat:{url}#m", cache=False, attempts=1, timeout=5)
    res = j.binary([BinaryRequest("s", ("ctx",), "Is it?")])[0]
    assert res.verdict == "invalid" and f"cannot connect to {url}" in res.error
