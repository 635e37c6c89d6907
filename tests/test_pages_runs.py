"""AppTest of the Run and Traces pages."""

from checkeval_core.runs import create_run, execute_run, get_run
from checkeval_core.runs.jobs import wait_for
from checkeval_core.store import db_path
from checkeval_core.textsafe import md_escape
from tests.conftest import open_app_page as open_page
from tests.helpers import load_demo_copy


def test_run_page_starts_background_run(db):
    load_demo_copy(db)
    at = open_page("app_pages/run.py")
    # the recommended configuration is preselected, with its reason
    from checkeval_core.runs.defaults import recommended
    rec = recommended(db, "summeval-demo", "summarization")
    assert at.multiselect(key="run_judges").value == rec["judges"]
    shown = md_escape(f"Preselected: {' + '.join(rec['judges'])} · rocketeval")  # user text
    assert any(c.value.startswith(shown) for c in at.caption)
    # widgets inside a form are committed by the submit: set them, click, then one run
    at.multiselect(key="run_judges").set_value([])
    at.text_input(key="run_extra").input("fake")
    at.number_input(key="run_limit").set_value(2)
    at.checkbox(key="run_include_definition").check()
    at.selectbox(key="run_aggregation").set_value("share_yes")
    at.button[0].click().run()  # the form's Start button
    assert not at.exception
    assert any("Started run(s) 1" in s.value for s in at.success)
    run = wait_for(db_path(db), 1, timeout=120)
    assert run["status"] == "completed" and run["n_answers"] == 2 * 122
    assert run["judge_spec"] == "fake"
    assert run["params"]["include_definition"] is True
    assert run["params"]["aggregation"] == "share_yes"
    assert "include_reference" not in run["params"]
    at.run()
    assert "completed" in list(at.dataframe[0].value["status"])
    # the run list shows the options the user chose (not the derived ones)
    assert list(at.dataframe[0].value["options"]) == \
        ['aggregation="share_yes", include_definition=true']


def test_traces_page_shows_answers_side_by_side(db):
    load_demo_copy(db)
    r1 = create_run(db, "summeval-demo", "fake", "rocketeval", limit=2)
    r2 = create_run(db, "summeval-demo", "fake", "checkeval", limit=2)
    for r in (r1, r2):
        execute_run(db_path(db), r)
    assert get_run(db, r2)["status"] == "completed"
    at = open_page("app_pages/traces.py")
    at.multiselect(key="tr_runs").set_value([r1, r2]).run()
    assert not at.exception
    decisions = next(d.value for d in at.dataframe if "sub-dimension" in d.value.columns)
    assert len(decisions) == 122 and {f"#{r1}", f"#{r2}"} <= set(decisions.columns)
    at.radio(key="tr_filter").set_value("judges disagree").run()
    assert not at.exception
    assert len(next(d.value for d in at.dataframe if "sub-dimension" in d.value.columns)) < 122


def test_run_page_bad_extra_spec_starts_nothing_and_lists_only_this_tasks_runs(db):
    from checkeval_core.runs import create_run, list_runs

    load_demo_copy(db)
    other = create_run(db, "topical-chat-demo", "fake", "rocketeval", limit=1)
    mine = create_run(db, "summeval-demo", "fake", "geval", limit=1)
    at = open_page("app_pages/run.py")
    at.selectbox(key="run_task").select("summeval-demo").run()
    # Cancel / Resume offer this task's runs only
    assert at.selectbox(key="run_pick_summeval-demo").options == [
        f"#{mine} · v1 · fake · geval · 1 item · pending"]  # the run's one label
    assert other != mine
    at.multiselect(key="run_judges").set_value(["fake"])
    at.text_input(key="run_extra").input("openai-compat:nohash")
    at.button[0].click().run()  # the form's Start button
    assert any(md_escape("openai-compat") in e.value for e in at.error)  # shown as text
    # the valid "fake" judge did not start either
    assert [r["id"] for r in list_runs(db, "summeval-demo")] == [mine]
