"""Browser: the Rankings page shows the leaderboard; clicking a human-vote pair opens both
answers side by side with the questions that decided between them."""

from __future__ import annotations

import pytest

from tests.helpers import build_ranking_task

ROW_PX = 35  # Streamlit's data grid row height (header included)


def idle(page):
    page.wait_for_load_state("networkidle")
    page.locator("[data-testid='stStatusWidget']").wait_for(state="hidden")


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
