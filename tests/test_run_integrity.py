"""Runs that cannot lie (issue 13, items 8 and 13).

* A run whose share of judge errors (transport/HTTP failures) is above ``max_error_share``
  ends ``failed`` and ``checkeval run`` exits 1 (``--json`` keeps ``{"run","status",
  "n_answers"}``); resume asks the errored answers again (errors are never cached) and keeps
  unparsable answers, which are real answers.
* Bad run options are refused before anything is created: an unknown aggregation (with the
  list of valid ones), ``--limit`` 0 or negative, a threshold outside [0, 1].
"""

from __future__ import annotations

import json

import pytest

from checkeval_core.judges.base import BinaryResult
from checkeval_core.judges.cached import CachedJudge
from checkeval_core.judges.fake import FakeJudge
from checkeval_core.runs.jobs import (
    create_run,
    error_share,
    execute_run,
    get_run,
    prepare_resume,
)
from checkeval_core.store import open_db
from tests.helpers import ScriptedServer, cli, load_demo_copy


@pytest.fixture
def server():
    s = ScriptedServer()
    yield s
    s.close()


class Flaky(FakeJudge):
    """The fake judge, except: questions whose hash is 0 mod 3 fail (a transport error) and
    those whose hash is 1 mod 3 get an answer that is neither yes nor no (parse-invalid)."""

    def __init__(self, fail: bool = True) -> None:
        super().__init__()
        self.fail = fail
        self.asked: list[str] = []

    def binary(self, requests):
        out = []
        for r in requests:
            self.asked.append(r.question)
            h = sum(map(ord, r.question)) % 3
            if h == 0 and self.fail:
                self.calls += 1
                out.append(BinaryResult(verdict="invalid", error="APIConnectionError: refused"))
            elif h == 1:
                self.calls += 1
                out.append(BinaryResult(verdict="invalid", raw="Maybe", mode="text"))
            else:
                out.append(super().binary([r])[0])
        return out


def test_cli_all_errors_fails_exit_1_then_resume_reasks(server, db_path, monkeypatch):
    monkeypatch.delenv("CHECKEVAL_OPENAI_COMPAT_KEY", raising=False)
    assert cli(db_path, "demo").returncode == 0
    server.mode = "401"  # every request refused (a wrong key): not retried
    r = cli(db_path, "run", "--task", "topical-chat-demo", "--judge", server.spec, "--method",
            "rocketeval", "--limit", "1", "--json", "--quiet")
    assert r.returncode == 1, (r.stdout, r.stderr)  # old code: 0, "completed"
    out = json.loads(r.stdout)
    assert set(out) == {"run", "status", "n_answers"} and out["status"] == "failed"
    n = out["n_answers"]
    assert n > 50 and len(server.requests) == n
    assert "judge errors" in r.stderr and "max_error_share=0.5" in r.stderr
    d = open_db(db_path)
    assert d.execute("SELECT COUNT(*) FROM score WHERE run_id = ?", [out["run"]]).fetchone()[0] \
        == 0
    assert "judge errors" in get_run(d, out["run"])["error"]
    server.mode = "ok"  # the outage is over
    r = cli(db_path, "run", "--resume", str(out["run"]), "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"run": out["run"], "status": "completed", "n_answers": n}
    assert len(server.requests) == 2 * n  # every errored answer asked again
    assert error_share(d, out["run"]) == (0, n)
    assert d.execute("SELECT COUNT(*) FROM score WHERE run_id = ?", [out["run"]]).fetchone()[0]


def test_resume_reasks_errors_keeps_parse_invalid(db, db_path):
    load_demo_copy(db)
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=2,
                     params={"max_error_share": 0.2})
    run = execute_run(db_path, rid, judge=CachedJudge(Flaky(), db=db))
    assert run["status"] == "failed" and "max_error_share=0.2" in run["error"]
    n_err, n_all = error_share(db, rid)
    assert 0 < n_err < n_all
    invalid_before = {tuple(r) for r in db.execute(
        "SELECT id, item_id, question_id, raw FROM answer WHERE run_id = ? AND verdict = "
        "'invalid' AND error = ''", [rid])}
    assert invalid_before
    res = prepare_resume(db, rid)
    assert res == {"run": rid, "status": "pending", "reasked": n_err}
    again = Flaky(fail=False)
    run = execute_run(db_path, rid, judge=CachedJudge(again, db=db))
    assert run["status"] == "completed" and run["n_answers"] == n_all
    assert len(again.asked) == n_err  # only the errored ones reached the judge
    assert error_share(db, rid) == (0, n_all)
    assert invalid_before <= {tuple(r) for r in db.execute(
        "SELECT id, item_id, question_id, raw FROM answer WHERE run_id = ?", [rid])}
    assert prepare_resume(db, rid)["status"] == "completed"


def test_threshold_from_param_and_env(db, db_path, monkeypatch):
    load_demo_copy(db)
    # about a third of the answers are errors: under 0.5 (default) the run completes
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=1)
    assert execute_run(db_path, rid, judge=CachedJudge(Flaky(), db=None))["status"] == \
        "completed"
    monkeypatch.setenv("CHECKEVAL_MAX_ERROR_SHARE", "0.1")
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=1)
    assert execute_run(db_path, rid, judge=CachedJudge(Flaky(), db=None))["status"] == "failed"
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=1,
                     params={"max_error_share": 0.9})  # the run's param wins over the env
    assert execute_run(db_path, rid, judge=CachedJudge(Flaky(), db=None))["status"] == \
        "completed"


@pytest.mark.parametrize("args, needle", [
    (["--param", "aggregation=bogus"], "valid: mean_p_yes, share_yes, supervised"),
    (["--param", "aggregation=likert"], "valid: mean_p_yes"),
    (["--limit", "-1"], "positive number"),
    (["--limit", "0"], "positive number"),
    (["--param", "max_error_share=2"], "between 0 and 1"),
    (["--param", "max_error_share=nan"], "between 0 and 1"),
])
def test_bad_run_options_refused_nothing_created(db_path, args, needle):
    assert cli(db_path, "demo").returncode == 0
    r = cli(db_path, "run", "--task", "summeval-demo", "--judge", "fake", "--method",
            "rocketeval", *args, "--quiet")
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert needle in r.stderr
    d = open_db(db_path)
    assert d.execute("SELECT COUNT(*) FROM run").fetchone()[0] == 0
    assert d.execute("SELECT COUNT(*) FROM answer").fetchone()[0] == 0


def test_create_run_refuses_in_core(db):
    load_demo_copy(db)
    with pytest.raises(ValueError, match="valid: weighted, share_yes"):
        create_run(db, "summeval-demo", "fake", "seal", params={"aggregation": "mean"})
    with pytest.raises(ValueError, match="positive"):
        create_run(db, "summeval-demo", "fake", "rocketeval", limit=0)
    assert db.execute("SELECT COUNT(*) FROM run").fetchone()[0] == 0
    rid = create_run(db, "summeval-demo", "fake", "seal", limit=1,
                     params={"aggregation": "weighted_p_yes"})
    assert get_run(db, rid)["params"]["aggregation"] == "weighted_p_yes"


def test_run_page_resume_reasks_errors(db, db_path, tmp_path, monkeypatch):
    """The Run page's Resume goes through the same core step as ``--resume``: a run failed
    by judge errors is resumed in a worker and every errored answer is asked again."""
    from checkeval_core.runs.jobs import wait_for
    from tests.conftest import open_app_page

    monkeypatch.setenv("CHECKEVAL_CACHE_DIR", str(tmp_path / "cache"))
    load_demo_copy(db)
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=1,
                     params={"max_error_share": 0.2})
    assert execute_run(db_path, rid, judge=CachedJudge(Flaky(), db=db))["status"] == "failed"
    n_err, n_all = error_share(db, rid)
    assert n_err > 0
    at = open_app_page("app_pages/run.py")
    at.selectbox(key="run_task").select("summeval-demo").run()
    at.selectbox(key="run_pick_summeval-demo").select(rid)
    at.button(key="run_resume").click().run()
    assert not at.exception and not at.error
    assert any(f"{n_err} with a judge error asked again" in s.value for s in at.success)
    run = wait_for(db_path, rid, timeout=120)
    assert run["status"] == "completed" and error_share(db, rid) == (0, n_all)


def test_background_start_writes_its_pid_only_on_an_unfinished_run(db, db_path):
    """The page writes the worker's pid after starting it (so a worker killed before it
    starts shows as gone); a worker quicker than that write has already finished the run and
    cleared its pid, which the page's write must not put back."""
    from checkeval_core.runs.jobs import start_background, wait_for

    load_demo_copy(db)
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=1)
    pid = start_background(db_path, rid)
    assert get_run(db, rid)["pid"] in (pid, None)  # the worker may already have cleared it
    run = wait_for(db_path, rid, timeout=120)
    assert run["status"] == "completed" and run["pid"] is None
    start_background(db_path, rid)  # a second start (a Resume clicked twice): nothing to do
    assert get_run(db, rid)["pid"] is None and get_run(db, rid)["status"] == "completed"
