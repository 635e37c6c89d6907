"""Browser: the Rankings page shows the leaderboard; clicking a human-vote pair opens both
answers side by side with the questions that decided between them."""

from __future__ import annotations

import re

import pytest

from tests.helpers import build_ranking_task, idle

ROW_PX = 35  # Streamlit's data grid row height (header included)


@pytest.mark.browser
def test_rankings_leaderboard_and_pair_click(app_server, page):
    from checkeval_core.store import open_db

    db = open_db(app_server.db_path)
    build_ranking_task(db)
    db.close()
    page.goto(app_server.url + "/rankings")
    page.get_by_text("Leaderboard", exact=True).wait_for()
    page.get_by_text("Spearman ρ = 1.00").wait_for()
    idle(page)
    board = page.locator("[data-testid='stDataFrame']").first
    board.wait_for()
    page.get_by_text("3 systems × 4 queries").wait_for()
    # the grid is a canvas: its rows are checked through what selecting them shows below;
    # the scatter labels every system
    for s in ("sys-best", "sys-mid", "sys-low"):
        page.locator(".js-plotly-plot text", has_text=s).first.wait_for()
    # before any click: the query picker drives the side-by-side view (first query)
    page.get_by_text("apples bananas cherries grapes mention (sys-best)").wait_for()
    # select sys-low in the leaderboard (3rd row): it becomes system A of the comparison
    box = board.bounding_box()
    page.mouse.click(box["x"] + 12, box["y"] + ROW_PX * 3 + ROW_PX / 2)
    page.get_by_text("nothing relevant here (sys-low)").wait_for()
    idle(page)
    # click the second pair (g2: sys-mid vs sys-best) in the pairs table, on its row marker
    pairs = page.locator("[data-testid='stDataFrame']").filter(has_text="system A").first
    pairs.scroll_into_view_if_needed()
    box = pairs.bounding_box()
    page.mouse.click(box["x"] + 12, box["y"] + ROW_PX * 2 + ROW_PX / 2)
    page.get_by_text("Pair selected above (group g2)").wait_for()
    idle(page)
    page.get_by_text("lemons mangos mention (sys-mid)").wait_for()
    page.get_by_text("lemons mangos olives peaches mention (sys-best)").wait_for()
    page.get_by_text("checklist questions got different answers").wait_for()


@pytest.mark.browser
def test_rankings_at_1440_alpaca_demo(app_server, browser, monkeypatch):
    """The AlpacaEval demo (12 systems, embedded run): ρ/τ printed once, the scatter's labels
    placed without overlap, the default pair decided by some question."""
    from checkeval_core.demo import load_demo
    from checkeval_core.store import open_db

    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "1")
    monkeypatch.setenv("CHECKEVAL_DEMO_INSTRUCTION", "1")
    db = open_db(app_server.db_path)
    load_demo(db)
    db.close()
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(app_server.url + "/rankings")
    page.get_by_text("Leaderboard", exact=True).wait_for()
    page.locator(".js-plotly-plot .scatterlayer").first.wait_for()
    idle(page)
    page.wait_for_timeout(1500)
    assert page.get_by_text("Spearman ρ =").count() == 1
    page.screenshot(path="/tmp/h-rankings-1440.png")
    page.get_by_text("Spearman ρ =").scroll_into_view_if_needed()
    page.mouse.wheel(0, 300)
    page.wait_for_timeout(800)
    page.screenshot(path="/tmp/h-rankings-scatter-1440.png")
    page.get_by_text("Two answers side by side").scroll_into_view_if_needed()
    idle(page)
    page.get_by_text("checklist questions got different answers").wait_for()
    # the default pair is decided by some question (not "0 of N … got different answers")
    assert not page.get_by_text(re.compile(r"(^|\D)0 of \d+ checklist questions got")).count()
    page.screenshot(path="/tmp/h-rankings-pair-1440.png")
    ctx.close()
