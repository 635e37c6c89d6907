"""Browser at 1440×900: the Checklist review page shows a question's whole review history
(reject with its reason → keep → edit), and the Dimensions page says what *Filter* will cost
before it runs."""

import sqlite3

import pytest

from tests.helpers import idle, run_cli


def click(page, name: str, done: str) -> None:
    """Press a button once and wait for its message (one script run at a time per session:
    a click during a rerun is not lost)."""
    page.get_by_role("button", name=name).click()
    page.get_by_text(done).first.wait_for()
    idle(page)


def pick(page, label: str, text: str) -> None:
    """Choose the option containing ``text`` in the multiselect labelled ``label``."""
    box = page.get_by_test_id("stMultiSelect").filter(has=page.get_by_text(label, exact=True))
    box.locator("input").click()
    box.locator("input").fill(text)
    page.get_by_role("option").filter(has_text=text).first.click()
    page.keyboard.press("Escape")
    idle(page)


def fill(page, label: str, text: str) -> None:
    box = page.get_by_label(label)
    box.fill(text)
    box.press("Enter")
    idle(page)


@pytest.mark.browser
@pytest.mark.slow
def test_review_history_and_filter_cost_at_1440(app_server, screen):
    run_cli(["--db", str(app_server.db_path), "demo"], env={"CHECKEVAL_DEMO_RUNS": "0"},
            check=True)
    con = sqlite3.connect(app_server.db_path)
    qid = con.execute("SELECT q.id FROM question q JOIN task t ON t.id = q.task_id WHERE "
                      "t.name = 'summeval-demo' AND q.status = 'kept' ORDER BY q.id "
                      "LIMIT 1").fetchone()[0]
    page = screen
    page.goto(app_server.url + "/checklist")
    fill(page, "Your name as reviewer", "rita")
    page.get_by_text("Questions to act on").wait_for()
    idle(page)
    pick(page, "Status", "rejected")  # the question stays in view once rejected
    pick(page, "Questions to act on", f"#{qid} ")
    # the page empties the reason when the selection changes: type it only once the
    # selection's rerun has drawn (on a loaded machine it can land after the typing)
    page.get_by_text("1 selected", exact=True).wait_for()
    idle(page)
    fill(page, "Reason (required to reject)", "too vague for a summary")
    assert page.get_by_label("Reason (required to reject)").input_value() == \
        "too vague for a summary"
    click(page, "Reject selected", "Rejected 1 question(s)")
    page.get_by_text("0 selected", exact=True).wait_for()  # a rejected question leaves the pick
    pick(page, "Questions to act on", f"#{qid} ")
    page.get_by_text("1 selected", exact=True).wait_for()
    click(page, "Keep selected", "Kept 1 question(s)")
    fill(page, "New text (edit exactly one selected question)",
         "Does the summary present the events in a clear order?")
    click(page, "Save edit", "Saved the edit as a new question")
    hist = page.get_by_test_id("stExpander").filter(has_text="Review history (1 question")
    hist.wait_for()
    idle(page)
    for attempt in range(3):  # a late rerun can redraw the expander under the scroll
        try:
            hist.scroll_into_view_if_needed(timeout=10_000)
            break
        except Exception:  # noqa: BLE001 - playwright: detached while scrolling
            if attempt == 2:
                raise
            idle(page)
    page.wait_for_timeout(1500)
    page.screenshot(path="/tmp/review-history-1440.png")
    events = con.execute("SELECT actor, role, action, reason FROM review_event WHERE "
                         "question_id = ? ORDER BY id", [qid]).fetchall()
    actions = [e[2] for e in events]
    assert actions == ["reject", "keep", "edit"]  # each click recorded once
    assert events[0] == ("rita", "reviewer", "reject", "too vague for a summary")
    assert hist.get_by_text("Review history (1 question").is_visible()
    grid = hist.get_by_test_id("stDataFrame")
    assert grid.first.bounding_box()["x"] + grid.first.bounding_box()["width"] <= 1440

    page.goto(app_server.url + "/dimensions")
    judge = page.get_by_role("textbox", name="Judge spec")
    judge.wait_for()
    idle(page)  # typed during the first render, the spec can be drawn over with the default
    judge.fill("fake")
    judge.press("Enter")
    idle(page)
    assert judge.input_value() == "fake"
    page.get_by_text("no new proposals to filter").wait_for()
    page.get_by_text("Every proposed and kept question").click()
    idle(page)
    cost = page.get_by_text("judge call(s)")
    cost.first.wait_for()
    cost.first.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    page.screenshot(path="/tmp/filter-cost-1440.png")
    assert "Filters" in cost.first.inner_text()
