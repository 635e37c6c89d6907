"""Browser at 1440×900: an annotator votes on one pair of the AlpacaEval demo with the keyboard
(key B) and the vote is stored; the systems appear only after the vote."""

import os

import pytest

from checkeval_core.annotation import pairwise as PW
from checkeval_core.store import open_db
from tests.helpers import idle, run_cli

SHOTS = os.environ.get("CHECKEVAL_SCREENSHOTS", "")


@pytest.mark.browser
def test_vote_one_pair_by_keyboard(app_server, browser, tmp_path):
    env = dict(os.environ, CHECKEVAL_DEMO_INSTRUCTION="1")
    run_cli(["--db", str(app_server.db_path),
             "demo"], check=True, env=env)
    db = open_db(app_server.db_path)
    nxt = PW.pair_queue(db, "alpacaeval-demo", "dana")["next"]
    systems = {r[0] for r in db.execute("SELECT DISTINCT system_id FROM item i JOIN task t ON "
                                        "t.id = i.task_id WHERE t.name = 'alpacaeval-demo'")}
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(60_000)
    pg.goto(app_server.url + "/pairwise_votes")
    box = pg.get_by_label("Your name")
    box.fill("dana")
    box.press("Enter")
    pg.get_by_text("0 of 20 pairs voted").wait_for()
    pg.get_by_role("combobox").first.wait_for()
    # the task picker opens on the first task by name: pick the demo's instruction task
    pg.get_by_role("combobox").first.click()
    pg.get_by_role("option", name="alpacaeval-demo").click()
    pg.get_by_text(f"query {nxt['group_id']}").wait_for()
    idle(pg)
    body = pg.locator("section.main, [data-testid='stMain']").first.inner_text()
    assert not [s for s in systems if s in body]  # blind: no system named before the vote
    if SHOTS:
        pg.screenshot(path=os.path.join(SHOTS, "pairwise_before.png"))
    pg.get_by_text("Pair 1 of 20").click()  # focus off the task picker: keys are shortcuts
    pg.keyboard.press("b")
    pg.get_by_text("you chose B").wait_for()
    pg.get_by_text("1 of 20 pairs voted").wait_for()
    idle(pg)
    if SHOTS:
        pg.screenshot(path=os.path.join(SHOTS, "pairwise_after.png"), full_page=True)
    v = PW.vote_detail(db, "alpacaeval-demo", "dana", nxt["a"]["id"], nxt["b"]["id"])
    assert v["choice"] == "B" and v["shown_first"] == nxt["a"]["id"]
    assert v["preferred"] == v["system_b_shown"]
    assert db.execute("SELECT COUNT(*), MIN(source), MIN(annotator) FROM preference"
                      ).fetchone() == (1, PW.APP_SOURCE, "dana")
    assert pg.get_by_text(f"B was {v['system_b_shown']}").count() == 1
    assert box.count() == 0 and pg.get_by_text("Annotator: dana").count() == 1
    # typing in the name field does not vote: the shortcuts act outside text fields only
    pg.get_by_role("button", name="Change name").click()
    box.wait_for()
    box.click()
    box.type("t")
    pg.wait_for_timeout(1500)
    assert db.execute("SELECT COUNT(*) FROM preference").fetchone()[0] == 1
    # a name given with Enter leaves no field behind: the key pressed next votes (Esc did not
    # leave the field, and A / B / T went into the name)
    box.fill("dana")
    box.press("Enter")
    pg.get_by_text("Annotator: dana").wait_for()
    idle(pg)
    pg.keyboard.press("Escape")
    pg.keyboard.press("t")
    pg.get_by_text("you chose tie").wait_for()
    assert db.execute("SELECT COUNT(*), MIN(annotator), MAX(annotator) FROM preference"
                      ).fetchone() == (2, "dana", "dana")
    ctx.close()
