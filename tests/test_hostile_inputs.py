"""Issue 34 §1, tried as a hostile visitor or a careless user would.

* The OpenAI client reads nothing from the server's environment: with canaries in
  ``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID``, ``OPENAI_CUSTOM_HEADERS`` (an ``Authorization``
  among them) … a listener on 127.0.0.1 named as the judge's address sees none of them; the
  request hook refuses any header the project did not set.
* *Ask one question* shows an error's status, never an internal service's body; the operator
  can restrict every judge's address (``CHECKEVAL_JUDGE_HOSTS``).
* A pool spec is bounded (endpoints, characters, ``@FILE`` bytes) and builds no client before
  its first request.
* A second judge that fails every request fails the run; its problems are found before the
  first judge is asked anything.
* Options that used to be stored broken, crash or hang are refused up front (exit 2).
"""

from __future__ import annotations

import json
import math
import re
import sys
import time
from collections.abc import Sequence

import pytest

from checkeval_core.judges.base import BinaryRequest, BinaryResult, Capabilities, GenerateResult
from checkeval_core.judges.keys import JUDGE_HOSTS_ENV, KEY_HOSTS_ENV, AddressRefused
from checkeval_core.judges.registry import get_judge, load_backend
from checkeval_core.judges.spec import (
    BACKENDS,
    MAX_POOL_ENDPOINTS,
    MAX_SPEC_CHARS,
    Backend,
    JudgeSpecError,
    parse_spec,
    register_backend,
)
from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.escalation.options import escalation_params
from checkeval_core.runs.judge_check import ask_judge
from checkeval_core.store import db_path as path_of
from checkeval_core.task_split import set_explicit_split
from tests.helpers import ScriptedServer, cli, make_runs_task

CANARIES = {
    "OPENAI_ORG_ID": "org-CANARY-1",
    "OPENAI_PROJECT_ID": "proj-CANARY-2",
    "OPENAI_CUSTOM_HEADERS": "Authorization: Bearer CANARY-3\nX-Canary: CANARY-4\n"
                             "X-Stainless-Arch: CANARY-5\nCookie: CANARY-6",
    "OPENAI_ADMIN_KEY": "admin-CANARY-7",
    "OPENAI_WEBHOOK_SECRET": "whsec-CANARY-8",
    "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    "OPENAI_API_KEY": "sk-CANARY-9",
}


@pytest.fixture
def env(monkeypatch, tmp_path):
    for k in ("CHECKEVAL_OPENAI_KEY", "CHECKEVAL_OPENAI_COMPAT_KEY", KEY_HOSTS_ENV,
              JUDGE_HOSTS_ENV, "CHECKEVAL_POOL_ITEMS"):
        monkeypatch.delenv(k, raising=False)
    for k, v in CANARIES.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("CHECKEVAL_CACHE_DIR", str(tmp_path / "cache"))
    return monkeypatch


def sent_canaries(server: ScriptedServer) -> list[str]:
    """Every canary (a value, or a header name it set) found in what ``server`` received."""
    found = []
    for r in server.requests:
        text = json.dumps(r["headers"]).lower()
        found += [v for v in ("canary", "org-", "proj-", "x-canary", "cookie")
                  if v in text]
    return found


def req() -> BinaryRequest:
    return BinaryRequest("Judge.", ("Text: fine.\n\nQuestion: ",), "Is it fine?")


# -- 1. the OpenAI client reads nothing from the environment ---------------------------------
def test_server_variables_never_reach_a_visitors_address(env, listener, db, db_path):
    r = ask_judge(db, listener.spec)  # the Judges page's Ask one question
    assert r["verdict"] == "yes", r
    assert len(listener.requests) == 1
    h = {k.lower(): v for k, v in listener.requests[0]["headers"].items()}
    assert h["authorization"] == "Bearer not-needed"  # not CANARY-3
    assert "openai-organization" not in h and "openai-project" not in h
    assert sent_canaries(listener) == []
    # the same from the command line
    r = cli(db_path, "judge", "test", "--judge", listener.spec, "--json")
    assert r.returncode == 0, r.stderr
    assert len(listener.requests) == 2 and sent_canaries(listener) == []


def test_the_approved_key_is_the_only_authorization(env, listener, db):
    env.setenv(KEY_HOSTS_ENV, f"MYKEY={listener.url}")
    env.setenv("MYKEY", "my-approved-key")
    j = get_judge(listener.spec, key_env="MYKEY", cache=False)
    assert j.binary([req()])[0].verdict == "yes"
    assert listener.auths() == {"Bearer my-approved-key"}
    assert sent_canaries(listener) == []


def test_a_pool_sends_no_server_variable_either(env, db):
    a, b = ScriptedServer(), ScriptedServer()
    try:
        j = get_judge(f"openai-compat:{a.url},{b.url}#m", cache=False)
        reqs = [BinaryRequest("Judge.", (f"Text {i}.\n\nQuestion: ",), "Is it fine?")
                for i in range(4)]
        assert [x.verdict for x in j.binary(reqs)] == ["yes"] * 4
        assert a.requests and b.requests
        assert sent_canaries(a) == sent_canaries(b) == []
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("headers,why", [
    ({"X-Leak": "v"}, "refused to send the header 'x-leak'"),
    ({"Authorization": "Bearer other"}, "Authorization header other than"),
    ({"OpenAI-Organization": "org-x"}, "refused to send the header"),
])
def test_the_request_hook_refuses_headers_the_project_did_not_set(env, listener, headers,
                                                                  why):
    """Defence in depth: whatever a future SDK adds to its client, the hook refuses a header
    the project did not set, and an Authorization that is not the resolved key."""
    j = load_backend(listener.spec)
    j.client._custom_headers = headers  # as an SDK reading another variable would
    r = j.binary([req()])[0]
    assert r.verdict == "invalid" and why in r.error, r.error
    assert listener.requests == []


# -- SSRF: the status only; the operator restricts judge addresses ----------------------------
def test_ask_one_question_shows_the_status_never_the_body(env, listener, db):
    listener.mode = "404"
    r = ask_judge(db, listener.spec)
    assert r["verdict"] == "invalid" and "HTTP 404" in r["error"]
    assert listener.body_secret not in json.dumps(r)
    listener.mode = "500"  # transient: its message is the retry's reason
    j = load_backend(listener.spec)
    with pytest.raises(Exception) as e:
        j.binary([req()])
    decision = j.should_retry(e.value)
    assert "server error 500" in decision.message
    assert listener.body_secret not in decision.message


def test_the_judges_page_shows_the_status_and_sends_no_server_variable(env, listener, db):
    """The web attempt: a visitor saves a judge at their own address (or an internal
    service's) and presses *Ask one question*."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    listener.mode = "404"
    app = str(Path(__file__).resolve().parent.parent / "app.py")
    at = AppTest.from_file(app, default_timeout=120).run()
    at.switch_page("app_pages/judges.py").run()
    at.selectbox(key="add_backend").select("openai-compat").run()
    at.text_input(key="add_base_url").input(listener.url).run()
    at.text_input(key="add_model").input("m").run()
    at.button(key="add_save").click().run()
    at.selectbox(key="test_spec").select(listener.spec).run()
    at.button(key="test_run").click().run()
    assert not at.exception
    shown = " ".join(e.value for e in at.error)
    assert "HTTP 404" in shown and listener.body_secret not in shown, shown
    assert len(listener.requests) == 1 and sent_canaries(listener) == []
    assert listener.auths() == {"Bearer not-needed"}


def test_the_operator_restricts_judge_addresses(env, listener, db, db_path, tmp_path):
    other = ScriptedServer()
    try:
        env.setenv(JUDGE_HOSTS_ENV, other.url)
        with pytest.raises(AddressRefused, match=JUDGE_HOSTS_ENV):
            ask_judge(db, listener.spec)
        assert ask_judge(db, other.spec)["verdict"] == "yes"  # the allowed address works
        # a run with it starts nothing (exit 2, the variable named)
        make_runs_task(db, tmp_path)
        r = cli(db_path, "run", "--task", "t", "--judge", listener.spec, "--quiet")
        assert r.returncode == 2 and JUDGE_HOSTS_ENV in r.stderr
        # the backend checks every request too, whoever built it
        j = load_backend(listener.spec, allowed_origins=(("http", "127.0.0.1", 1),))
        res = j.binary([req()])[0]
        assert res.verdict == "invalid" and JUDGE_HOSTS_ENV in res.error
        assert listener.requests == []
        env.setenv(JUDGE_HOSTS_ENV, "http://u:p@h")  # malformed: nothing is asked
        with pytest.raises(AddressRefused):
            ask_judge(db, other.spec)
    finally:
        other.close()


# -- pool specs are bounded and built lazily ----------------------------------------------------
def test_pool_spec_limits(env, tmp_path):
    urls = [f"http://10.0.{i // 250}.{i % 250}:8000/v1" for i in range(MAX_POOL_ENDPOINTS + 1)]
    with pytest.raises(JudgeSpecError, match=f"at most {MAX_POOL_ENDPOINTS}"):
        parse_spec(f"openai-compat:{','.join(urls)}#m")
    assert len(parse_spec(f"openai-compat:{','.join(urls[:-1])}#m").base_url.split(",")) == \
        MAX_POOL_ENDPOINTS
    with pytest.raises(JudgeSpecError, match="characters"):
        parse_spec("openai-compat:http://h/" + "x" * MAX_SPEC_CHARS + "#m")
    with pytest.raises(JudgeSpecError, match="command line only"):
        parse_spec("openai-compat:@servers.txt#m")  # a page never reads a file


def test_pool_file_is_read_bounded(env, tmp_path):
    from checkeval_core.judges.pool import expand_pool_file

    t0 = time.monotonic()
    with pytest.raises(JudgeSpecError, match="not a regular file"):
        expand_pool_file("openai-compat:@/dev/zero#m")
    big = tmp_path / "big.txt"
    big.write_text("# " + "x" * (2 << 20) + "\n")
    with pytest.raises(JudgeSpecError, match="bytes allowed"):
        expand_pool_file(f"openai-compat:@{big}#m")
    many = tmp_path / "many.txt"
    many.write_text("".join(f"http://h{i}:8000/v1\n" for i in range(MAX_POOL_ENDPOINTS + 1)))
    with pytest.raises(JudgeSpecError, match=f"line {MAX_POOL_ENDPOINTS + 1}"):
        expand_pool_file(f"openai-compat:@{many}#m")
    assert time.monotonic() - t0 < 5


def test_a_pool_builds_no_client_until_asked(env, db, monkeypatch):
    import openai

    from checkeval_core.runs.estimate import estimate_requests

    built = []
    real = openai.OpenAI
    monkeypatch.setattr(openai, "OpenAI", lambda *a, **k: built.append(1) or real(*a, **k))
    spec = "openai-compat:" + ",".join(f"http://10.1.0.{i}:8000/v1" for i in range(50)) + "#m"
    j = get_judge(spec, db=db)
    assert len(j.inner.endpoints) == 50 and j.inner.endpoints.built() == 0
    est = estimate_requests(spec, [("binary", [req()])], db=db)
    assert est.calls == 1 and built == []  # the estimate built no client either


# -- an escalation's second judge -------------------------------------------------------------
CALLS: dict[str, int] = {"sa": 0, "sfail": 0}


class UnsureA:
    """Every answer Yes at p(Yes) 0.55: unsure, so every answer goes to the second judge."""

    def __init__(self, parsed, **params) -> None:
        self.spec, self.params = parsed.spec, params
        self.capabilities = Capabilities(logprobs=True, local=True, model="unsure")

    def binary(self, requests: Sequence) -> list[BinaryResult]:
        CALLS["sa"] += len(requests)
        return [BinaryResult(verdict="yes", p_yes=0.55, raw="Yes", mode="logprob")
                for _ in requests]

    def generate(self, requests: Sequence) -> list[GenerateResult]:
        return [GenerateResult(text="") for _ in requests]


class FailingB(UnsureA):
    def binary(self, requests: Sequence) -> list[BinaryResult]:
        CALLS["sfail"] += len(requests)
        return [BinaryResult(verdict="invalid", error="HTTP 503") for _ in requests]


@pytest.fixture
def judges():
    register_backend(Backend("sa", UnsureA, title="test A"))
    register_backend(Backend("sfail", FailingB, title="test B"))
    CALLS.update(sa=0, sfail=0)
    yield
    BACKENDS.pop("sa", None)
    BACKENDS.pop("sfail", None)


def rows(labelled=("d0", "d1", "d2", "d3")):
    out = []
    for d in range(4):
        for s in (0, 1):
            row = {"id": f"d{d}-s{s}", "group_id": f"d{d}", "system_id": f"s{s}",
                   "source": f"Source {d}.", "output": f"Output {d} {s}."}
            if f"d{d}" in labelled:
                row["scores"] = {"quality": 4.0 if s == 0 else 2.0}
            out.append(row)
    return out


def test_a_second_judge_failing_every_request_fails_the_run(env, judges, db, db_path, tmp_path):
    make_runs_task(db, tmp_path, rows=rows())
    rid = create_run(db, "t", "sa", "rocketeval",
                     params=escalation_params("sfail", margin=0.3))
    run = execute_run(path_of(db), rid)
    assert CALLS["sfail"] > 0
    assert run["status"] == "failed", run["params"].get("escalation")
    assert "second judge (sfail) failed" in run["error"] and "max_error_share" in run["error"]
    esc = run["params"]["escalation"]
    assert esc["b_errors"]["failed"] == esc["b_errors"]["asked"] == CALLS["sfail"]
    r = cli(db_path, "run", "--task", "t", "--judge", "sa", "--escalate-to", "sfail",
            "--margin", "0.3", "--quiet")
    assert r.returncode == 1 and "second judge (sfail) failed" in r.stderr


def second_judge_cases(tmp_path):
    bad = tmp_path / "servers.txt"
    bad.write_text("http://10.0.0.1:8000/v1\nnot a url\n")
    return [
        (["--escalate-to", f"openai-compat:@{bad}#m", "--margin", "0.3"], "line 2", {}),
        (["--escalate-to", f"openai-compat:@{tmp_path / 'none.txt'}#m", "--margin", "0.3"],
         "none.txt", {}),
        (["--escalate-to", "openai:gpt-4o-mini", "--margin", "0.3"], "needs an API key",
         {"OPENAI_API_KEY": None}),
        (["--escalate-to", "vllm:Qwen/Qwen2.5-7B-Instruct", "--margin", "0.3"],
         "pip install -e '.[vllm]'", {}),
        (["--escalate-to", "openai-compat:http://10.0.0.1:8000/v1,http://10.0.0.2:8000/v1#m",
          "--margin", "0.3"], "CHECKEVAL_POOL_ITEMS", {"CHECKEVAL_POOL_ITEMS": "many"}),
        (["--escalate-to", "openai-compat:http://10.0.0.1:8000/v1#m", "--margin", "0.3"],
         JUDGE_HOSTS_ENV, {JUDGE_HOSTS_ENV: "http://10.9.9.9:1"}),
    ]


def test_second_judge_problems_are_found_before_any_judge_call(env, judges, db, db_path,
                                                                 tmp_path, monkeypatch):
    make_runs_task(db, tmp_path, rows=rows())
    set_explicit_split(db, "t", ["d2", "d3"])
    # vllm as absent, whatever this machine has: its case expects the install message
    monkeypatch.setitem(sys.modules, "vllm", None)
    for args, msg, extra in second_judge_cases(tmp_path):
        with monkeypatch.context() as m:
            for k, v in extra.items():
                m.delenv(k, raising=False) if v is None else m.setenv(k, v)
            if "OPENAI_API_KEY" in extra:
                m.delenv("CHECKEVAL_OPENAI_KEY", raising=False)
            r = cli(db_path, "run", "--task", "t", "--judge", "sa", *args, "--quiet")
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert msg in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert CALLS["sa"] == 0, args  # the first judge was asked nothing
    assert db.execute("SELECT COUNT(*) FROM run").fetchone()[0] == 0


def test_a_missing_quality_model_is_found_before_any_judge_call(env, judges, db, db_path,
                                                                 tmp_path, monkeypatch):
    from checkeval_core.judges import model_files

    make_runs_task(db, tmp_path, rows=rows())
    # llama-cpp-python is installed by the project's setup (the embedded judge): the check
    # reached is the larger model's files, not the package
    assert __import__("importlib.util").util.find_spec("llama_cpp") is not None
    absent = model_files.ModelPackage("absent", "absent.gguf", ("no_such_model_part1",),
                                      ("part01.bin",), None, 1, "pip install -e '.[quality]'")
    monkeypatch.setitem(model_files.VARIANTS, "quality", absent)
    monkeypatch.delenv(model_files.MODEL_ENV, raising=False)
    r = cli(db_path, "run", "--task", "t", "--judge", "sa", "--escalate-to", "embedded:quality",
            "--margin", "0.3", "--quiet")
    assert r.returncode == 2 and "not installed" in r.stderr and "[quality]" in r.stderr
    assert CALLS["sa"] == 0


def test_calibrating_with_one_labelled_dev_group_is_refused_up_front(env, judges, db, db_path,
                                                                    tmp_path):
    make_runs_task(db, tmp_path, rows=rows(labelled=("d0", "d2", "d3")))
    set_explicit_split(db, "t", ["d2", "d3"])  # dev d0, d1: only d0 has labels
    r = cli(db_path, "run", "--task", "t", "--judge", "sa", "--escalate-to", "sfail",
            "--target-agreement", "0.8", "--calibrate-judges", "--quiet")
    assert r.returncode == 2, r.stderr
    assert "--calibrate-judges" in r.stderr and "1 dev group with people's labels" in r.stderr
    assert "no dev unit has a human label" not in r.stderr
    assert CALLS["sa"] == CALLS["sfail"] == 0


# -- options stored broken, NaN in JSON ---------------------------------------------------------
@pytest.mark.parametrize("delta", ["nan", "-5", "0", "1", "inf"])
def test_delta_is_checked_with_a_margin_too(env, judges, db, db_path, tmp_path, delta):
    make_runs_task(db, tmp_path, rows=rows())
    r = cli(db_path, "run", "--task", "t", "--judge", "sa", "--escalate-to", "sfail",
            "--margin", "0.3", "--delta", delta, "--quiet")
    assert r.returncode == 2 and "--delta" in r.stderr, r.stderr
    assert db.execute("SELECT COUNT(*) FROM run").fetchone()[0] == 0 and CALLS["sa"] == 0


def test_run_json_prints_null_never_nan(env, judges, db, db_path, tmp_path, monkeypatch):
    from checkeval_core.runs.escalation import cascade

    make_runs_task(db, tmp_path, rows=rows())
    real = cascade.summary
    monkeypatch.setattr(cascade, "summary", lambda *a: {**real(*a), "heldout": {
        "n": 2, "agreement": math.nan, "coverage": 0.5, "agreement_a": math.nan}})
    monkeypatch.setattr(cascade, "b_error_problem", lambda *a: None, raising=False)
    r = cli(db_path, "run", "--task", "t", "--judge", "sa", "--escalate-to", "sfail",
            "--margin", "0.3", "--json", "--quiet")
    assert "NaN" not in r.stdout, r.stdout

    def refuse(x):
        raise AssertionError(f"{x} in JSON")

    out = json.loads(r.stdout, parse_constant=refuse)
    assert out["escalation"]["heldout"]["agreement"] is None


# -- tracebacks and unbounded options --------------------------------------------------------
def test_questions_refuses_runs_without_per_question_verdicts(env, db, db_path, tmp_path):
    make_runs_task(db, tmp_path, rows=rows())
    pending = create_run(db, "t", "fake", "rocketeval")
    for method in ("geval", "seal"):
        rid = create_run(db, "t", "fake", method)
        assert execute_run(path_of(db), rid)["status"] == "completed"
        r = cli(db_path, "questions", "--run", str(rid))
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert f"method {method} gives no verdict per checklist question" in r.stderr
    r = cli(db_path, "questions", "--run", str(pending))
    assert r.returncode == 2 and "is pending and has no answer yet" in r.stderr, r.stderr


@pytest.mark.parametrize("args,msg", [
    (["bench", "calibrate", "--labelled-docs", "1-1000000000"], "documents allowed"),
    (["bench", "calibrate", "--unlabelled-docs", "5,1-999999999"], "documents allowed"),
    (["bench", "calibrate", "--draws", "1000000000"], "--draws"),
    (["bench", "calibrate", "--labelled", "10,1000000000"], "--labelled"),
    (["bench", "scale", "--answers", "100000000000000000000"], "--answers"),
    (["bench", "scale", "--task-items", "1000000000"], "--task-items"),
    (["bench", "escalate", "--benchmark", "summeval", "--docs", "1000000000"], "--docs"),
    (["bench", "escalate", "--benchmark", "mtbench_pairs", "--queries", "1000000000"],
     "--queries"),
])
def test_bench_sizes_are_bounded_up_front(env, db_path, args, msg):
    t0 = time.monotonic()
    r = cli(db_path, *args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert msg in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert time.monotonic() - t0 < 10


def test_bench_pool_checks_its_output_before_the_work(env, tmp_path, monkeypatch, capsys):
    from checkeval_core.bench import pool

    def never(*a, **k):
        raise AssertionError("servers started before --out was checked")

    monkeypatch.setattr(pool, "start_servers", never)
    for out in (str(tmp_path / "no" / "such" / "dir" / "r.json"), str(tmp_path)):
        monkeypatch.setattr(sys, "argv", ["pool", "--out", out])
        with pytest.raises(SystemExit) as e:
            pool.main()
        assert e.value.code == 2
        assert re.search(r"--out .*(does not exist|is a folder)", capsys.readouterr().err)
