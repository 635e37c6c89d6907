"""Names are per role: a name typed as annotator is never the reviewer on Checklist review nor
the coordinator on Annotation jobs (each role is asked where it acts), while a login names the
person in every role."""


import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core.annotation import jobs as J
from checkeval_core.checklists import editing as M
from checkeval_core.identity import TRUSTED_HEADER_ENV
from checkeval_core.team import ADMINS_ENV
from tests.conftest import APP
from tests.helpers import dialogue_task, submit_answered


@pytest.fixture(autouse=True)
def _no_header_trust(monkeypatch):
    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)


def _job_with_disagreement(db, tmp_path) -> int:
    dialogue_task(db, tmp_path, 2, ["Is it polite?", "Is it short?"], definition="good")
    jid = J.create_job(db, "chat", ["alice", "bob"], 2, n_items=2)
    item = J.queue(db, jid, "alice")[0]["item_pk"]
    qid = J.job_questions(db, jid, item)[0]["id"]
    J.save_answer(db, jid, "alice", item, qid, "yes")
    J.save_answer(db, jid, "bob", item, qid, "no")
    submit_answered(db, jid)
    return jid


def test_annotator_name_is_not_reviewer_nor_coordinator(db, tmp_path):
    _job_with_disagreement(db, tmp_path)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/annotate.py").run()
    at.text_input(key="ann_name").input("alice").run()
    assert at.text_input(key="ann_name").label == "Your name as annotator"
    assert len(at.radio) == 2  # alice's queue is open

    at.switch_page("app_pages/checklist.py").run()
    box = at.text_input(key="rv_annotator")
    assert box.value == "" and "reviewer" in box.label  # asked, not inherited
    qid = M.questions(db, "chat")[0]["id"]
    at.multiselect(key="rv_status").set_value(["kept"]).run()
    at.multiselect(key="rv_selected").set_value([qid]).run()
    at.button(key="rv_keep").click().run()
    assert any("name" in e.value for e in at.error)
    assert db.execute("SELECT COUNT(*) FROM annotation WHERE kind = 'validation'"
                      ).fetchone()[0] == 0

    at.switch_page("app_pages/annotation_jobs.py").run()
    at.selectbox(key="aj_task").select("chat").run()
    box = at.text_input(key="aj_coord")
    assert box.value == "" and "coordinator" in box.label
    at.radio(key="aj_value").set_value("yes").run()  # nothing is preselected
    at.button(key="aj_settle").click().run()
    assert db.execute("SELECT COUNT(*) FROM adjudication").fetchone()[0] == 0

    # each role keeps its own name when its page is visited again
    box.input("carol").run()
    at.button(key="aj_settle").click().run()
    assert db.execute("SELECT coordinator FROM adjudication").fetchall() == [("carol",)]
    at.switch_page("app_pages/annotate.py").run()
    assert at.text_input(key="ann_name").value == "alice"
    at.switch_page("app_pages/checklist.py").run()
    assert at.text_input(key="rv_annotator").value == ""


def test_login_names_every_role(db, tmp_path, monkeypatch):
    monkeypatch.setenv(ADMINS_ENV, "dana")  # behind a login a person needs a role to act
    _job_with_disagreement(db, tmp_path)
    at = AppTest.from_file(APP, default_timeout=120)
    at.user = {"is_logged_in": True, "email": "dana", "email_verified": True, "name": "D."}
    at.run()
    for page, role in (("app_pages/annotate.py", "annotator"),
                       ("app_pages/checklist.py", "reviewer")):
        at.switch_page(page).run()
        assert not at.exception
        assert not [t for t in at.text_input if t.key in ("ann_name", "rv_annotator")]
        assert any("dana" in c.value and f"acting as {role}" in c.value for c in at.caption)
