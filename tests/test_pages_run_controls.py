"""The Run page's controls: Enter never starts a run, a started run shows at once, Cancel and
Resume only where they apply, a duration per run; and the CLI's batch of runs."""

import json
from datetime import UTC, datetime

import pytest
from typer.testing import CliRunner

from checkeval_core.runs import create_run, execute_run, get_run, list_runs
from checkeval_core.runs.progress import actions, duration_text
from checkeval_core.store import db_path
from tests.conftest import run_page


def page(task):
    return run_page(task)


def test_enter_in_items_does_not_start_a_run(db, chat, launched):
    at = page(chat)
    # outside a form, Enter in a field only commits its value (in a form it submits it)
    for w in (at.number_input(key="run_limit"), at.text_input(key="run_extra"),
              at.multiselect(key="run_methods")):
        assert w.proto.form_id == "", w.key
    at.multiselect(key="run_judges").set_value([]).run()
    at.text_input(key="run_extra").input("fake").run()
    at.number_input(key="run_limit").set_value(2).run()
    assert not at.exception
    assert list_runs(db, chat) == [] and launched == []
    at.button(key="run_start").click().run()
    assert [r["id"] for r in list_runs(db, chat)] == launched and len(launched) == 1


def test_prompt_wording_option_starts_a_run_with_another_phrasing(db, chat, launched):
    at = page(chat)
    at.multiselect(key="run_judges").set_value([])
    at.text_input(key="run_extra").input("fake")
    at.multiselect(key="run_methods").set_value(["rocketeval"])
    at.number_input(key="run_phrasing").set_value(2)
    at.button(key="run_start").click().run()
    assert not at.exception and len(launched) == 1
    assert get_run(db, launched[0])["params"]["phrasing"] == 2


def test_a_started_run_shows_in_the_list_and_picker_at_once(db, chat, launched):
    old = create_run(db, chat, "fake", "rocketeval", limit=1)
    execute_run(db_path(db), old)
    at = page(chat)
    assert at.selectbox(key=f"run_pick_{chat}").value == old
    at.multiselect(key="run_judges").set_value([])
    at.text_input(key="run_extra").input("fake")
    at.multiselect(key="run_methods").set_value(["checkeval"])
    at.button(key="run_start").click().run()
    assert not at.exception and len(launched) == 1
    new = launched[0]
    assert at.selectbox(key=f"run_pick_{chat}").value == new  # no reload needed
    table = at.dataframe[0].value
    assert list(table["run"]) == [new, old]
    assert list(table["status"]) == ["pending", "completed"]


def test_cancel_and_resume_only_where_they_apply(db, chat, launched):
    done = create_run(db, chat, "fake", "rocketeval", limit=1)
    execute_run(db_path(db), done)
    cancelled = create_run(db, chat, "fake", "checkeval", limit=1)
    db.execute("UPDATE run SET status = 'cancelled' WHERE id = ?", [cancelled])
    at = page(chat)
    pick = f"run_pick_{chat}"
    at.selectbox(key=pick).select(done).run()
    assert at.button(key="run_cancel").disabled and at.button(key="run_resume").disabled
    at.selectbox(key=pick).select(cancelled).run()
    assert at.button(key="run_cancel").disabled and not at.button(key="run_resume").disabled
    at.button(key="run_resume").click().run()
    assert not at.exception and launched == [cancelled]
    # a pending run without a live worker (killed before it began) can be cancelled or resumed
    assert actions({"status": "pending", "alive": False}) == {"cancel": True, "resume": True}
    assert actions({"status": "running", "alive": True}) == {"cancel": True, "resume": False}
    assert actions({"status": "failed", "alive": False}) == {"cancel": False, "resume": True}


def test_run_list_has_a_duration_column(db, chat):
    rid = create_run(db, chat, "fake", "rocketeval", limit=1)
    execute_run(db_path(db), rid)
    db.execute("UPDATE run SET started_at = '2026-01-01T00:00:00+00:00', "
               "finished_at = '2026-01-01T00:02:05+00:00' WHERE id = ?", [rid])
    create_run(db, chat, "fake", "checkeval", limit=1)  # pending, never started
    at = page(chat)
    assert list(at.dataframe[0].value["duration"]) == ["not started", "2 min 05 s"]
    now = datetime(2026, 1, 1, 0, 0, 42, tzinfo=UTC)
    running = {"status": "running", "started_at": "2026-01-01T00:00:00+00:00"}
    assert duration_text(running, now) == "42 s so far"
    assert duration_text({"status": "completed", "started_at": "2026-01-01T00:00:00+00:00",
                          "finished_at": "2026-01-01T03:04:00+00:00"}) == "3 h 04 min"


def test_cli_runs_every_judge_and_method_or_none(db, chat):
    from checkeval_core.cli import app

    r = CliRunner().invoke(app, ["run", "--task", chat, "--judge", "fake", "--method",
                                 "rocketeval", "--method", "checkeval", "--limit", "2",
                                 "--json", "--quiet"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert [o["status"] for o in out] == ["completed", "completed"]
    assert [x["method"] for x in list_runs(db, chat)] == ["checkeval", "rocketeval"]
    # one run: the same single object as before
    r = CliRunner().invoke(app, ["run", "--task", chat, "--judge", "fake", "--limit", "1",
                                 "--json", "--quiet"])
    assert r.exit_code == 0 and set(json.loads(r.stdout.strip().splitlines()[-1])) == \
        {"run", "status", "n_answers"}
    # a bad pair refuses the whole batch: nothing created
    n = len(list_runs(db, chat))
    r = CliRunner().invoke(app, ["run", "--task", chat, "--judge", "fake", "--method",
                                 "rocketeval", "--method", "tick", "--json"])
    assert r.exit_code == 2 and "Unknown method 'tick'" in r.output
    r = CliRunner().invoke(app, ["run", "--task", chat, "--judge", "fake", "--judge",
                                 "openai-compat:nohash", "--json"])
    assert r.exit_code == 2 and "openai-compat" in r.output
    r = CliRunner().invoke(app, ["run", "--task", chat, "--judge", "fake", "--method", "seal",
                                 "--method", "rocketeval", "--param", "aggregation=weighted"])
    assert r.exit_code == 2 and "aggregation" in r.output
    assert len(list_runs(db, chat)) == n


def test_a_cancelled_run_whose_worker_still_computes_says_cancelling(db, chat):
    import subprocess
    import sys

    from checkeval_core.cli import app
    from checkeval_core.runs import cancel_run
    from checkeval_core.runs.jobs import RunBusy, prepare_resume
    from checkeval_core.runs.progress import panel

    rid = create_run(db, chat, "fake", "checkeval", limit=1)
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:  # a live worker in the middle of an item, then Cancel
        db.execute("UPDATE run SET status = 'running', pid = ?, started_at = ? WHERE id = ?",
                   [worker.pid, "2026-01-01T00:00:00+00:00", rid])
        cancel_run(db, rid)
        view = panel(db, chat)
        assert view["table"][0]["status"] == "cancelling…"
        assert "cancelling…" in view["recent"][0] and "current item" in view["recent"][0]
        assert view["runs"][0]["actions"] == {"cancel": False, "resume": False}
        with pytest.raises(RunBusy):  # a second worker would run beside the first
            prepare_resume(db, rid)
        at = page(chat)
        assert list(at.dataframe[0].value["status"]) == ["cancelling…"]
        assert at.button(key="run_resume").disabled
        # the CLI says the same: the stored status stays "cancelled" in the JSON, with
        # "stopping" beside it, and the table reads "cancelling…"
        (row,) = json.loads(CliRunner().invoke(app, ["runs", "--task", chat, "--json"]).output)
        assert (row["status"], row["stopping"]) == ("cancelled", True)
        assert "\tcancelling…\t" in CliRunner().invoke(app, ["runs", "--task", chat]).output
    finally:
        worker.kill()
        worker.wait()
    # the worker stopped between items: it wrote finished_at and cleared pid
    db.execute("UPDATE run SET finished_at = ?, pid = NULL WHERE id = ?",
               ["2026-01-01T00:01:00+00:00", rid])
    view = panel(db, chat)
    assert view["table"][0]["status"] == "cancelled"
    assert view["runs"][0]["actions"]["resume"]
    (row,) = json.loads(CliRunner().invoke(app, ["runs", "--task", chat, "--json"]).output)
    assert (row["status"], row["stopping"]) == ("cancelled", False)


def test_duration_does_not_count_the_time_a_run_sat_cancelled(db, chat):
    from checkeval_core.runs.jobs import prepare_resume
    from checkeval_core.runs.progress import run_duration

    rid = create_run(db, chat, "fake", "rocketeval", limit=2)
    # worked 60 s, cancelled at 00:01:00, resumed a day later
    db.execute("UPDATE run SET status = 'cancelled', started_at = ?, progress_at = ?, "
               "finished_at = ? WHERE id = ?", ["2026-01-01T00:00:00+00:00",
                                                "2026-01-01T00:00:30+00:00",
                                                "2026-01-01T00:01:00+00:00", rid])
    prepare_resume(db, rid)
    run = get_run(db, rid)
    resumed = datetime.fromisoformat(run["started_at"])
    assert resumed.date() >= datetime.now(UTC).date()  # moved forward by the pause
    # 60 s of work before the pause: the duration at the resume is 60 s, not a day
    now = resumed.replace(microsecond=0) + (datetime.fromisoformat(
        "2026-01-01T00:01:00+00:00") - datetime.fromisoformat("2026-01-01T00:00:00+00:00"))
    d = run_duration({**run, "finished_at": None}, now)
    assert 59 <= d <= 61, d
    # the last progress moved with it (the ETA measures start → last progress)
    gap = datetime.fromisoformat(run["progress_at"]) - resumed
    assert gap.total_seconds() == pytest.approx(30, abs=0.01)
    execute_run(db_path(db), rid)
    done = get_run(db, rid)
    assert done["status"] == "completed" and run_duration(done) < 3600
