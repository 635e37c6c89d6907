"""Browser at 1440×900: the demo as shipped plus the README's routine small run (3 items of
v3 with the ``fake`` judge). Compare runs still opens on v2 → v3 of the 192-item runs, read on
held-out documents; Versions opens on a dimension the change touched; Improve on the full v3
run — every run named by its one label."""

from __future__ import annotations

import pytest

from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.selection import reference_runs
from tests.helpers import demo_template, idle, restore

TASK = "summeval-demo"


def _selected(pg, label: str) -> str:
    """The shown value of the selectbox labelled ``label``."""
    box = pg.get_by_test_id("stSelectbox").filter(has=pg.get_by_text(label, exact=True))
    box.first.wait_for()
    return box.first.locator("input").first.input_value()


@pytest.mark.browser
def test_a_small_run_leaves_the_evidence_pages_on_the_full_runs(app_server, screen,
                                                                monkeypatch):
    from checkeval_core.store import open_db

    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "1")
    db = open_db(app_server.db_path)
    restore(demo_template(), db)
    small = create_run(db, TASK, "fake", "rocketeval", checklist=3, limit=3)
    execute_run(app_server.db_path, small)
    refs = {(r["version"], r["judge"], r["method"]): r["run"] for r in reference_runs(db, TASK)}
    v2, v3 = refs[(2, "embedded", "rocketeval")], refs[(3, "embedded", "rocketeval")]
    db.close()
    full = {v2: f"#{v2} · v2 · embedded · rocketeval · 192 items",
            v3: f"#{v3} · v3 · embedded · rocketeval · 192 items"}

    screen.goto(app_server.url + "/compare")
    screen.get_by_text("Items, largest regression first").wait_for()
    idle(screen)
    assert _selected(screen, "A (baseline)") == full[v2]
    assert _selected(screen, "B (compared with A)") == full[v3]
    assert screen.get_by_role("radio", name="held-out groups").is_checked()
    screen.get_by_text("held-out groups of the task's split only").first.wait_for()
    screen.wait_for_timeout(800)
    screen.screenshot(path="/tmp/refruns-compare-1440.png")

    screen.goto(app_server.url + "/versions")
    screen.get_by_text("Agreement over versions", exact=True).wait_for()
    idle(screen)
    screen.get_by_text("changed questions of").first.wait_for()
    dim = _selected(screen, "Dimension")
    assert dim and dim not in ("coherence", "mean over dimensions")
    screen.wait_for_timeout(800)
    screen.screenshot(path="/tmp/refruns-versions-1440.png")

    screen.goto(app_server.url + "/improve")
    screen.get_by_text("Agreement before → after").wait_for()
    idle(screen)
    chips = screen.get_by_test_id("stMultiSelect").first.inner_text()
    assert full[v3] in chips and f"#{small} " not in chips
    screen.wait_for_timeout(800)
    screen.screenshot(path="/tmp/refruns-improve-1440.png")
