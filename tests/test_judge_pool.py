"""A pool of OpenAI-compatible servers answering one run (``judges/pool.py``), against
scripted servers on 127.0.0.1: the spec grammar, each item's questions on one server, a
server that dies mid-run (its in-flight requests re-sent to the other, nothing answered
asked again, the run completes with the verdicts of a one-server run), and keys resolved
per endpoint."""

from __future__ import annotations

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from checkeval_core.judges.fake import stable_unit
from checkeval_core.judges.keys import KeyRefused
from checkeval_core.judges.pool import PoolJudge, expand_pool_file
from checkeval_core.judges.registry import get_judge
from checkeval_core.judges.spec import JudgeSpecError, endpoint_spec, endpoint_urls, parse_spec
from checkeval_core.runs import create_run, execute_run, get_run
from checkeval_core.runs.estimate import estimate_run
from checkeval_core.runs.export import run_rows
from checkeval_core.store import db_path
from tests.helpers import completion


class Server:
    """Answers p(Yes) = a hash of the user message (the same on every server); records who
    asked what; ``die_after`` = n: the n-th request is dropped unanswered and the server
    stops listening (a crashed process)."""

    def __init__(self, name: str, die_after: int | None = None) -> None:
        self.name, self.die_after = name, die_after
        self.users: list[str] = []
        self.lock = threading.Lock()
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                user = body["messages"][-1]["content"]
                with srv.lock:
                    n = len(srv.users) + 1
                    dying = srv.die_after is not None and n >= srv.die_after
                    if not dying:
                        srv.users.append(user)
                if dying:  # no answer: the client sees the connection drop
                    self.close_connection = True
                    threading.Thread(target=srv.close, daemon=True).start()
                    return
                p = 0.05 + 0.9 * stable_unit(user)
                data = json.dumps(completion("Yes" if p >= 0.5 else "No",
                                             {"Yes": math.log(p), "No": math.log(1 - p)})
                                  ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._closed = False

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.httpd.shutdown()
            self.httpd.server_close()


@pytest.fixture
def servers():
    made: list[Server] = []

    def make(*die_after):
        for i, d in enumerate(die_after):
            made.append(Server(f"s{i}", d))
        return made

    yield make
    for s in made:
        s.close()


def _verdicts(db, rid):
    return {(a["item_id"], a["question"]): (a["verdict"], round(a["p_yes"], 9))
            for a in run_rows(db, rid, "answers")}


def _context(user: str) -> str:
    return user.rsplit("Question:", 1)[0] if "Question:" in user else user[:-60]


def test_spec_grammar_for_a_pool(tmp_path):
    spec = "openai-compat: http://a:8000/v1 , http://b:8001/v1#Qwen/Q#7B"
    parsed = parse_spec(spec.replace(": ", ":", 1))
    assert parsed.base_url == "http://a:8000/v1,http://b:8001/v1" and parsed.model == "Qwen/Q#7B"
    assert endpoint_urls(parsed.spec) == ["http://a:8000/v1", "http://b:8001/v1"]
    assert endpoint_spec(parsed.spec, "http://b:8001/v1") == "openai-compat:http://b:8001/v1#Qwen/Q#7B"
    for bad in ("openai-compat:http://a/v1,ftp://b#m", "openai-compat:http://a/v1,,#m",
                "openai-compat:http://a/v1,http://a/v1#m"):
        with pytest.raises(JudgeSpecError):
            parse_spec(bad)
    f = tmp_path / "pool.txt"
    f.write_text("# two servers\nhttp://a:8000/v1\n\nhttp://b:8001/v1\n")
    assert expand_pool_file(f"openai-compat:@{f}#m") == \
        "openai-compat:http://a:8000/v1,http://b:8001/v1#m"
    f.write_text("http://a:8000/v1\nsecret-looking text\n")
    with pytest.raises(JudgeSpecError, match=r"line 2: not an http") as e:
        expand_pool_file(f"openai-compat:@{f}#m")
    assert "secret-looking" not in str(e.value)


def test_each_item_goes_to_one_server_and_verdicts_equal_one_server(db, task, servers):
    a, b, single = servers(None, None, None)
    pool_spec = f"openai-compat:{a.url},{b.url}#m"
    judge = get_judge(pool_spec, db=db)
    assert isinstance(judge.inner, PoolJudge) and judge.capabilities.items_at_once == 2  # one item per server
    est = estimate_run(db, rid := create_run(db, task, pool_spec, "rocketeval"))
    run = execute_run(db_path(db), rid, judge=judge)
    assert run["status"] == "completed", run["error"]
    assert len(a.users) + len(b.users) == est.calls == 45  # 9 items x 5 questions
    assert a.users and b.users  # both servers worked
    # every item's questions reached one server only
    assert not {_context(u) for u in a.users} & {_context(u) for u in b.users}
    one = create_run(db, task, f"openai-compat:{single.url}#m", "rocketeval")
    assert execute_run(db_path(db), one)["status"] == "completed"
    assert _verdicts(db, rid) == _verdicts(db, one) and len(_verdicts(db, one)) == 45


def test_a_server_dying_mid_run_loses_nothing(db, task, servers):
    a, b, single = servers(None, 9, None)  # b drops its 9th request and goes away
    pool_spec = f"openai-compat:{a.url},{b.url}#m"
    judge = get_judge(pool_spec, db=db)
    rid = create_run(db, task, pool_spec, "rocketeval")
    run = execute_run(db_path(db), rid, judge=judge)
    assert run["status"] == "completed", run["error"]
    assert run["n_errors"] == 0 and run["n_answers"] == 45
    assert len(b.users) == 8 and judge.inner.resent >= 1
    # nothing answered was asked again: every prompt was answered exactly once overall
    answered = a.users + b.users
    assert len(answered) == len(set(answered)) == 45
    one = create_run(db, task, f"openai-compat:{single.url}#m", "rocketeval")
    execute_run(db_path(db), one)
    assert _verdicts(db, rid) == _verdicts(db, one) and len(_verdicts(db, one)) == 45
    assert get_run(db, rid)["status"] == "completed"


def test_every_server_down_is_a_judge_error_not_a_hang(db, task, servers):
    a, b = servers(1, 1)
    a.close(), b.close()
    judge = get_judge(f"openai-compat:{a.url},{b.url}#m", db=db, attempts=2)
    judge._sleep = lambda s: None
    rid = create_run(db, task, judge.spec, "rocketeval", limit=1)
    run = execute_run(db_path(db), rid, judge=judge)
    assert run["status"] == "failed"
    assert "every endpoint is down" in run["error"] or "connect" in run["error"]


def test_each_endpoint_gets_only_the_key_approved_for_it(monkeypatch, servers):
    a, b = servers(None, None)
    monkeypatch.setenv("CHECKEVAL_OPENAI_COMPAT_KEY", "k-123")
    host_a = a.url.rsplit("/v1", 1)[0]
    monkeypatch.setenv("CHECKEVAL_KEY_HOSTS", f"CHECKEVAL_OPENAI_COMPAT_KEY={host_a}")
    judge = get_judge(f"openai-compat:{a.url},{b.url}#m")
    keys = [e._key for e in judge.inner.endpoints]
    assert keys == ["k-123", "not-needed"]  # b is not approved: it gets no key
    monkeypatch.setenv("MY_KEY", "k-9")
    monkeypatch.setenv("CHECKEVAL_KEY_HOSTS", f"MY_KEY={host_a}")
    with pytest.raises(KeyRefused, match="not approved"):
        get_judge(f"openai-compat:{a.url},{b.url}#m", key_env="MY_KEY")


def test_cli_reads_a_pool_file(db, task, tmp_path, servers):
    from tests.helpers import cli

    a, b = servers(None, None)
    f = tmp_path / "servers.txt"
    f.write_text(f"{a.url}\n{b.url}\n")
    r = cli(db_path(db), "run", "--task", task, "--judge", f"openai-compat:@{f}#m",
            "--method", "rocketeval", "--limit", "4", "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    assert get_run(db, json.loads(r.stdout)["run"])["judge_spec"] == \
        f"openai-compat:{a.url},{b.url}#m"
    assert len(a.users) + len(b.users) == 20 and a.users and b.users
    r = cli(db_path(db), "run", "--task", task, "--judge", f"openai-compat:@{tmp_path}/no#m")
    assert r.returncode == 2 and "cannot be read" in r.stderr


def test_a_saved_pool_needs_its_key_source_approved_for_every_server(db, monkeypatch):
    from checkeval_core.judges.saved import add_judge
    from checkeval_core.runs.start import start_runs

    spec = "openai-compat:http://gpu1:8000/v1,http://gpu2:8000/v1#m"
    monkeypatch.setenv("LAB_KEY", "k")
    monkeypatch.setenv("CHECKEVAL_KEY_HOSTS", "LAB_KEY=http://gpu1:8000")
    with pytest.raises(KeyRefused, match="gpu2"):
        add_judge(db, spec, key_env="LAB_KEY")
    monkeypatch.setenv("CHECKEVAL_KEY_HOSTS", "LAB_KEY=http://gpu1:8000,http://gpu2:8000")
    assert add_judge(db, spec, key_env="LAB_KEY")
    judge = get_judge(spec, db=db)  # the saved key source, resolved per endpoint
    assert [e._key for e in judge.inner.endpoints] == ["k", "k"]
    monkeypatch.setenv("CHECKEVAL_KEY_HOSTS", "LAB_KEY=http://gpu1:8000")
    res = start_runs(db, "nope", [spec], ["rocketeval"])  # refused before anything starts
    assert res.started == [] and any("gpu2" in e for e in res.errors)


def test_the_pool_hands_the_items_in_turn_so_servers_work_side_by_side(db):
    """In request order every worker would wait on the first item's server; in turn, the
    requests in flight are of different items (different servers), each item's questions
    keeping their order."""
    from checkeval_core.judges.base import BinaryRequest

    judge = get_judge("openai-compat:http://127.0.0.1:9/v1,http://127.0.0.1:10/v1#m", db=db)
    reqs = [BinaryRequest("s", (f"item {i}",), f"q{k}?") for i in "abc" for k in range(3)]
    reqs.append(BinaryRequest("s", ("item a",), "q3?"))
    order = judge.inner.order(reqs)
    assert [reqs[i].context[0][-1] + reqs[i].question[1] for i in order] == \
        ["a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2", "a3"]
    assert sorted(order) == list(range(len(reqs)))
