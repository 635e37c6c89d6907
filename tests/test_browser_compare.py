"""Browser, 1440×900: the Compare runs page opens on two runs with the largest regression as
its first row, and its link opens both runs' traces on that item."""

from __future__ import annotations

import pytest

from checkeval_core.analysis.compare import compare_runs
from checkeval_core.demo import load_demo
from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import open_db
from tests.helpers import fake_demo_runs, open_both_traces


@pytest.mark.browser
def test_compare_first_row_and_both_traces(app_server, screen):
    db = open_db(app_server.db_path)
    runs = fake_demo_runs(db, 32)  # rocketeval, checkeval
    first = compare_runs(db, runs[0], runs[1], n_boot=0)["items"][0]
    db.close()
    screen.goto(f"{app_server.url}/compare?a={runs[0]}&b={runs[1]}")
    screen.get_by_text("Items, largest regression first").wait_for()
    screen.locator('[role="columnheader"]', has_text="regression").first.wait_for(
        state="attached")
    screen.wait_for_timeout(1500)
    screen.screenshot(path="/tmp/g-compare-1440.png")
    screen.get_by_text("Decisions that flipped").scroll_into_view_if_needed()
    screen.wait_for_timeout(800)
    screen.screenshot(path="/tmp/g-compare-flips-1440.png")
    open_both_traces(screen, first, runs[0], runs[1])
    assert f"item={first['item_pk']}" in screen.url


@pytest.mark.browser
def test_health_warnings_above_the_charts(app_server, screen):
    db = open_db(app_server.db_path)
    load_demo(db)
    # 96 items are 6 documents: the small-sample minimum a health warning needs
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=96)
    execute_run(app_server.db_path, rid)
    db.close()
    # the fake judge answers No to 97 % of the questions: both pages say so above the charts
    screen.goto(f"{app_server.url}/analysis")
    box = screen.get_by_text("Judge health").first
    box.wait_for()
    screen.locator(".js-plotly-plot").first.wait_for()
    screen.wait_for_timeout(1000)
    screen.screenshot(path="/tmp/g-analysis-health-1440.png")
    assert "says No to 97%" in screen.locator('[data-testid="stAlert"]').filter(
        has_text="Judge health").first.inner_text()
    chart = screen.locator(".js-plotly-plot").first.bounding_box()
    assert box.bounding_box()["y"] < chart["y"]
    screen.goto(f"{app_server.url}/rankings")
    screen.get_by_text("Judge health").first.wait_for()
    screen.get_by_text("Tie margin used").first.wait_for()
    # the page opens on the margin derived from the score spread; RocketEval's 0.1 typed in
    tie = screen.get_by_role("spinbutton", name="Tie margin")
    tie.fill("0.1")
    tie.press("Enter")
    screen.get_by_text("ties at the given margin 0.1").first.wait_for()
    screen.wait_for_timeout(1000)
    screen.screenshot(path="/tmp/g-rankings-health-1440.png")
    alert = screen.locator('[data-testid="stAlert"]').filter(has_text="Judge health").first
    assert "are ties at the given margin 0.1" in alert.inner_text()
    screen.get_by_role("button", name="Use derived margin").click()
    screen.wait_for_timeout(2000)
    assert "ties at the given margin 0.1 " not in screen.locator("body").inner_text()
