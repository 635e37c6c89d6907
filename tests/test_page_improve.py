"""AppTest of the Improve checklist page: before → after on dev and held-out with N and
intervals, the dropped questions with their reasons, the cost of new questions before they
are written, and the review queue only after a confirmation."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core import task_split as S
from checkeval_core.team import ADMINS_ENV
from tests.conftest import APP, open_app_page
from tests.helpers import build_proposal_task as build


def _table(at, column):
    return next(d.value for d in at.dataframe if column in d.value.columns)


@pytest.mark.usefixtures("few_groups_allowed")
def test_improve_page_shows_proposal_and_queues_after_confirm(db):
    rid, qid = build(db)
    at = open_app_page("app_pages/improve.py")
    # no split yet: the message (markdown-escaped) says which command makes one
    assert any("checkeval split" in e.value.replace("\\", "") and "--task pt" in
               e.value.replace("\\", "") for e in at.error)
    sp = S.set_split(db, "pt", 0.25, seed=0)  # 6 dev documents: enough to send
    at = open_app_page("app_pages/improve.py")
    assert at.multiselect(key="im_runs").value == [rid]
    figs = _table(at, "95% CI of Δ (paired)")
    assert list(figs["part"]) == ["dev (chosen here)", "held-out (reported only)"]
    assert list(figs["groups"]) == [len(sp["dev"]), len(sp["heldout"])]
    assert list(figs["after"]) == ["1.000", "1.000"]
    assert all(c.startswith("[") for c in figs["95% CI before"])
    dropped = _table(at, "rule")
    assert set(dropped["id"]) == {qid["constant"], qid["copy"], qid["anti"]}
    assert all(dropped["reason"].str.len() > 10)
    # new questions: the cost first, nothing asked
    at.number_input(key="im_new").set_value(1).run()
    assert not at.exception, at.exception
    assert any("0 new question" in m.value and "judge call" in m.value for m in at.markdown)
    # queue: nothing before Confirm, then three questions proposed; pressing again is harmless
    at.button(key="im_send").click().run()
    assert db.execute("SELECT COUNT(*) FROM question WHERE status = 'proposed'"
                      ).fetchone()[0] == 0
    at.button(key="im_confirm_yes").click().run()
    assert not at.exception, at.exception
    assert {r[0] for r in db.execute("SELECT id FROM question WHERE status = 'proposed'")} == {
        qid["constant"], qid["copy"], qid["anti"]}
    assert any("Queued 3 question(s)" in s.value for s in at.success)


def test_improve_page_writes_new_questions_only_on_request(db):
    rid, qid = build(db)
    sp = S.set_split(db, "pt", 0.25, seed=0)  # 6 dev documents: enough to send
    # the kept question orders one dev document backwards: a disagreement to explain
    db.execute("UPDATE answer SET p_yes = 0.5 - p_yes WHERE question_id = ? AND item_id IN "
               "(SELECT id FROM item WHERE group_id = ?)", [qid["good"], sp["dev"][0]])
    at = open_app_page("app_pages/improve.py")
    at.checkbox(key="im_weights").check().run()
    at.number_input(key="im_new").set_value(1).run()
    assert not at.exception, at.exception
    assert any("1 new question" in m.value and "32 judge call" in m.value for m in at.markdown)
    assert not any("Does the summary mention" in str(d.value) for d in at.dataframe)
    n_q = db.execute("SELECT COUNT(*) FROM question").fetchone()[0]
    at.text_input(key="im_judge").input("fake").run()  # the default is the embedded model
    at.button(key="im_write").click().run()
    assert not at.exception, at.exception
    new = _table(at, "problem")
    assert new["question"].str.startswith("Does the summary mention").all()
    assert db.execute("SELECT COUNT(*) FROM question").fetchone()[0] == n_q  # not queued yet
    at.button(key="im_send").click().run()
    at.button(key="im_confirm_yes").click().run()
    assert not at.exception, at.exception
    assert db.execute("SELECT COUNT(*) FROM question WHERE status = 'proposed' AND flags LIKE "
                      "'%proposal%'").fetchone()[0] == 1


def test_improve_send_needs_as_many_dev_documents_as_send_flagged(db):
    """On 4 dev documents there is no proposal (the small-sample rule) and nothing can be
    sent: the same minimum (``MIN_FLAG_GROUPS``) as *Send flagged* on Analysis."""
    from checkeval_core.stats.bootstrap import minimum

    MIN_FLAG_GROUPS = minimum()  # read now: an earlier test may have imported a lowered copy

    build(db)
    sp = S.set_split(db, "pt", 0.5, seed=0)
    assert len(sp["dev"]) < MIN_FLAG_GROUPS
    at = open_app_page("app_pages/improve.py")
    assert any("no proposal" in c.value and "fewer than" in c.value for c in at.caption)
    # said once: not also "Nothing to drop: every question … helps on dev"
    assert not any("Nothing to drop" in i.value for i in at.info)
    assert at.button(key="im_send").disabled
    assert any(f"needs ≥ {MIN_FLAG_GROUPS}" in w.value for w in at.warning)
    assert db.execute("SELECT COUNT(*) FROM question WHERE status = 'proposed'"
                      ).fetchone()[0] == 0


@pytest.mark.usefixtures("few_groups_allowed")
def test_improve_send_behind_a_login_records_the_person(db, monkeypatch):
    """Security audit D10: queueing a proposal records who did it; behind a login that is
    the logged-in person (the core refuses any other name, a blank one included)."""
    monkeypatch.setenv(ADMINS_ENV, "dana")
    build(db)
    S.set_split(db, "pt", 0.25, seed=0)
    at = AppTest.from_file(APP, default_timeout=180)
    at.user = {"is_logged_in": True, "name": "Dana D.", "sub": "dana"}  # named by sub
    at.run()
    at.switch_page("app_pages/improve.py").run()
    at.button(key="im_send").click().run()
    at.button(key="im_confirm_yes").click().run()
    assert not at.exception, at.exception
    assert any("Queued 3 question(s)" in s.value for s in at.success)
    assert {r[0] for r in db.execute("SELECT actor FROM review_event WHERE action = "
                                     "'proposal_drop'")} == {"dana"}
