"""Browser: click a correlation bar on the Analysis page, follow it to the Yes/No trace."""


import pytest

from tests.helpers import run_cli


def idle(page):
    page.wait_for_load_state("networkidle")
    page.locator("[data-testid='stStatusWidget']").wait_for(state="hidden")


@pytest.mark.browser
def test_bar_to_trace(app_server, page):
    base = ["--db", str(app_server.db_path)]
    run_cli([*base, "demo"], check=True)
    run_cli([*base, "run", "--task", "summeval-demo", "--judge", "fake", "--method",
             "rocketeval", "--limit", "32", "--quiet"], check=True)
    page.goto(app_server.url)
    page.get_by_role("link", name="Analysis").first.click()
    page.get_by_text("Correlation with human scores").wait_for()
    bars = page.locator(".js-plotly-plot .point path")
    bars.first.wait_for()
    idle(page)
    n = bars.count()
    assert n == 4  # one bar per dimension for the one run
    # plotly handles clicks on its drag layer: click at the bar's position (fluency: 3rd bar,
    # dimensions in alphabetical order)
    box = bars.nth(2).bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] - 3)
    page.get_by_text("#1 fake · rocketeval · fluency: 32 items").wait_for()
    page.get_by_role("link", name="Open the Yes/No trace of").click()
    page.get_by_text("Yes/No decisions").wait_for()
    page.get_by_text("(122 shown)").wait_for()
