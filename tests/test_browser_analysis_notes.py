"""Browser at 1440×900 on the demo: the Analysis page's correlation table cuts its reasons —
why an average has no interval ("no interval: a mean over dimensi…"), why a dimension counts
fewer documents ("n docume…", in a column off to the right). Each distinct note is written out
in full under the table, inside the viewport, with the rows it is about."""

import pytest

from checkeval_core.demo import load_demo
from checkeval_core.store import open_db
from tests.helpers import idle


@pytest.mark.browser
@pytest.mark.slow
def test_the_correlation_notes_are_readable_in_full(app_server, screen, monkeypatch):
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "1")  # the shipped runs, as the tour has them
    db = open_db(app_server.db_path)
    load_demo(db)
    db.close()
    page = screen
    page.goto(app_server.url + "/analysis")
    notes = page.get_by_test_id("stCaptionContainer").filter(has_text="Notes in full")
    notes.wait_for(timeout=180_000)
    idle(page)
    notes.scroll_into_view_if_needed()
    text = notes.inner_text()
    # the average's reason for having no interval and how it is made, word for word
    assert "AVERAGE" in text
    assert "no interval: a mean over dimensions (see each dimension's)" in text
    assert "mean over 4 dimension(s)" in text
    box = notes.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= 1440
    page.screenshot(path=str(app_server.db_path.parent / "analysis-notes.png"))
