"""Browser: edit a seed question, generate with the fake judge, reject one, freeze a version."""

import json
import sqlite3

import pytest

from tests.helpers import idle, run_cli


def cli(db, *args):
    return run_cli(list(args), db=db, check=True).stdout


@pytest.mark.browser
def test_checklist_flow_in_browser(app_server, page):
    cli(app_server.db_path, "demo")
    page.goto(app_server.url + "/dimensions")
    page.get_by_text("Sub-dimensions and seed questions").wait_for()
    seed = page.get_by_label("Seed #1", exact=True)
    seed.fill("Does the summary stick to the central topic?")
    seed.press("Enter")
    page.get_by_role("button", name="Save seed questions").first.click()
    page.get_by_text("Seed questions saved").wait_for()
    judge = page.get_by_role("textbox", name="Judge spec")
    judge.fill("fake")
    judge.press("Enter")
    page.get_by_role("button", name="Generate questions").click()
    page.get_by_text("questions proposed").wait_for()

    page.goto(app_server.url + "/checklist")
    name = page.get_by_label("Your name as reviewer")
    name.fill("alice")
    name.press("Enter")
    page.get_by_text("Questions to act on").wait_for()
    idle(page)
    # bulk action: select every shown (proposed) question, then reject them with a reason
    page.get_by_role("button", name="Select all shown").click()
    page.get_by_text("12 selected").wait_for()
    idle(page)
    reason = page.get_by_label("Reason (required to reject)")
    reason.fill("not about coherence")
    reason.press("Enter")
    idle(page)
    page.get_by_role("button", name="Reject selected").click()
    page.get_by_text("Rejected 12 question(s)").wait_for()
    page.get_by_role("button", name="Freeze kept questions").click()
    page.get_by_text("Version 2:").wait_for()
    versions = json.loads(cli(app_server.db_path, "checklist", "versions", "--task",
                              "summeval-demo", "--json"))
    assert [v["version"] for v in versions] == [1, 2]
    out = cli(app_server.db_path, "checklist", "diff", "--task", "summeval-demo", "1", "2")
    assert "stick to the central topic" in out
    rejected = cli(app_server.db_path, "checklist", "export", "--task", "summeval-demo", "--out",
                   str(app_server.db_path.parent / "ck.json"))
    assert "wrote" in rejected
    data = json.loads((app_server.db_path.parent / "ck.json").read_text())
    statuses = [q["status"] for d in data["dimensions"] for s in d["sub_dimensions"]
                for q in s["questions"] if q["origin"] == "diversification" and q["author"] == "llm"]
    assert statuses and set(statuses) == {"rejected"}


LAYOUT_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')]
  .filter(df => df.getBoundingClientRect().width > 0)
  .map(df => {
    const sc = df.querySelector('.dvn-scroller');
    return {heads: [...df.querySelectorAll('[role="columnheader"]')].map(h => h.innerText),
            scrollWidth: sc ? sc.scrollWidth : null, clientWidth: sc ? sc.clientWidth : null,
            right: df.getBoundingClientRect().right};
  })"""


def pick(page, label: str, text: str) -> None:
    """Choose the option containing ``text`` in the multiselect labelled ``label``."""
    box = page.get_by_test_id("stMultiSelect").filter(has=page.get_by_text(label, exact=True))
    box.locator("input").click()
    box.locator("input").fill(text)
    page.get_by_role("option").filter(has_text=text).first.click()
    page.keyboard.press("Escape")
    idle(page)
    box.get_by_text(text.strip(), exact=False).first.wait_for()  # the chip of the choice


@pytest.mark.browser
def test_review_at_1440_question_readable_and_reason_not_reused(app_server, browser):
    """The per-query checklist of the instruction demo at 1440×900: the query beside the id,
    the question wide, the dimensions in view; then reject, keep and edit in a real
    browser, and the rejection's reason is stored with the rejection only."""

    from playwright.sync_api import expect

    run_cli(["--db", str(app_server.db_path),
             "demo"], env={"CHECKEVAL_DEMO_INSTRUCTION": "1"}, check=True)
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(app_server.url + "/checklist")
        name = page.get_by_label("Your name as reviewer")
        name.fill("rita")
        name.press("Enter")
        page.get_by_text("Questions to act on").wait_for()
        idle(page)
        page.locator('[role="columnheader"]', has_text="question").first.wait_for(
            state="attached")
        page.wait_for_timeout(1500)
        page.screenshot(path="/tmp/checklist-review-1440.png")
        table = next(t for t in page.evaluate(LAYOUT_JS) if "question" in t["heads"])
        heads = table["heads"]
        assert heads[:4] == ["id", "query", "status", "question"], heads
        assert table["right"] <= 1440
        # id 56 + query 80 + status 84 + question 520 px, then the two dimension columns:
        # all of them inside the grid's visible width; only provenance columns scroll
        assert 56 + 80 + 84 + 520 + 2 * 110 <= table["clientWidth"], table
        ids = [int(r[0]) for r in sqlite3.connect(app_server.db_path).execute(
            "SELECT q.id FROM question q JOIN task t ON t.id = q.task_id WHERE t.name = "
            "'alpacaeval-demo' AND q.status = 'kept' ORDER BY q.id LIMIT 2")]
        pick(page, "Questions to act on", f"#{ids[1]} ")
        page.get_by_label("Reason (required to reject)").fill("off topic")
        page.get_by_label("Reason (required to reject)").press("Enter")
        idle(page)
        # one click: the launcher runs one script at a time per session (no fast reruns), so a
        # click during a rerun is not lost and is never to be retried
        page.get_by_role("button", name="Reject selected").click()
        page.get_by_text("Rejected 1 question(s)").wait_for()
        idle(page)
        # the run's later output may still be arriving: wait (up to 10 s) for the box to empty
        expect(page.get_by_label("Reason (required to reject)")).to_have_value("",
                                                                               timeout=10_000)
        pick(page, "Questions to act on", f"#{ids[0]} ")
        page.get_by_role("button", name="Keep selected").click()
        page.get_by_text("Kept 1 question(s)").wait_for()
        idle(page)
        assert sqlite3.connect(app_server.db_path).execute(
            "SELECT value, reason FROM annotation WHERE question_id = ?",
            [ids[0]]).fetchall() == [("keep", "")]
        text = page.get_by_label("New text (edit exactly one selected question)")
        text.fill("Does the answer name the song?")
        text.press("Enter")
        idle(page)
        page.get_by_role("button", name="Save edit").click()
        page.get_by_text("Saved the edit as a new question").wait_for()
    finally:
        ctx.close()
    rows = sqlite3.connect(app_server.db_path).execute(
        "SELECT question_id, value, reason FROM annotation WHERE kind = 'validation' "
        "ORDER BY question_id").fetchall()
    assert rows[1] == (ids[1], "reject", "off topic")
    assert rows[0][:2] == (ids[0], "edit") and rows[0][2].startswith("(edited into #")
    assert len(rows) == 2
