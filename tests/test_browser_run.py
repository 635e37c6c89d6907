"""Browser: start a fake-judge run on the Run page, watch it finish, open a trace."""

import subprocess
import sys

import pytest


def idle(page):
    page.wait_for_load_state("networkidle")
    page.locator("[data-testid='stStatusWidget']").wait_for(state="hidden")


@pytest.mark.browser
def test_run_and_trace_in_browser(app_server, page):
    subprocess.run([sys.executable, "-m", "checkeval_core", "--db", str(app_server.db_path),
                    "demo"], check=True, capture_output=True, timeout=120)
    page.goto(app_server.url + "/run")
    page.get_by_text("Checklist version").wait_for()
    extra = page.get_by_label("Another judge spec (optional)")
    extra.fill("fake")
    # remove the default embedded judge from the multiselect (its tag's delete button)
    page.get_by_role("button", name="Remove embedded").click()
    limit = page.get_by_role("spinbutton", name="Items (first N)")
    limit.fill("2")
    page.get_by_role("button", name="Start").click()
    page.get_by_text("Started run(s) 1").wait_for()
    # the progress fragment refreshes by itself until the run is completed
    page.get_by_text("Run 1 · fake · rocketeval — completed").wait_for(timeout=90_000)
    page.goto(app_server.url + "/traces?runs=1")
    page.get_by_text("Yes/No decisions").wait_for()
    page.get_by_text("(122 shown)").wait_for()
    # the source article sits in an expander under the judged text
    page.get_by_text("Source, context, reference and every aggregation's score").click()
    page.locator("[data-testid='stText']").filter(
        has_text="Paul Merson has restarted his row").first.wait_for()
    page.screenshot(path=str(app_server.db_path.parent / "trace.png"))
