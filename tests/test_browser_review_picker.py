"""Browser at 1440×900: the Checklist review page's "Questions to act on" picker shows about
ten of the demo's 122 questions at a time; typing a word narrows it to the questions that
contain the word (not Streamlit's default subsequence match, which keeps nearly every long
question), and "Select N matches" picks exactly those."""

import sqlite3

import pytest

from tests.helpers import idle, run_cli


@pytest.mark.browser
@pytest.mark.slow
def test_typing_a_word_narrows_the_picker_to_the_questions_containing_it(
        app_server, screen, tmp_path):
    run_cli(["--db", str(app_server.db_path), "demo"], env={"CHECKEVAL_DEMO_RUNS": "0"},
            check=True)
    con = sqlite3.connect(app_server.db_path)
    texts = [r[0] for r in con.execute(
        "SELECT q.text FROM question q JOIN task t ON t.id = q.task_id WHERE t.name = "
        "'summeval-demo' AND q.status = 'kept'")]
    n = sum("source" in t.lower() for t in texts)
    assert 1 < n < len(texts)
    page = screen
    page.goto(app_server.url + "/checklist")
    page.get_by_text("Questions to act on").wait_for()
    idle(page)
    box = page.get_by_test_id("stMultiSelect").filter(
        has=page.get_by_text("Questions to act on", exact=True))
    box.scroll_into_view_if_needed()
    box.locator("input").click()
    box.locator("input").fill("source")
    page.get_by_role("option", name=f"Select {n} matches").wait_for()
    options = page.get_by_role("option")
    shown = [options.nth(i).inner_text() for i in range(1, options.count())]
    assert shown and all("source" in s.lower() for s in shown), shown
    page.screenshot(path=str(tmp_path / "review-picker.png"))
    page.get_by_role("option", name=f"Select {n} matches").click()
    page.keyboard.press("Escape")
    idle(page)
    page.get_by_text(f"{n} selected", exact=True).wait_for()
