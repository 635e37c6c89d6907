"""Decisions in view at 1440×900: on Traces every run's verdict column, on Data every human
score column, sits inside the viewport without scrolling sideways (real browser)."""

from __future__ import annotations

import pytest

from checkeval_core.demo import load_demo
from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import open_db
from tests.helpers import fake_demo_runs, submit_answered

# Geometry of every st.dataframe on the page: its box, its header names (from the grid's
# accessibility layer) and whether its grid scrolls sideways.
TABLES_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')]
  .filter(df => df.getBoundingClientRect().width > 0)
  .map(df => {
    const sc = df.querySelector('.dvn-scroller');
    const r = df.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top,
            heads: [...df.querySelectorAll('[role="columnheader"]')].map(h => h.innerText),
            scrollWidth: sc ? sc.scrollWidth : null, clientWidth: sc ? sc.clientWidth : null};
  })"""


def _table_with(pg, columns: list[str]) -> dict:
    """The visible table with a header starting with each of ``columns``."""
    for c in columns:  # the grid's header layer is filled once the grid has drawn
        pg.locator('[role="columnheader"]', has_text=c).first.wait_for(state="attached")
    tables = pg.evaluate(TABLES_JS)
    return next(t for t in tables
                if all(any(h.startswith(c) for h in t["heads"]) for c in columns))


def _selected(pg, label: str) -> str:
    """The shown value of the selectbox labelled ``label``."""
    box = pg.get_by_test_id("stSelectbox").filter(
        has=pg.get_by_text(label, exact=True))
    box.first.wait_for()
    return box.first.locator("input").first.input_value()


def _assert_in_view(table: dict) -> None:
    # the grid does not scroll sideways, and its box is inside the 1440 px viewport: every
    # column, the decision columns included, is visible as the page opens
    assert table["scrollWidth"] is not None
    assert table["scrollWidth"] <= table["clientWidth"] + 1, table
    assert 0 <= table["left"] and table["right"] <= 1440, table


@pytest.mark.browser
def test_decisions_in_view_at_1440(app_server, screen):
    db = open_db(app_server.db_path)
    runs = fake_demo_runs(db, 16)  # rocketeval, checkeval
    pk = db.execute("SELECT MIN(item_id) FROM answer WHERE run_id = ?", [runs[0]]).fetchone()[0]
    db.close()
    screen.goto(f"{app_server.url}/traces?runs={runs[0]},{runs[1]}&item={pk}")
    screen.get_by_text("Yes/No decisions").first.wait_for()
    screen.wait_for_timeout(1500)
    cols = [f"#{r}" for r in runs]
    screen.screenshot(path="/tmp/h6-traces-1440.png")
    table = _table_with(screen, ["question", *cols])
    _assert_in_view(table)
    assert table["top"] < 900  # the decisions start on the first screen
    # selecting a row shows its full question and each judge's raw answer below the table
    screen.mouse.click(table["left"] + 17, table["top"] + 35 + 17)
    screen.get_by_text(f"#{runs[1]} · v1 · fake · checkeval · 16 items — ").first.wait_for()
    # Data: the human score columns come before the long output
    screen.get_by_test_id("stSidebarNav").get_by_text("Data", exact=True).click()
    screen.get_by_text("Browse & export").first.wait_for()
    dims = ["coherence", "consistency", "fluency", "relevance"]  # the human score columns
    table = _table_with(screen, dims)
    screen.wait_for_timeout(1000)
    assert table["heads"].index("output") > max(table["heads"].index(d) for d in dims)
    screen.screenshot(path="/tmp/h6-data-1440.png")
    _assert_in_view(table)


@pytest.mark.browser
def test_bar_click_moves_the_selectors_and_the_trace_link_keeps_them(app_server, screen):
    db = open_db(app_server.db_path)
    load_demo(db)
    rid = create_run(db, "topical-chat-demo", "fake", "rocketeval", limit=24)
    execute_run(app_server.db_path, rid)
    db.close()
    # a deep link to the second task's run opens on that task (sets the shared task)
    screen.goto(f"{app_server.url}/traces?runs={rid}")
    screen.get_by_text("Yes/No decisions").first.wait_for()
    screen.get_by_test_id("stSidebarNav").get_by_text("Analysis", exact=True).click()
    bars = screen.locator(".js-plotly-plot .point path")
    bars.first.wait_for()
    screen.wait_for_load_state("networkidle")
    screen.locator("[data-testid='stStatusWidget']").wait_for(state="hidden")
    # dimensions in alphabetical order: coherence, engagingness, groundedness, naturalness;
    # the chart may start below the fold (a judge-health warning sits above it)
    bars.nth(2).scroll_into_view_if_needed()
    box = bars.nth(2).bounding_box()
    screen.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    screen.get_by_text(f"#{rid} · v1 · fake · rocketeval · 24 items · groundedness:").wait_for()
    assert _selected(screen, "dimension") == "groundedness"
    screen.screenshot(path="/tmp/h6-analysis-click-1440.png")
    link = screen.get_by_role("link", name="Open the Yes/No trace of")
    assert "dim=groundedness" in link.get_attribute("href")
    link.click()
    screen.get_by_text("Yes/No decisions").first.wait_for()
    assert _selected(screen, "Items ordered by score difference on") == "groundedness"
    assert _selected(screen, "Questions of") == "groundedness"  # dim= also filters


@pytest.mark.browser
def test_checklist_review_verdicts_in_view_at_1440(app_server, screen):
    from checkeval_core.checklists.augment import augment
    from checkeval_core.checklists.filtering import filter_dimension

    db = open_db(app_server.db_path)
    load_demo(db)
    augment(db, "summeval-demo", "coherence", "diversify", "fake")
    filter_dimension(db, "summeval-demo", "coherence", "fake", scope="all")
    db.close()
    screen.goto(f"{app_server.url}/checklist")
    screen.locator('[data-testid="stDataFrame"]').first.wait_for()
    screen.wait_for_timeout(1500)
    table = _table_with(screen, ["id", "status", "filter", "criterion", "question"])
    screen.screenshot(path="/tmp/review-1440.png")
    # the decisions (status, the filter's verdict and criterion, flags when any) come first,
    # then the question, all inside the table's visible width; columns empty for every row are
    # left out, and only trailing columns may need a sideways scroll
    heads = table["heads"]
    assert heads[:4] == ["id", "status", "filter", "criterion"], heads
    assert heads.index("question") <= 5 and "query" not in heads and "item" not in heads
    from studio_ui.tables import DECISION_WIDTH

    # the grid draws on a canvas: its visible width must hold the id (56 px), the four
    # decisions and the 520 px question
    assert table["left"] >= 0 and table["right"] <= 1440
    assert 56 + 4 * DECISION_WIDTH + 520 < table["clientWidth"], table


@pytest.mark.browser
def test_annotate_judge_comparison_in_view_at_1440(app_server, screen):
    from checkeval_core.annotation import jobs as J

    db = open_db(app_server.db_path)
    load_demo(db)
    runs = []
    for m in ("rocketeval", "checkeval"):
        rid = create_run(db, "summeval-demo", "fake", m, limit=2)
        execute_run(app_server.db_path, rid)
        runs.append(rid)
    jid = J.create_job(db, "summeval-demo", ["alice"], 1, n_items=1)
    item = J.queue(db, jid, "alice")[0]["item_pk"]
    for q in J.job_questions(db, jid, item)[:10]:
        J.save_answer(db, jid, "alice", item, q["id"], "yes")
    submit_answered(db, jid)  # the other questions: unsure
    db.close()
    screen.goto(f"{app_server.url}/annotate")
    box = screen.get_by_label("Your name")
    box.fill("alice")
    box.press("Enter")
    screen.get_by_text("Your answers beside the judges'").wait_for()
    screen.wait_for_timeout(1500)
    table = _table_with(screen, ["you", "#", "disagree", "question"])
    screen.screenshot(path="/tmp/annotate-1440.png")
    _assert_in_view(table)
