"""Browser: Checklist review shows each proposed question's evidence on dev items beside its
text, at 1440 × 900 (the screenshot is looked at by the person changing the layout)."""

import pytest

from checkeval_core.checklists.evidence import question_evidence
from checkeval_core.checklists.grounded import generate
from checkeval_core.store import open_db
from tests.helpers import evidence_task, idle


@pytest.mark.browser
def test_review_table_shows_evidence_and_provenance(app_server, page, tmp_path):
    db = open_db(app_server.db_path)
    evidence_task(db)
    generate(db, "ev", "coherence", "contrastive", "fake", n=1)
    question_evidence(db, "ev", "fake", n_items=24)
    db.close()
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(app_server.url + "/checklist")
    # the grid draws on a canvas; its accessible header cells say which columns it has
    page.get_by_text("evidence on dev items").first.wait_for(state="attached", timeout=90_000)
    idle(page)
    page.screenshot(path=str(tmp_path / "review.png"), full_page=True)
