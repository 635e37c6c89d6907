"""Cost estimates before a click: the estimated calls equal the calls the fake judge then
receives (every method, fresh and partly cached), the CLI's --estimate asks nothing and
writes nothing, prices and rates are read as documented, and a finished run stores its
estimate beside what it cost."""

import json

import pytest

from checkeval_core.judges.cached import CachedJudge
from checkeval_core.judges.fake import FakeJudge
from checkeval_core.judges.prices import PriceError, price_of
from checkeval_core.runs import create_run, execute_run, get_run
from checkeval_core.runs.estimate import (
    KEYS,
    estimate_new_run,
    estimate_requests,
    estimate_run,
    estimate_vs_actual,
    save_rate,
)
from checkeval_core.store import db_path
from tests.helpers import cli


def _execute_counting(db, rid):
    judge = CachedJudge(FakeJudge(), db=db)
    run = execute_run(db_path(db), rid, judge=judge)
    assert run["status"] == "completed", run["error"]
    return judge.inner.calls


@pytest.mark.parametrize("method", ["rocketeval", "checkeval", "geval", "seal"])
def test_estimated_calls_equal_the_calls_the_judge_receives(db, task, method):
    est = estimate_new_run(db, task, "fake", method, limit=4)
    assert est.calls > 0 and est.cached == 0
    rid = create_run(db, task, "fake", method, limit=4)
    assert _execute_counting(db, rid) == est.calls
    # the same run again: everything is in the response cache now
    again = estimate_new_run(db, task, "fake", method, limit=4)
    assert again.calls == 0 and again.cached == est.cached + est.calls


def test_partly_cached_and_the_rest_of_a_run(db, task):
    create = create_run(db, task, "fake", "rocketeval", limit=2)
    _execute_counting(db, create)
    est = estimate_new_run(db, task, "fake", "rocketeval", limit=5)
    n2 = estimate_new_run(db, task, "fake", "rocketeval", limit=2).cached
    assert est.cached == n2 and est.calls > 0
    rid = create_run(db, task, "fake", "rocketeval", limit=5)
    assert estimate_run(db, rid).calls == est.calls
    assert _execute_counting(db, rid) == est.calls
    assert estimate_run(db, rid).calls == 0  # every answer stored: nothing left to ask


def test_a_repeated_prompt_is_one_call():
    from checkeval_core.judges.base import BinaryRequest

    r = BinaryRequest("s", ("ctx",), "q?")
    est = estimate_requests(FakeJudge(), [("binary", [r]), ("binary", [r, r])])
    assert est.calls == 1 and est.cached == 2


def test_run_stores_estimate_beside_actual(db, task):
    rid = create_run(db, task, "fake", "checkeval", limit=3)
    judge = CachedJudge(FakeJudge(), db=db)
    execute_run(db_path(db), rid, judge=judge)
    run = get_run(db, rid)
    est, act = json.loads(run["estimate"]), json.loads(run["actual"])
    assert set(KEYS) <= set(est) and est["calls"] == act["calls"] == judge.inner.calls
    assert act["executions"] == 1 and act["seconds"] >= 0
    rows = {r["figure"]: r for r in estimate_vs_actual(run)}
    assert rows["calls"]["actual / estimate"] == 1.0
    # a local judge costs nothing; no rate measured here: time unknown, with the reason
    assert est["usd"] == 0 and est["seconds"] is None
    assert any("bench rate" in n for n in est["notes"])


def test_cli_estimate_json_asks_nothing_and_writes_nothing(db, task, tmp_path):
    log = tmp_path / "calls.log"
    n_runs = db.execute("SELECT COUNT(*) FROM run").fetchone()[0]
    r = cli(db_path(db), "run", "--task", task, "--judge", "fake", "--method", "rocketeval",
            "--limit", "3", "--estimate", "--json", env={"CHECKEVAL_FAKE_LOG": str(log)})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert list(out) == list(KEYS)
    assert not log.exists()  # the judge was asked nothing
    assert db.execute("SELECT COUNT(*) FROM run").fetchone()[0] == n_runs
    r2 = cli(db_path(db), "run", "--task", task, "--judge", "fake", "--method", "rocketeval",
             "--limit", "3", "--json", env={"CHECKEVAL_FAKE_LOG": str(log)})
    assert r2.returncode == 0, r2.stderr
    assert len(log.read_text().splitlines()) == out["calls"]


def test_cli_estimate_refuses_bad_input_before_anything(db, task):
    r = cli(db_path(db), "run", "--task", task, "--judge", "nope:x", "--estimate", "--json")
    assert r.returncode == 2 and "unknown judge" in r.stderr
    r = cli(db_path(db), "run", "--task", task, "--judge", "fake", "--limit", "0",
            "--estimate")
    assert r.returncode == 2 and "--limit" in r.stderr
    r = cli(db_path(db), "run", "--task", task, "--judge", "openai-compat:http://x/v1#m",
            "--estimate", "--json", env={"CHECKEVAL_PRICES": "{bad"})
    assert r.returncode == 2 and "CHECKEVAL_PRICES" in r.stderr


def test_prices_both_forms_and_by_spec(monkeypatch):
    monkeypatch.setenv("CHECKEVAL_PRICES", json.dumps(
        {"openai:gpt-4o-mini": {"input": 1.0, "output": 2.0}, "m2": [0.5, 0.25]}))
    assert price_of("openai:gpt-4o-mini", "gpt-4o-mini", local=False) == (1.0, 2.0)
    assert price_of("openai-compat:http://h/v1#gpt-4o-mini", "gpt-4o-mini", False) == \
        (0.15, 0.60)  # the built-in price of the model name
    assert price_of("openai-compat:http://h/v1#m2", "m2", False) == (0.5, 0.25)
    assert price_of("x", "unknown-model", False) is None
    assert price_of("embedded", "q.gguf", True) == (0.0, 0.0)
    monkeypatch.setenv("CHECKEVAL_PRICES", json.dumps({"m": {"input": 1}}))
    with pytest.raises(PriceError, match="'m'"):
        price_of("x", "m", False)


def test_money_and_time_from_price_and_rate(db, task, monkeypatch, tmp_path):
    monkeypatch.setenv("CHECKEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CHECKEVAL_PRICES", json.dumps({"fake": {"input": 2.0,
                                                                "output": 4.0}}))
    save_rate("fake", {"per_call": 0.5, "per_prompt_token": 0.001,
                       "per_completion_token": 0.01, "source": "test", "measured_at": "x"})
    from checkeval_core.judges import fake as fake_mod

    class Remote(fake_mod.FakeJudge):  # the fake judge, priced as if it were remote
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.capabilities = type(self.capabilities)(logprobs=True, local=False,
                                                        model="fake")

    monkeypatch.setattr(fake_mod, "FakeJudge", Remote)
    est = estimate_new_run(db, task, "fake", "rocketeval", limit=2)
    assert est.seconds == pytest.approx(est.calls * 0.5 + est.prompt_tokens * 0.001
                                        + est.completion_tokens * 0.01)
    assert est.usd == pytest.approx((est.prompt_tokens * 2 + est.completion_tokens * 4) / 1e6)
    assert any("≈ characters / 4" in n for n in est.notes)


@pytest.mark.slow
@pytest.mark.embedded
def test_embedded_estimate_counts_the_tokens_it_evaluates(db, task):
    """With the embedded judge's own tokenizer, the estimated calls and prompt tokens after
    prefix reuse equal what the run then evaluates."""
    for method in ("rocketeval", "geval"):
        est = estimate_new_run(db, task, "embedded", method, limit=2)
        rid = create_run(db, task, "embedded", method, limit=2)
        run = execute_run(db_path(db), rid)
        act = json.loads(run["actual"])
        assert run["status"] == "completed"
        assert (act["calls"], act["prompt_tokens"]) == (est.calls, est.prompt_tokens)


def test_run_page_shows_the_cost_before_start_and_beside_the_run(db, task, launched):
    from tests.conftest import run_page

    started = launched
    at = run_page(task, "fake", ["rocketeval"])
    at.number_input(key="run_limit").set_value(2).run()
    want = estimate_new_run(db, task, "fake", "rocketeval", limit=2)
    assert not at.exception
    assert any(f"{want.calls} judge calls (0 already cached)" in i.value for i in at.info)
    at.text_input(key="run_extra").input("nope:x").run()
    assert any("Cost unknown" in i.value and "unknown judge" in i.value for i in at.info)
    at.text_input(key="run_extra").input("fake").run()
    at.button(key="run_start").click().run()
    execute_run(db_path(db), started[0])
    at.run()
    frames = [f.value for f in at.dataframe if "figure" in f.value.columns]
    assert frames and list(frames[0]["figure"]) == list(KEYS)
    table = frames[0].set_index("figure")
    assert str(table.loc["calls", "estimate"]) == str(want.calls)
    assert int(table.loc["calls", "actual"]) == want.calls
    # no rate here yet: the time estimate is a dash (its reason on hover), never "None"
    assert table.loc["seconds", "estimate"] == "—"
    assert not table.astype(str).isin(["None", "nan"]).any().any()


@pytest.mark.parametrize("mode", ["list", "single"])
def test_generate_and_filter_estimates_ask_nothing_write_nothing_and_count_right(db, mode):
    from checkeval_core.checklists.augment import augment
    from checkeval_core.checklists.editing import questions
    from checkeval_core.checklists.filtering import filter_dimension
    from checkeval_core.runs.estimate import estimate_filter, estimate_generate
    from tests.helpers import load_demo_copy

    load_demo_copy(db)
    before = questions(db, "summeval-demo")
    est = estimate_generate(db, "summeval-demo", "coherence", "diversify", "fake", n=3,
                            mode=mode)
    assert questions(db, "summeval-demo") == before  # nothing written
    judge = CachedJudge(FakeJudge(), db=db)
    augment(db, "summeval-demo", "coherence", "diversify", "fake", n=3, judge_obj=judge,
            mode=mode)
    assert est.calls == judge.inner.calls > 0
    assert estimate_generate(db, "summeval-demo", "coherence", "diversify", "fake", n=3,
                             mode=mode).calls == 0  # asked again: the cache answers
    fmode = "json" if mode == "list" else "binary"
    pre = [(q["status"], q["filter_verdict"]) for q in questions(db, "summeval-demo")]
    f_est = estimate_filter(db, "summeval-demo", "coherence", "fake", mode=fmode)
    assert [(q["status"], q["filter_verdict"]) for q in questions(db, "summeval-demo")] == pre
    fj = CachedJudge(FakeJudge(), db=db)
    filter_dimension(db, "summeval-demo", "coherence", "fake", judge_obj=fj, mode=fmode)
    assert f_est.calls == fj.inner.calls > 0
    with pytest.raises(ValueError, match="no dimension"):
        estimate_filter(db, "summeval-demo", "nope", "fake")


def test_dimensions_page_shows_the_generate_cost(db):
    from tests.conftest import open_app_page
    from tests.helpers import load_demo_copy

    load_demo_copy(db)
    at = open_app_page("app_pages/dimensions.py")
    at.text_input(key="gen_judge").input("fake").run()
    assert not at.exception
    from checkeval_core.runs.estimate import estimate_generate

    want = estimate_generate(db, "summeval-demo", "coherence", "diversify", "fake", n=4)
    lines = [c.value for c in at.caption if c.value.startswith("**Generate**")]
    assert lines and f"{want.calls} judge calls" in lines[0]


def test_a_features_writes_during_an_estimate_are_rolled_back(db, task):
    from checkeval_core.runs.estimate import estimate_calls
    from checkeval_core.store import transaction

    def work(judge):
        with transaction(db):  # the feature's own transaction joins the estimate's savepoint
            db.execute("UPDATE task SET name = 'renamed'")
        db.execute("DELETE FROM item")

    n = db.execute("SELECT COUNT(*) FROM item").fetchone()[0]
    estimate_calls(FakeJudge(), work, db)
    assert db.execute("SELECT name FROM task").fetchone()[0] == task
    assert db.execute("SELECT COUNT(*) FROM item").fetchone()[0] == n > 0


def test_bench_quality_estimate_asks_nothing_and_counts_what_it_then_asks(tmp_path):
    from tests.helpers import bench_folder_from_demo, run_cli

    src = bench_folder_from_demo(tmp_path)
    log = tmp_path / "calls.log"
    args = ["bench", "quality", "--benchmark", "summeval", "--data", str(src), "--judge", "fake",
            "--method", "rocketeval", "--docs", "1", "--db", str(tmp_path / "b.db"), "--json"]
    est = run_cli([*args, "--estimate"], env={"CHECKEVAL_FAKE_LOG": str(log)})
    assert est.returncode == 0, est.stderr
    out = json.loads(est.stdout)
    assert out["calls"] > 0 and not log.exists()
    r = run_cli(args, env={"CHECKEVAL_FAKE_LOG": str(log)})
    assert r.returncode == 0, r.stderr
    assert len(log.read_text().splitlines()) == out["calls"]
    again = json.loads(run_cli([*args, "--estimate"]).stdout)
    assert again["calls"] == 0  # the finished run is reused: nothing left to ask
    # checklists a judge writes first cannot be counted before they exist: refused, saying so
    from tests.helpers import bench_source

    bad = run_cli(["bench", "quality", "--benchmark", "mtbench_pairs", "--data",
                   str(bench_source()), "--judge", "fake", "--checklist", "generated",
                   "--checklist-judge", "fake", "--queries", "4", "--db",
                   str(tmp_path / "g.db"), "--estimate"], env={"CHECKEVAL_FAKE_LOG": str(log)})
    assert bad.returncode == 2 and "--estimate" in bad.stderr and "written by" in bad.stderr


def test_a_priced_api_judge_is_estimated_without_a_key(db, task, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("CHECKEVAL_OPENAI_KEY", raising=False)
    est = estimate_new_run(db, task, "openai:gpt-4o-mini", "rocketeval", limit=2)
    assert est.calls == 10 and est.usd == pytest.approx(
        (est.prompt_tokens * 0.15 + est.completion_tokens * 0.60) / 1e6)
    assert est.seconds is None and any("no measured rate" in n for n in est.notes)


def test_a_tokenizer_that_cannot_load_falls_back_to_characters(db, task, monkeypatch):
    from checkeval_core.judges import fake as fake_mod

    def broken(self, req):
        raise RuntimeError("the model's packages are not installed")

    monkeypatch.setattr(fake_mod.FakeJudge, "prompt_segments", broken, raising=False)
    est = estimate_new_run(db, task, "fake", "rocketeval", limit=1)
    assert est.calls == 5 and est.prompt_tokens > 0
    assert any("tokenizer cannot be loaded" in n for n in est.notes)
    assert any("≈ characters / 4" in n for n in est.notes)


def test_time_comes_from_the_runs_of_the_judge_already_done(db, task, monkeypatch, tmp_path):
    """No `bench rate` measured: after one run of the judge on this store, Run's and
    Generate's estimates give a time at that run's rate, and say where it comes from."""
    from checkeval_core.runs.estimate import estimate_generate, rate_from_runs
    from checkeval_core.store import transaction

    monkeypatch.setenv("CHECKEVAL_CACHE_DIR", str(tmp_path / "cache"))  # no measured rate
    assert estimate_new_run(db, task, "fake", "rocketeval", limit=4).seconds is None
    assert rate_from_runs(db, "fake") is None
    rid = create_run(db, task, "fake", "rocketeval", limit=2)
    _execute_counting(db, rid)
    act = json.loads(get_run(db, rid)["actual"])
    # a known duration, so the time can be checked (a fake run takes milliseconds)
    with transaction(db):
        db.execute("UPDATE run SET actual = ? WHERE id = ?",
                   [json.dumps({**act, "seconds": 20.0}), rid])
    rate = rate_from_runs(db, "fake")
    assert rate["runs"] == 1 and rate["calls"] == act["calls"]
    est = estimate_new_run(db, task, "fake", "rocketeval", limit=4)
    assert est.calls > 0 and est.seconds is not None and est.seconds > 0
    toks = act["prompt_tokens"] + act["completion_tokens"]
    want = (est.prompt_tokens + est.completion_tokens) * 20.0 / toks if toks \
        else est.calls * 20.0 / act["calls"]
    assert est.seconds == pytest.approx(want)
    assert any("1 earlier run(s) of this judge here" in n for n in est.notes)
    assert "time unknown" not in est.text()
    gen = estimate_generate(db, task, "coherence", "diversify", "fake", n=2)
    assert gen.calls == 0 or gen.seconds is not None
    # another judge has no run here: still unknown, and the note says how to get a time
    other = estimate_new_run(db, task, "openai:gpt-4o-mini", "rocketeval", limit=2)
    assert other.seconds is None and any("run a few items first" in n for n in other.notes)
