"""Browser: start a fake-judge run on the Run page, watch it finish, open a trace."""

import sqlite3

import pytest

from tests.helpers import browser_run_page, run_cli


@pytest.mark.browser
def test_run_and_trace_in_browser(app_server, page):
    run_cli(["--db", str(app_server.db_path),
             "demo"], check=True)
    browser_run_page(page, app_server.url)  # Enter in "Items" commits, never starts a run
    page.wait_for_timeout(1000)
    with sqlite3.connect(app_server.db_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM run").fetchone()[0] == 0
    assert page.get_by_text("Started run(s)").count() == 0
    page.get_by_role("button", name="Start").click()
    page.get_by_text("Started run(s) 1").wait_for()
    # the progress fragment refreshes by itself until the run is completed
    page.get_by_text("Run #1 · v1 · fake · rocketeval · 2 items — completed").wait_for(timeout=90_000)
    page.goto(app_server.url + "/traces?runs=1")
    page.get_by_text("Yes/No decisions").wait_for()
    page.get_by_text("(122 shown)").wait_for()
    # the source article sits in an expander under the judged text
    page.get_by_text("Source, context, reference and every aggregation's score").click()
    page.locator("[data-testid='stText']").filter(
        has_text="Paul Merson has restarted his row").first.wait_for()
    page.screenshot(path=str(app_server.db_path.parent / "trace.png"))
