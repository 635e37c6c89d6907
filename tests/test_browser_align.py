"""Browser at 1440×900: the Align page on the SummEval demo with a fake-judge run, a sample
drawn for three annotators and their (simulated, known) answers to two questions — the
headline, the per-question table, and a disagreeing item linked to its trace."""

from __future__ import annotations

import pytest


def build_aligned(db) -> int:
    from checkeval_core.analysis.align import run_answers, start_sample
    from checkeval_core.annotation.jobs import save_answer
    from checkeval_core.demo import load_demo
    from tests.helpers import small_run, submit_answered

    load_demo(db)
    rid = small_run(db)
    jid, _ = start_sample(db, rid, ["ann1", "ann2"], overlap=2, n=24)
    sample = {r[0] for r in db.execute("SELECT item_id FROM annotation_assignment WHERE "
                                       "job_id = ?", [jid])}
    ans = run_answers(db, rid)
    ans = ans[ans["item_pk"].isin(sample) & ans["verdict"].isin(["yes", "no"])]
    for k, q in enumerate(sorted(ans["question_id"].unique())[:2]):
        for i, r in enumerate(ans[ans["question_id"] == q].itertuples()):
            v = r.verdict if (k == 0 or i % 3) else ("no" if r.verdict == "yes" else "yes")
            for who in ("ann1", "ann2"):
                save_answer(db, jid, who, int(r.item_pk), int(q), v)
    submit_answered(db, jid)
    return rid


@pytest.mark.browser
@pytest.mark.slow
def test_align_page_at_1440(app_server, screen):
    from checkeval_core.store import open_db

    db = open_db(app_server.db_path)
    build_aligned(db)
    db.close()
    screen.goto(app_server.url + "/align")
    screen.get_by_text("Per question", exact=True).wait_for()
    screen.locator("[data-testid='stStatusWidget']").wait_for(state="hidden")
    screen.get_by_text("agrees with people on").first.wait_for()
    screen.locator("[data-testid='stDataFrame']").first.scroll_into_view_if_needed()
    screen.wait_for_timeout(2000)  # the grid draws on a canvas after it is attached
    screen.screenshot(path="/tmp/align-1440.png")
    # the whole page: the sample form collapsed (answers exist), the table below
    assert screen.get_by_text("Start a sample for people to answer").count() == 1
    assert screen.locator("[data-testid='stDataFrame']").count() >= 1
