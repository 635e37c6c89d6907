"""Browser: the real app in Chromium loads the demo and shows SummEval items on the Data page."""


import pytest

from tests.helpers import run_cli


@pytest.mark.browser
def test_demo_and_data_page_in_browser(app_server, page):
    page.goto(app_server.url)
    button = page.get_by_role("button", name="Load the demo tasks")
    button.wait_for()
    page.wait_for_load_state("networkidle")
    button.click()
    page.get_by_text("The demo tasks are loaded").wait_for(timeout=90_000)
    page.get_by_role("link", name="Data", exact=True).first.click()
    page.get_by_text("192 items").wait_for(timeout=60_000)
    # a SummEval system id and the dataframe are rendered
    page.locator("[data-testid='stDataFrame']").first.wait_for()
    page.locator("[data-testid='stText']").filter(
        has_text="Paul Merson has restarted his row").first.wait_for()
    out = run_cli(["--db", str(app_server.db_path),
                   "tasks", "--json"], check=True).stdout
    assert "summeval-demo" in out
    page.screenshot(path=str(app_server.db_path.parent / "data.png"))
