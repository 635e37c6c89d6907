"""Browser at 1440×900: the Run page says what a run will cost before Start, and beside the
finished run what it really cost."""

import json

import pytest

from tests.helpers import browser_run_page, run_cli


@pytest.mark.browser
def test_cost_before_start_and_beside_the_run(app_server, screen):
    db = str(app_server.db_path)
    run_cli(["--db", db, "demo"], check=True)
    want = json.loads(run_cli(["--db", db, "run", "--task", "summeval-demo", "--judge", "fake",
                               "--method", "rocketeval", "--limit", "2", "--estimate",
                               "--json"], check=True).stdout)
    page = screen
    browser_run_page(page, app_server.url)
    line = f"Cost: {want['calls']} judge calls (0 already cached)"
    page.get_by_text(line).wait_for()
    assert page.get_by_text(line).is_visible()  # on screen before the click
    page.get_by_role("button", name="Start").click()
    page.get_by_text("Started run(s) 1").wait_for()
    page.get_by_text("Run #1 · v1 · fake · rocketeval · 2 items — completed").wait_for(
        timeout=90_000)
    table = page.locator("[data-testid='stDataFrame']").filter(has_text="actual / estimate")
    table.wait_for(timeout=30_000)
    page.screenshot(path=str(app_server.db_path.parent / "run_cost.png"), full_page=True)
