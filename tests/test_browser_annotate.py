"""Browser: two annotators in two separate browser contexts annotate the same job at once
while a fake-judge run writes to the same database; every annotation is stored."""

import json
import os
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from checkeval_core.store import open_db
from tests.helpers import idle

QUESTIONS = ["Is the reply polite?", "Does the reply answer the question?",
             "Is the reply short?"]


@pytest.mark.browser
def test_two_annotators_and_a_run(app_server, browser, tmp_path):
    base = [sys.executable, "-m", "checkeval_core", "--db", str(app_server.db_path)]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "group_id": f"g{i // 2}",
                                        "context": "Hi, how are you?",
                                        "output": f"Fine, thanks number {i}."}) + "\n"
                            for i in range(4)))
    ck = tmp_path / "c.json"
    ck.write_text(json.dumps({"quality": {"definition": "good reply", "sub_dimensions": {
        "Basics": {"seed": QUESTIONS}}}}))
    for args in (["import", str(data), "--task", "chat", "--kind", "dialogue"],
                 ["checklist", "import", str(ck), "--task", "chat"],
                 ["checklist", "freeze", "--task", "chat"], ["demo"]):
        subprocess.run([*base, *args], check=True, capture_output=True, timeout=120)
    from checkeval_core.annotation.jobs import create_job

    db = open_db(app_server.db_path)
    jid = create_job(db, "chat", ["alice", "bob"], 2, n_items=2)
    # a judge run writing at the same time (slowed down so it overlaps the annotation)
    run = subprocess.Popen([*base, "run", "--task", "summeval-demo", "--judge", "fake",
                            "--method", "rocketeval", "--limit", "4", "--quiet"],
                           env=dict(os.environ, CHECKEVAL_FAKE_DELAY="0.01"),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pages = {}
    for name in ("alice", "bob"):
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        pg = ctx.new_page()
        pg.set_default_timeout(30_000)
        pg.goto(app_server.url + "/annotate")
        box = pg.get_by_label("Your name")
        box.fill(name)
        box.press("Enter")
        pg.get_by_text("Judges' answers are hidden").wait_for()
        pages[name] = pg
    for step in range(2):  # both items, the two annotators interleaved
        for name, pg in pages.items():
            idle(pg)
            for i, q in enumerate(QUESTIONS):
                choice = pg.get_by_role("radiogroup", name=q).get_by_text(
                    "yes" if name == "alice" else "no", exact=True)
                choice.click()  # once: one script run at a time, no click is lost
                pg.get_by_text(f"{i + 1} of 3 answered").wait_for()
                idle(pg)
            pg.get_by_role("button", name="Submit item").click()
            # Submit shows the submitted item beside the judges and moves on to the next
            pg.get_by_text(f"{step + 1} of 2 done").wait_for()
            pg.get_by_text("Your answers beside the judges'").wait_for()
            if step == 0:
                pg.get_by_text("Item 2 of 2", exact=True).wait_for()
    run.wait(180)
    assert run.returncode == 0
    rows = db.execute("SELECT annotator, COUNT(*), SUM(value = 'yes') FROM annotation WHERE "
                      "job_id = ? GROUP BY annotator ORDER BY annotator", [jid]).fetchall()
    assert rows == [("alice", 6, 6), ("bob", 6, 0)]
    done = db.execute("SELECT COUNT(*) FROM annotation_assignment WHERE job_id = ? AND "
                      "status = 'done'", [jid]).fetchone()[0]
    assert done == 4
    assert db.execute("SELECT COUNT(*) FROM answer").fetchone()[0] == 4 * 122
    for pg in pages.values():
        pg.context.close()


@pytest.mark.browser
def test_per_query_checklist_shows_only_the_item_questions(app_server, browser):
    """On the AlpacaEval demo's per-query checklist, each item lists its own query's questions
    (not every query's), Submit needs only those and moves on; screenshot at 1440×900."""
    from checkeval_core.annotation.jobs import create_job, job_questions, queue, sample_items
    from checkeval_core.demo.instruction import TASK, load_instruction_demo

    db = open_db(app_server.db_path)
    load_instruction_demo(db)
    n_all = db.execute("SELECT n_questions FROM checklist_version WHERE kind = 'instance'"
                       ).fetchone()[0]
    def group(pk):
        return db.execute("SELECT group_id FROM item WHERE id = ?", [pk]).fetchone()[0]

    # a sample whose first two items answer different queries
    seed = next(s for s in range(50) if len({group(pk) for pk in
                                             sample_items(db, TASK, 3, seed=s)[:2]}) == 2)
    jid = create_job(db, TASK, ["alice"], 1, n_items=3, seed=seed)
    q = queue(db, jid, "alice")
    own = [[x["text"] for x in job_questions(db, jid, e["item_pk"])] for e in q]
    assert own[0] != own[1]
    assert 0 < len(own[0]) < n_all
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    pg.goto(app_server.url + "/annotate")
    box = pg.get_by_label("Your name")
    box.fill("alice")
    box.press("Enter")
    pg.get_by_text("Item 1 of 3", exact=True).wait_for()
    pg.get_by_text("Judges' answers are hidden").wait_for()  # the end of the page
    pg.get_by_role("radiogroup", name=own[0][-1], exact=True).wait_for()  # not a skeleton
    idle(pg)
    expect(pg.get_by_role("radiogroup")).to_have_count(len(own[0]))  # waits out a rerun
    for i, text in enumerate(own[0]):
        group = pg.get_by_role("radiogroup", name=text, exact=True)
        assert group.count() == 1
        group.get_by_text("yes", exact=True).click()
        pg.get_by_text(f"{i + 1} of {len(own[0])} answered").wait_for()
        idle(pg)
    pg.get_by_text("Item 1 of 3", exact=True).scroll_into_view_if_needed()
    pg.screenshot(path="/tmp/annotate_per_query_1440.png")
    pg.get_by_role("button", name="Submit item").click()
    pg.get_by_text("Item 2 of 3", exact=True).wait_for()
    pg.get_by_text("Judges' answers are hidden").wait_for()
    pg.get_by_role("radiogroup", name=own[1][-1], exact=True).wait_for()
    pg.get_by_role("radiogroup", name=own[0][0], exact=True).wait_for(state="detached")
    idle(pg)
    expect(pg.get_by_role("radiogroup")).to_have_count(len(own[1]))  # waits out a rerun
    for text in own[1]:
        assert pg.get_by_role("radiogroup", name=text, exact=True).count() == 1
    pg.get_by_text("Item 2 of 3", exact=True).scroll_into_view_if_needed()
    pg.screenshot(path="/tmp/annotate_per_query_1440_next.png")
    status = db.execute("SELECT status FROM annotation_assignment WHERE job_id = ? ORDER BY "
                        "position", [jid]).fetchall()
    assert [s[0] for s in status] == ["done", "todo", "todo"]
    assert db.execute("SELECT COUNT(*) FROM annotation WHERE job_id = ?", [jid]
                      ).fetchone()[0] == len(own[0])
    ctx.close()
