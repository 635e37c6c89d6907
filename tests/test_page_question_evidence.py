"""The Dimensions page offers contrastive and inductive generation and tests the proposed
questions on dev items (cost said before the button); Checklist review shows each question's
evidence and provenance beside its text (AppTest, fake judge)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from checkeval_core.checklists.evidence import latest_evidence
from tests.helpers import APP, evidence_task


def test_dimensions_generate_contrastive_and_test_then_review_shows_it(db):
    q = evidence_task(db)
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.switch_page("app_pages/dimensions.py").run()
    at.selectbox(key="dim_task").select("ev").run()
    assert {"contrastive", "inductive"} <= set(at.selectbox(key="gen_strategy").options)
    at.text_input(key="gen_judge").input("fake").run()
    at.selectbox(key="gen_strategy").select("contrastive").run()
    assert any("dev pair(s) of outputs" in c.value for c in at.caption)
    at.button(key="gen_run").click().run()
    assert not at.exception, at.exception
    assert any("questions proposed" in s.value for s in at.success)
    at.number_input(key="ev_items").set_value(24).run()
    # the cost of testing is said before its button, and nothing is asked or stored for it
    assert "judge calls" in at.caption[-1].value and not latest_evidence(db, "ev")
    at.button(key="ev_run").click().run()
    assert not at.exception, at.exception
    assert any("tested on dev items" in s.value for s in at.success)
    ev = latest_evidence(db, "ev")
    assert ev[q["constant"]]["flag"] == "never_varies"
    at.switch_page("app_pages/checklist.py").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value.set_index("id")
    assert table.loc[q["constant"], "evidence on dev items"].startswith("⚑ never_varies")
    grown = [i for i in table.index if table.loc[i, "provenance"]]
    assert grown and all(" over " in table.loc[i, "provenance"] for i in grown)
