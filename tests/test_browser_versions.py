"""Browser at 1440×900: the Versions page on the SummEval demo with two frozen versions (the
published checklist and a pruned one), a fake-judge run of each over six documents, and a
dev / held-out split — history chart, table with N and intervals, the diff beside Δ."""

from __future__ import annotations

import pytest


def build_two_versions(db, limit: int = 96) -> tuple[int, int]:
    """summeval-demo: v1 (published), v2 = v1 minus the last two kept questions of each
    dimension; a finished fake checkeval run of each on the first ``limit`` items; split."""
    from checkeval_core.checklists.versions import freeze
    from checkeval_core.demo import load_demo
    from checkeval_core.runs import create_run, execute_run
    from checkeval_core.store import db_path
    from checkeval_core.task_split import set_split

    load_demo(db)
    dims = [r[0] for r in db.execute("SELECT DISTINCT dimension_id FROM question q JOIN task t "
                                      "ON t.id = q.task_id WHERE t.name = 'summeval-demo' AND "
                                      "q.status = 'kept'")]
    for d in dims:
        db.execute("UPDATE question SET status = 'rejected', reason = 'pruned on dev' WHERE id "
                   "IN (SELECT id FROM question WHERE dimension_id = ? AND status = 'kept' "
                   "ORDER BY position DESC LIMIT 2)", [d])
    freeze(db, "summeval-demo", note="pruned")
    runs = []
    for version in (1, 2):
        rid = create_run(db, "summeval-demo", "fake", "checkeval", checklist=version,
                         limit=limit)
        execute_run(db_path(db), rid)
        runs.append(rid)
    set_split(db, "summeval-demo", 0.5, seed=0)
    return runs[0], runs[1]


@pytest.mark.browser
def test_versions_page_at_1440(app_server, screen):
    from checkeval_core.store import open_db

    db = open_db(app_server.db_path)
    build_two_versions(db)
    db.close()
    screen.goto(app_server.url + "/versions")
    screen.get_by_text("Agreement over versions", exact=True).wait_for()
    screen.wait_for_load_state("networkidle")
    screen.locator("[data-testid='stStatusWidget']").wait_for(state="hidden")
    # the chart's x axis shows both versions; every series is labelled in the legend
    for v in ("v1", "v2"):
        screen.locator(".js-plotly-plot text", has_text=v).first.wait_for()
    screen.locator(".js-plotly-plot .legendtext", has_text="fake · checkeval").first.wait_for()
    screen.screenshot(path="/tmp/versions-1440-top.png")
    # the split control: what is stored, and Set split asks before changing anything
    screen.get_by_text("Dev / held-out split — set").click()
    screen.get_by_text("6 dev and 6 held-out groups (seed 0, held-out share 0.5)").wait_for()
    screen.get_by_role("button", name="Set split").click()
    screen.get_by_text("Keep every group where it is and place only new ones?").wait_for()
    screen.wait_for_timeout(500)  # let the expander finish growing before the picture
    screen.screenshot(path="/tmp/versions-1440-split.png")
    screen.get_by_role("button", name="Cancel").click()
    screen.get_by_text("Keep every group where it is").wait_for(state="detached")
    heading = screen.get_by_text("What changed between two versions", exact=True)
    heading.scroll_into_view_if_needed()
    screen.get_by_text("0 question(s) added, 8 removed, 0 edited", exact=False).wait_for()
    # Δ agreement beside the diff, its verdict on screen at 1440 px (it was off to the right)
    # (the grid renders the header cells of the columns in view only)
    screen.locator('[role="columnheader"]', has_text="verdict").first.wait_for(state="attached")
    screen.screenshot(path="/tmp/versions-1440-diff.png")
