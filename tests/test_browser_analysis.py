"""Browser: click a correlation bar on the Analysis page, follow it to the Yes/No trace."""


import pytest

from tests.helpers import idle, run_cli


@pytest.mark.browser
def test_bar_to_trace(app_server, page):
    base = ["--db", str(app_server.db_path)]
    run_cli([*base, "demo"], check=True)
    run_cli([*base, "run", "--task", "summeval-demo", "--judge", "fake", "--method",
             "rocketeval", "--limit", "32", "--quiet"], check=True)
    page.goto(app_server.url)
    page.get_by_role("link", name="Analysis").first.click()
    page.get_by_text("Correlation with human scores").wait_for()
    # the run's own trace: 32 items are 2 documents, below the small-sample minimum, so its
    # bars are hollow and a legend-only bar trace explains them (it is not a dimension)
    bars = page.locator(".js-plotly-plot").first.locator(".barlayer .trace").first.locator(
        ".point path")
    bars.first.wait_for()
    page.locator(".js-plotly-plot .legendtext", has_text="hatched, pale: no interval").wait_for()
    idle(page)
    n = bars.count()
    assert n == 4  # one bar per dimension for the one run
    # plotly handles clicks on its drag layer: click at the bar's position (fluency: 3rd bar,
    # dimensions in alphabetical order)
    # in view first: the judge-health box above the chart (coin flips) pushes it down
    bars.nth(2).scroll_into_view_if_needed()
    box = bars.nth(2).bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] - 3)
    page.get_by_text("#1 · v1 · fake · rocketeval · 32 items · fluency: 32 items").wait_for()
    page.get_by_role("link", name="Open the Yes/No trace of").click()
    page.get_by_text("Yes/No decisions").wait_for()
    page.get_by_text("(39 shown)").wait_for()  # the link keeps the dimension: fluency's 39


@pytest.mark.browser
def test_analysis_at_1440_shows_what_figures_rest_on(app_server, browser):
    """A fake run on one document (16 summaries) and one on 3 of them: the page opens on the
    larger; adding the small one, it says they cover different items and compares them on
    the shared ones; bars without an interval are hatched, with a legend entry saying so."""
    from checkeval_core.demo import load_demo
    from checkeval_core.runs import create_run, execute_run
    from checkeval_core.store import open_db

    db = open_db(app_server.db_path)
    load_demo(db)
    big = create_run(db, "summeval-demo", "fake", "rocketeval", limit=16)
    execute_run(app_server.db_path, big)
    small = create_run(db, "summeval-demo", "fake", "checkeval", limit=3)
    execute_run(app_server.db_path, small)
    db.close()
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(app_server.url + "/analysis")
    page.get_by_text("Correlation with human scores").wait_for()
    page.locator(".js-plotly-plot .legendtext", has_text="hatched, pale: no interval").wait_for()
    idle(page)
    assert "cover different items" not in page.locator("body").inner_text()
    # the field's input (its middle may hold the first run's chip, which does not open it)
    page.get_by_test_id("stMultiSelect").first.locator("input").click()
    page.get_by_role("option", name=f"#{small} · v1 · fake · checkeval · 3 items").click()
    page.keyboard.press("Escape")
    page.get_by_text("The selected runs cover different items").wait_for()
    idle(page)
    page.wait_for_timeout(1500)
    page.screenshot(path="/tmp/h-analysis-1440.png")
    page.mouse.move(800, 500)
    page.mouse.wheel(0, 700)
    page.wait_for_timeout(800)
    page.screenshot(path="/tmp/h-analysis-chart-1440.png")
    page.get_by_text("Question diagnostics").scroll_into_view_if_needed()
    idle(page)
    page.screenshot(path="/tmp/h-analysis-diagnostics-1440.png")
    ctx.close()


@pytest.mark.browser
def test_the_correlation_chart_is_drawn_once(app_server, browser, monkeypatch):
    """The demo's two 192-item runs: a new selection draws its point values first, then the
    full chart. Once the full one is there (its downloads follow it) the first is gone — it
    stayed under the full one, the same chart twice, while the rest of the page computed."""
    from checkeval_core.demo import load_demo
    from checkeval_core.store import open_db

    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "1")  # the shipped runs, as the tour has them
    db = open_db(app_server.db_path)
    load_demo(db)
    db.close()
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(150_000)  # a loaded 2-core machine's first start is slow
    page.goto(app_server.url + "/analysis")
    page.get_by_text("Correlation with human scores").wait_for()
    page.get_by_role("button", name="Figure (HTML)").wait_for()  # drawn after the full chart
    charts = page.locator(".js-plotly-plot").filter(
        has=page.locator(".ytitle", has_text="spearman (sample level)"))
    n_now = charts.count()
    idle(page)
    page.screenshot(path="/tmp/tour-analysis-once.png")
    assert n_now == 1 and charts.count() == 1, n_now
    ctx.close()
