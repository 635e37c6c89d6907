"""Run pickers: one label per run, runs that cannot be compared with the selection marked and
listed with the reason, and a task switch that replaces the previous task's runs on screen."""

from __future__ import annotations

import json

from checkeval_core.runs import create_run, execute_run
from tests.conftest import open_app_page
from tests.helpers import fake_demo_runs


def _elsewhere(db, db_path, run_id: int, n: int) -> int:
    """A fake G-Eval run on ``n`` summeval items that run ``run_id`` did not cover."""
    items = json.loads(db.execute("SELECT item_ids FROM run WHERE id = ?",
                                  [run_id]).fetchone()[0])
    ids = [r[0] for r in db.execute(
        "SELECT item_id FROM item WHERE task_id = (SELECT task_id FROM run WHERE id = ?) AND id "
        "NOT IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT ?",
        [run_id, json.dumps(items), n])]
    rid = create_run(db, "summeval-demo", "fake", "geval", item_ids=ids)
    execute_run(db_path, rid)
    return rid


def test_analysis_task_switch_replaces_the_runs_on_screen(db, db_path):
    """The browser keeps a multiselect's chips unless the server sets its value: after a task
    switch the field showed the previous task's "#7, #3" while the charts were #8."""
    a, b = fake_demo_runs(db, 3)
    c = create_run(db, "topical-chat-demo", "fake", "rocketeval", limit=3)
    execute_run(db_path, c)
    at = open_app_page("app_pages/analysis.py")
    assert at.selectbox(key="an_task").value == "summeval-demo"
    assert sorted(at.multiselect(key="an_runs").value) == sorted([a, b])
    at.selectbox(key="an_task").set_value("topical-chat-demo").run()
    assert not at.exception, at.exception
    ms = at.multiselect(key="an_runs")
    assert ms.value == [c]
    assert ms.proto.set_value  # the browser is told to show [c], not the old chips
    assert ms.options == [f"#{c} · v1 · fake · rocketeval · 3 items"]
    at.selectbox(key="an_task").set_value("summeval-demo").run()
    ms = at.multiselect(key="an_runs")
    assert sorted(ms.value) == sorted([a, b]) and ms.proto.set_value


def test_analysis_marks_runs_sharing_no_item_and_says_why(db, db_path):
    a, b = fake_demo_runs(db, 4)
    far = _elsewhere(db, db_path, a, 2)
    at = open_app_page("app_pages/analysis.py")
    ms = at.multiselect(key="an_runs")
    assert sorted(ms.value) == sorted([a, b])
    marked = [o for o in ms.options if o.endswith("not comparable")]
    assert marked == [f"#{far} · v1 · fake · geval · 2 items — not comparable"]
    note = next(c.value.replace("\\", "") for c in at.caption
                if c.value.startswith("Not comparable"))
    assert f"#{far}" in note and "shares no item with the 4 item(s)" in note
    # chosen alone, nothing else is marked (any run can start a selection)
    at.multiselect(key="an_runs").set_value([far]).run()
    ms = at.multiselect(key="an_runs")
    assert [o for o in ms.options if "not comparable" in o] == [
        f"#{b} · v1 · fake · checkeval · 4 items — not comparable",
        f"#{a} · v1 · fake · rocketeval · 4 items — not comparable"]
    assert not at.exception, at.exception


def test_compare_marks_b_runs_sharing_no_item_with_a(db, db_path):
    a, b = fake_demo_runs(db, 4)
    far = _elsewhere(db, db_path, a, 2)
    at = open_app_page("app_pages/compare.py")
    opts = at.selectbox(key="cmp_b").options
    assert any(o.startswith(f"#{far} ") and o.endswith("not comparable") for o in opts)
    assert not any(o.startswith(f"#{a} ") and "not comparable" in o for o in opts)


def test_back_to_compare_keeps_its_runs_and_only_its_parameters(db, db_path):
    """Compare → Traces → Back: the browser returns to ``/compare?a=A&b=B`` after the widgets'
    state was dropped by the other page; the page reopens on A and B (not its defaults), and
    each page's URL carries only its own parameters."""
    a, b = fake_demo_runs(db, 4)
    c = create_run(db, "summeval-demo", "fake", "geval", limit=4)
    execute_run(db_path, c)
    at = open_app_page("app_pages/compare.py")
    default = (at.selectbox(key="cmp_a").value, at.selectbox(key="cmp_b").value)
    at.selectbox(key="cmp_a").set_value(a).run()
    at.selectbox(key="cmp_b").set_value(b).run()
    assert (a, b) != default and dict(at.query_params) == {"a": str(a), "b": str(b)}
    at.switch_page("app_pages/traces.py").run()
    assert not at.exception, at.exception
    assert set(at.query_params) == {"runs", "item", "dim"}  # Compare's a, b are gone
    # Back: the browser's URL is Compare's again, Traces' parameters still on the server side
    at.query_params["a"], at.query_params["b"] = str(a), str(b)
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert (at.selectbox(key="cmp_a").value, at.selectbox(key="cmp_b").value) == (a, b)
    assert dict(at.query_params) == {"a": str(a), "b": str(b)}
