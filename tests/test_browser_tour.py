"""Browser, 1440×900: what the README tour tripped over — Back from Traces returns to Compare
with its chosen runs and its own address, the Pairwise votes page's address (the old one
still opens it), Send flagged leaves no sent chip in the selector, and Annotate shows the
submitted item beside the judges above the next one, then "all done"."""

from __future__ import annotations

import re

import pytest

from checkeval_core.analysis.compare import compare_runs
from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import open_db
from tests.helpers import fake_demo_runs, open_both_traces


def _box(screen, label: str):
    box = screen.get_by_test_id("stSelectbox").filter(has=screen.get_by_text(label, exact=True))
    box.first.wait_for()
    return box.first


def _selected(screen, label: str) -> str:
    """The shown value of the selectbox labelled ``label``."""
    return _box(screen, label).locator("input").first.input_value()


@pytest.mark.browser
def test_back_from_traces_keeps_compare_runs_and_its_address(app_server, screen):
    db = open_db(app_server.db_path)
    r1, r2 = fake_demo_runs(db, 32)  # rocketeval, checkeval
    r3 = create_run(db, "summeval-demo", "fake", "checkeval", limit=32)
    execute_run(app_server.db_path, r3)
    db.close()
    screen.goto(f"{app_server.url}/compare")
    screen.get_by_text("Items, largest regression first").wait_for()
    # the default pair is the reference runs (#1, #3): of the two equal checkeval runs the
    # newer is the reference; the person picks the older, #2, to compare with #1 instead
    assert _selected(screen, "A (baseline)").startswith(f"#{r1} ")
    assert _selected(screen, "B (compared with A)").startswith(f"#{r3} ")
    _box(screen, "B (compared with A)").locator("input").first.click()
    screen.get_by_role("option", name=re.compile(rf"^#{r2} ")).click()
    screen.wait_for_url(re.compile(rf"b={r2}"))
    screen.wait_for_timeout(1500)
    first = compare_runs(open_db(app_server.db_path), r1, r2, n_boot=0)["items"][0]
    open_both_traces(screen, first, r1, r2)
    assert "runs=" in screen.url
    screen.go_back()
    screen.get_by_text("Items, largest regression first").wait_for()
    screen.wait_for_timeout(2500)
    screen.screenshot(path="/tmp/g-tour-compare-back-1440.png")
    assert _selected(screen, "A (baseline)").startswith(f"#{r1} ")
    assert _selected(screen, "B (compared with A)").startswith(f"#{r2} ")
    assert "/compare?" in screen.url and f"a={r1}" in screen.url and f"b={r2}" in screen.url
    for foreign in ("runs=", "item=", "dim="):
        assert foreign not in screen.url, screen.url
    # Analysis → its trace link → Back: Analysis's address has none of Traces' parameters
    screen.goto(f"{app_server.url}/analysis")
    link = screen.get_by_role("link", name="Open the Yes/No trace of")
    link.wait_for()
    link.click()
    screen.get_by_text("Yes/No decisions").first.wait_for()
    assert "runs=" in screen.url
    screen.go_back()
    screen.get_by_text("Correlation with human scores").wait_for()
    screen.wait_for_timeout(2500)
    assert "/analysis" in screen.url
    for foreign in ("runs=", "item=", "dim=", "a=", "b="):
        assert foreign not in screen.url, screen.url


@pytest.mark.browser
def test_pairwise_votes_has_its_own_address_and_the_old_one_still_opens_it(app_server, screen):
    screen.goto(f"{app_server.url}/pairwise_votes")
    screen.get_by_role("heading", name="Pairwise votes").wait_for()
    assert screen.url.endswith("/pairwise_votes")
    screen.goto(f"{app_server.url}/compare_answers")  # a bookmark from before the rename
    screen.get_by_role("heading", name="Pairwise votes").wait_for()
    screen.wait_for_url(re.compile(r"/pairwise_votes$"))
    screen.wait_for_timeout(800)
    screen.screenshot(path="/tmp/g-tour-pairwise-1440.png")
    # the sidebar has one Pairwise votes entry, at the new address
    links = screen.get_by_test_id("stSidebarNav").get_by_role("link", name="Pairwise votes")
    assert links.count() == 1 and links.first.get_attribute("href").endswith("/pairwise_votes")


def _chips(screen, label: str) -> list[str]:
    box = screen.get_by_test_id("stMultiSelect").filter(has=screen.get_by_text(label))
    box.first.wait_for()
    return [t.strip() for t in box.first.locator("[data-tag] > span[title]").all_inner_texts()]


@pytest.mark.browser
def test_send_flagged_clears_the_sent_chips(app_server, screen):
    from checkeval_core.analysis.diagnostics import MIN_FLAG_GROUPS
    from checkeval_core.demo import load_demo

    db = open_db(app_server.db_path)
    load_demo(db)
    for m in ("rocketeval", "checkeval"):
        execute_run(app_server.db_path,
                    create_run(db, "summeval-demo", "fake", m, limit=16 * MIN_FLAG_GROUPS))
    db.close()
    screen.goto(f"{app_server.url}/analysis")
    label = "Questions to send back"
    pick = screen.get_by_test_id("stMultiSelect").filter(has=screen.get_by_text(label)).first
    pick.wait_for()
    pick.scroll_into_view_if_needed()
    for _ in range(2):
        pick.locator("input").first.click()
        screen.get_by_role("option", name=re.compile(r"^#\d+ ")).first.click()
        screen.wait_for_timeout(1500)
    screen.keyboard.press("Escape")
    screen.wait_for_timeout(1000)
    n = len(_chips(screen, label))
    assert n == 2
    screen.get_by_role("button", name=f"Send {n} selected questions to review…").click()
    screen.get_by_role("button", name="Confirm").click()
    screen.get_by_text(f"{n} questions are back in the review queue").wait_for()
    screen.wait_for_timeout(2000)
    screen.get_by_text(label).first.scroll_into_view_if_needed()
    screen.screenshot(path="/tmp/g-tour-send-flagged-1440.png")
    assert _chips(screen, label) == []
    assert screen.get_by_role("button", name="Send 0 selected questions to review…").is_disabled()


ANN_QUESTIONS = ["Is the reply polite?", "Does the reply answer the question?"]


def _answer_item(pg, value: str) -> None:
    for i, q in enumerate(ANN_QUESTIONS):
        choice = pg.get_by_role("radiogroup", name=q).get_by_text(value, exact=True)
        choice.click()  # once: one script run at a time per session, no click is lost
        pg.get_by_text(f"{i + 1} of {len(ANN_QUESTIONS)} answered").wait_for()


@pytest.mark.browser
def test_annotate_shows_the_submitted_item_beside_the_judges_first_then_all_done(
        app_server, screen, tmp_path):
    import json

    from checkeval_core.annotation.jobs import create_job
    from checkeval_core.checklists.io import import_checklist
    from checkeval_core.checklists.versions import freeze
    from checkeval_core.datasets import import_file

    db = open_db(app_server.db_path)
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "group_id": f"g{i}", "context": "Hi?",
                                        "output": f"Fine, thanks number {i}."}) + "\n"
                            for i in range(2)))
    import_file(db, data, "chat", kind="dialogue")
    ck = tmp_path / "c.json"
    ck.write_text(json.dumps({"quality": {"definition": "good reply", "sub_dimensions": {
        "Basics": {"seed": ANN_QUESTIONS}}}}))
    import_checklist(db, "chat", ck)
    freeze(db, "chat")
    execute_run(app_server.db_path, create_run(db, "chat", "fake", "checkeval"))
    create_job(db, "chat", ["alice"], 1, n_items=2)
    db.close()
    screen.goto(app_server.url + "/annotate")
    box = screen.get_by_label("Your name")
    box.fill("alice")
    box.press("Enter")
    screen.get_by_text("Item 1 of 2", exact=True).wait_for()
    first = screen.get_by_text("· status:").first.inner_text().split(" · ")[0].strip()
    first = first.removeprefix("Item ")  # "Item r0 · status: …" → the item's id
    _answer_item(screen, "yes")
    screen.get_by_role("button", name="Submit item").click()
    screen.get_by_text("Item 2 of 2", exact=True).wait_for()
    head = screen.get_by_text(f"Your answers beside the judges' on the item you submitted "
                              f"({first})")
    head.wait_for()
    screen.wait_for_timeout(1500)
    screen.screenshot(path="/tmp/g-tour-annotate-submitted-1440.png")
    # the submitted item's comparison comes first, the next item's questions after it
    next_q = screen.get_by_role("radiogroup", name=ANN_QUESTIONS[0])
    assert head.bounding_box()["y"] < next_q.bounding_box()["y"]
    assert head.bounding_box()["y"] < 900  # in view without scrolling
    assert not screen.get_by_text("All done").count()
    _answer_item(screen, "no")
    screen.get_by_role("button", name="Submit item").click()
    screen.get_by_text("All done").wait_for()
    screen.wait_for_timeout(1500)
    screen.screenshot(path="/tmp/g-tour-annotate-done-1440.png")
    assert "job #1 is submitted or skipped" in screen.get_by_text("All done").inner_text()
    screen.get_by_text("alice: 2 of 2 done · 0 skipped · 0 to do").wait_for()


@pytest.mark.browser
def test_rankings_human_elo_interval_and_leaving_out_biased_votes(app_server, screen):
    from tests.helpers import build_ranking_task
    from tests.helpers import vote_fair_and_lefty as _vote_everything

    db = open_db(app_server.db_path)
    # 6 queries: the small-sample minimum for a position-bias flag and an Elo interval
    build_ranking_task(db, n_queries=6)
    _vote_everything(db)
    db.close()
    screen.goto(f"{app_server.url}/rankings")
    box = screen.get_by_text("Leave out the votes of lefty")
    box.wait_for()
    screen.get_by_text("Elo ratings (Bradley–Terry on matches per query)").click()
    screen.locator('[role="columnheader"]', has_text="human CI low").first.wait_for(
        state="attached")
    screen.get_by_text("shown only for a system with ≥ 5 votes").first.scroll_into_view_if_needed()
    screen.wait_for_timeout(1200)
    screen.screenshot(path="/tmp/g-tour-rankings-elo-1440.png")
    box.click()
    screen.get_by_text("18 votes left out.").wait_for()  # lefty: 3 pairs × 6 queries
    screen.get_by_text("votes of lefty left out").first.wait_for()
    screen.wait_for_timeout(1200)
    screen.screenshot(path="/tmp/g-tour-rankings-dropped-1440.png")


@pytest.mark.browser
def test_cancel_says_cancelling_while_the_worker_finishes_its_item(app_server, screen):
    import os
    import subprocess
    import sys

    from checkeval_core.demo import load_demo
    from checkeval_core.runs import get_run

    db = open_db(app_server.db_path)
    load_demo(db)
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=3)
    # a slow judge (0.1 s a question, ~40 questions an item): an item takes a few seconds
    worker = subprocess.Popen(
        [sys.executable, "-m", "checkeval_core", "--db", str(app_server.db_path), "run",
         "--resume", str(rid), "--quiet"], env=dict(os.environ, CHECKEVAL_FAKE_DELAY="0.1"),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        screen.goto(f"{app_server.url}/run")
        screen.get_by_text(f"Run {rid} · fake · rocketeval · ").first.wait_for()
        screen.get_by_role("button", name="Cancel").click()
        # the finished-runs line names the run by its one label (#id · version · judge ·
        # method · items)
        line = screen.get_by_text(f"Run #{rid} · v1 · fake · rocketeval · 3 items — cancelling…")
        line.wait_for()
        screen.wait_for_timeout(800)
        screen.screenshot(path="/tmp/g-tour-run-cancelling-1440.png")
        assert "the worker stops after its current item" in line.inner_text()
        assert get_run(db, rid)["alive"]  # really still computing
        assert screen.get_by_role("button", name="Resume").is_disabled()
        screen.get_by_text(f"Run #{rid} · v1 · fake · rocketeval · 3 items — cancelled").wait_for(
            timeout=120_000)
        worker.wait(60)
        run = get_run(db, rid)
        assert run["status"] == "cancelled" and run["finished_at"] and not run["alive"]
        assert run["progress_done"] < 3
        screen.wait_for_timeout(2500)  # the panel refreshes every 2 s
        assert screen.get_by_role("button", name="Resume").is_enabled()
    finally:
        worker.kill()
        worker.wait()
        db.close()
