"""Browser, 1440×900: an escalated answer on Traces says which judge gave it and what the first
judge had said, beside the people's answers (the link Align's disagreeing items give); the Data
page takes a plain input,output,score CSV."""

from __future__ import annotations

import pytest

from checkeval_core.annotation.jobs import create_job, save_answer
from checkeval_core.judges.base import BinaryResult
from checkeval_core.judges.fake import FakeJudge
from checkeval_core.judges.spec import BACKENDS, Backend, register_backend
from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.escalation.options import escalation_params
from checkeval_core.store import open_db
from tests.helpers import make_runs_task, submit_answered


class Opposite(FakeJudge):
    """A second judge that says the opposite of ``fake``."""

    def binary(self, requests):
        return [BinaryResult(verdict="no" if r.verdict == "yes" else "yes",
                             p_yes=round(1 - r.p_yes, 4), raw="No" if r.verdict == "yes"
                             else "Yes", mode="logprob") for r in super().binary(requests)]


@pytest.mark.browser
def test_escalated_answer_and_peoples_answers_on_traces_at_1440(app_server, screen, tmp_path):
    register_backend(Backend("fakeb", Opposite, title="test B"))
    try:
        db = open_db(app_server.db_path)
        task = make_runs_task(db, tmp_path)
        rid = create_run(db, task, "fake", "rocketeval",
                         params=escalation_params("fakeb", margin=0.2))
        assert execute_run(app_server.db_path, rid)["status"] == "completed"
        pk, qid, said = db.execute("SELECT item_id, question_id, verdict FROM answer WHERE "
                                   "run_id = ? AND judge = 'fakeb' LIMIT 1", [rid]).fetchone()
        # people's majority (2 of 3) against the second judge's answer: a disagreement with
        # people (a 1-1 tie would be no label, so no disagreement, and the filter hides it)
        other = {"yes": "no", "no": "yes"}[said]
        job = create_job(db, task, ["ann", "bob", "cy"], overlap=3)
        for who, value in (("ann", other), ("bob", other), ("cy", said)):
            save_answer(db, job, who, pk, qid, value)
        submit_answered(db, job)
        db.close()
    finally:
        BACKENDS.pop("fakeb", None)
    screen.goto(f"{app_server.url}/traces?runs={rid}&item={pk}&show=people")
    screen.get_by_text("Yes/No decisions").first.wait_for()
    screen.get_by_text(f"#{rid} = v1 · fake → fakeb · rocketeval · 9 items").first.wait_for()
    screen.locator("[data-testid='stStatusWidget']").wait_for(state="hidden")
    grid = screen.locator("[data-testid='stDataFrame']").filter(
        has=screen.locator('[role="columnheader"]', has_text="people")).first
    grid.scroll_into_view_if_needed()
    screen.wait_for_timeout(2000)  # the grid draws on a canvas after it is attached
    screen.screenshot(path="/tmp/g-traces-escalated-1440.png")
    cells = grid.locator('[role="gridcell"]').all_inner_texts()
    assert any("by fakeb (fake said" in c for c in cells)
    assert ("✓ 1 · ✗ 2" if other == "no" else "✓ 2 · ✗ 1") in cells


@pytest.mark.browser
def test_plain_csv_import_on_the_data_page_at_1440(app_server, screen, tmp_path):
    src = tmp_path / "tiny.csv"
    src.write_text("input,output,score\nWhat is 2+2?,4,5\nCapital of France?,Lyon,1\n")
    screen.goto(f"{app_server.url}/data")
    screen.get_by_role("tab", name="Import a file").click()
    screen.locator("input[type='file']").set_input_files(str(src))
    screen.get_by_text("Import waits for: where the file goes").wait_for()
    screen.get_by_text("a new task", exact=True).click()
    screen.get_by_label("New task name").fill("T")
    screen.get_by_label("New task name").press("Enter")
    screen.get_by_text("Import waits for: the new task's kind.").wait_for()
    assert screen.get_by_role("button", name="Import").is_disabled()
    screen.get_by_role("button", name="Import").scroll_into_view_if_needed()
    screen.wait_for_timeout(1000)
    screen.screenshot(path="/tmp/g-data-import-1440.png")
    assert screen.get_by_text("each item's id is its row number (1–2)").count() == 1
