"""App actions you can trust (issue 13 items 5, 10, 11, 12): confirmed and refused deletes,
idempotent submits, reasons that stay with their decision, annotators kept apart, and
formula-safe table downloads. Core tests first, then AppTests that click like a user."""

import csv
import io
import json

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core.annotation import jobs as J
from checkeval_core.checklists import editing as M
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.review import decide
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.identity import TRUSTED_HEADER_ENV
from checkeval_core.runs import list_runs
from checkeval_core.runs.dedupe import create_run_once
from checkeval_core.store import task_id
from studio_ui.widgets import table_csv
from tests.conftest import APP
from tests.helpers import item_button, submit_answered

QUESTIONS = ["Is the reply polite?", "Does the reply answer the question?",
             "Is the reply short?"]
EVIL = "=cmd|' /C calc'!A0"


@pytest.fixture(autouse=True)
def _no_header_trust(monkeypatch):
    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)


def chat_task(db, tmp_path, n=2, frozen=True):
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"id": f"r{i}", "group_id": "g", "context": "Hi?",
                                     "output": f"Fine {i}.", "scores": {"quality": i % 3 + 1}})
                         + "\n" for i in range(n)))
    import_file(db, p, "chat", kind="dialogue")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"quality": {"definition": "good reply", "sub_dimensions": {
        "Basics": {"seed": QUESTIONS}}}, "style": {"definition": "nice", "sub_dimensions": {
            "Tone": {"seed": ["Is it friendly?"]}}}}))
    import_checklist(db, "chat", c)
    if frozen:
        freeze(db, "chat")


def app(page):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def count(db, sql, params=()):
    return db.execute(sql, list(params)).fetchone()[0]


# --- item 10: deleting a dimension never wipes human annotations -------------------------

def annotate_quality(db):
    """Two annotators answer every quality question on 2 items; one review decision."""
    jid = J.create_job(db, "chat", ["ann", "bob"], 2, n_items=2)
    for who in ("ann", "bob"):
        for e in J.queue(db, jid, who):
            for q in J.job_questions(db, jid, e["item_pk"]):
                if q["dimension"] == "quality":
                    J.save_answer(db, jid, who, e["item_pk"], q["id"], "yes")
    qid = M.questions(db, "chat", dimension="quality")[0]["id"]
    decide(db, [qid], "rev", "keep")
    return jid


def test_core_refuses_to_delete_annotated_dimension(db, tmp_path):
    chat_task(db, tmp_path)
    annotate_quality(db)
    before = count(db, "SELECT COUNT(*) FROM annotation")
    assert before == 2 * 2 * 3 + 1
    dim = M.dimension_id(db, "chat", "quality")
    with pytest.raises(M.InUse) as e:
        M.delete_dimension(db, dim)
    assert "12 human answer(s) and 1 review decision(s) by 3 annotator(s)" in str(e.value)
    assert count(db, "SELECT COUNT(*) FROM annotation") == before
    assert count(db, "SELECT COUNT(*) FROM dimension WHERE id = ?", [dim]) == 1
    with pytest.raises(M.InUse):
        M.delete_question(db, M.questions(db, "chat", dimension="quality")[0]["id"])
    # a dimension nobody annotated can go
    M.delete_dimension(db, M.dimension_id(db, "chat", "style"))
    assert [d["name"] for d in M.dimensions(db, "chat")] == ["quality"]
    assert count(db, "SELECT COUNT(*) FROM annotation") == before


def test_page_delete_needs_confirmation_and_is_refused_with_annotations(db, tmp_path):
    chat_task(db, tmp_path)
    annotate_quality(db)
    at = app("app_pages/dimensions.py")
    at.selectbox(key="dim_task").select("chat").run()
    at.selectbox(key="dim_pick").select("style").run()
    at.button(key="dim_delete").click().run()
    assert not at.exception
    assert {d["name"] for d in M.dimensions(db, "chat")} == {"quality", "style"}  # 1 click
    at.button(key="dim_delete_cancel").click().run()
    assert not [b for b in at.button if b.key == "dim_delete_confirm"]
    at.button(key="dim_delete").click().run()
    at.button(key="dim_delete_confirm").click().run()
    assert {d["name"] for d in M.dimensions(db, "chat")} == {"quality"}
    at.selectbox(key="dim_pick").select("quality").run()
    at.button(key="dim_delete").click().run()
    at.button(key="dim_delete_confirm").click().run()
    assert not at.exception
    assert any("nothing was deleted" in e.value for e in at.error)
    assert {d["name"] for d in M.dimensions(db, "chat")} == {"quality"}
    assert count(db, "SELECT COUNT(*) FROM annotation") == 13


# --- item 11: double submits and sticky fields -------------------------------------------

def test_create_run_once_core(db, tmp_path):
    chat_task(db, tmp_path)
    a = create_run_once(db, "chat", "fake", "checkeval", limit=2)
    b = create_run_once(db, "chat", "fake", "checkeval", limit=2)
    assert a[1] is True and b == (a[0], False)
    assert count(db, "SELECT COUNT(*) FROM run") == 1
    assert create_run_once(db, "chat", "fake", "checkeval", limit=1)[1] is True  # other items
    db.execute("UPDATE run SET status = 'completed'")
    assert create_run_once(db, "chat", "fake", "checkeval", limit=2)[1] is True  # not active


def test_run_page_enter_then_start_makes_one_run(db, tmp_path, launched):
    started = launched
    chat_task(db, tmp_path)
    at = app("app_pages/run.py")
    at.selectbox(key="run_task").select("chat").run()
    at.multiselect(key="run_judges").set_value([])
    at.text_input(key="run_extra").input("fake")
    at.multiselect(key="run_methods").set_value(["checkeval"])
    at.number_input(key="run_limit").set_value(2)
    submit = next(b for b in at.button if b.label == "Start")
    submit.click().run()  # Enter in "Items" submits the form …
    next(b for b in at.button if b.label == "Start").click().run()  # … and so does Start
    assert not at.exception
    assert len(list_runs(db, "chat")) == 1 and started == [1]
    assert any("already pending or running" in i.value for i in at.info)


def test_review_reason_stays_with_its_decision_and_edit_once(db, tmp_path):
    chat_task(db, tmp_path, frozen=False)
    qs = [q["id"] for q in M.questions(db, "chat")]
    at = app("app_pages/checklist.py")
    at.selectbox(key="rv_task").select("chat").run()
    at.text_input(key="rv_annotator").input("alice").run()
    at.multiselect(key="rv_status").set_value(["proposed", "kept", "filtered", "rejected"]).run()
    at.multiselect(key="rv_selected").set_value([qs[0]]).run()
    at.text_input(key="rv_reason").input("too vague").run()
    at.button(key="rv_reject").click().run()
    # a rejected question leaves the selection: the next decision acts only on what is picked
    assert at.multiselect(key="rv_selected").value == [] and at.button(key="rv_keep").disabled
    at.multiselect(key="rv_selected").set_value([qs[0]]).run()
    at.button(key="rv_keep").click().run()  # same question, nothing typed this time
    at.multiselect(key="rv_selected").set_value([qs[1]]).run()
    at.button(key="rv_keep").click().run()
    assert not at.exception
    reasons = dict(db.execute("SELECT question_id, reason FROM annotation "
                              "WHERE kind = 'validation'").fetchall())
    assert reasons == {qs[0]: "", qs[1]: ""}
    # a reason typed for one selection is gone when the selection changes
    at.text_input(key="rv_reason").input("meant for q2 only").run()
    at.multiselect(key="rv_selected").set_value([qs[2]]).run()
    at.button(key="rv_keep").click().run()
    assert db.execute("SELECT reason FROM annotation WHERE question_id = ?",
                      [qs[2]]).fetchone()[0] == ""
    # Save edit twice: one edited question
    at.multiselect(key="rv_selected").set_value([qs[3]]).run()
    at.text_input(key="rv_newtext").input("Is the tone friendly?").run()
    at.button(key="rv_edit").click().run()
    assert not at.exception
    # the edited question leaves the selection, so a second press has nothing to act on
    assert at.button(key="rv_edit").disabled
    assert count(db, "SELECT COUNT(*) FROM question WHERE parent_id = ?", [qs[3]]) == 1


def test_decide_same_edit_twice_core(db, tmp_path):
    chat_task(db, tmp_path, frozen=False)
    qid = M.questions(db, "chat")[0]["id"]
    a = decide(db, [qid], "alice", "edit", new_text="Is it  polite enough?")
    b = decide(db, [qid], "alice", "edit", new_text="Is it polite enough?")
    assert a == b
    assert count(db, "SELECT COUNT(*) FROM question WHERE parent_id = ?", [qid]) == 1


def test_save_seed_twice_adds_once(db, tmp_path):
    chat_task(db, tmp_path, frozen=False)
    at = app("app_pages/dimensions.py")
    at.selectbox(key="dim_task").select("chat").run()
    at.selectbox(key="dim_pick").select("quality").run()
    sub = M.dimensions(db, "chat")[0]["sub_dimensions"][0]["id"]
    at.text_input(key=f"newseed_{sub}").input("Is the reply kind?").run()
    at.button(key=f"seedsave_{sub}").click().run()
    at.button(key=f"seedsave_{sub}").click().run()
    assert not at.exception
    assert count(db, "SELECT COUNT(*) FROM question WHERE text = ?", ["Is the reply kind?"]) == 1
    tid = task_id(db, "chat")
    dim = M.dimension_id(db, "chat", "quality")
    assert M.add_seed(db, tid, dim, sub, " Is the reply   kind? ")[1] is False


def test_create_job_twice_makes_one_job(db, tmp_path):
    chat_task(db, tmp_path)
    at = app("app_pages/annotation_jobs.py")
    at.selectbox(key="aj_task").select("chat").run()
    at.text_input(key="aj_annotators").input("a, b")
    at.number_input(key="aj_n").set_value(2)
    at.text_input(key="aj_creator").input("coord")  # the job records who created it
    next(b for b in at.button if b.label == "Create job").click().run()
    next(b for b in at.button if b.label == "Create job").click().run()
    assert not at.exception
    assert len(J.list_jobs(db, "chat")) == 1
    assert count(db, "SELECT COUNT(*) FROM annotation_assignment") == 4
    assert any("already has exactly these settings" in i.value for i in at.info)


# --- item 12: annotators on one browser never see or lose each other's answers ------------

def test_annotate_switching_annotator_leaks_nothing(db, tmp_path):
    chat_task(db, tmp_path)
    jid = J.create_job(db, "chat", ["alice", "bob"], 2, n_items=2)
    at = app("app_pages/annotate.py")
    at.text_input(key="ann_name").input("alice").run()
    n_q = len(at.radio)
    assert n_q == 4
    for r in at.radio:
        r.set_value("yes")
    at.run()
    at.text_input(key="ann_name").input("bob").run()
    assert not at.exception
    assert [r.value for r in at.radio] == [None] * n_q  # nothing of alice's pre-selected
    for r in at.radio:
        r.set_value("yes")  # the same option alice chose
    at.run()
    item_button(at, "ann_submit").click().run()  # Submit moves on to bob's next item
    assert [r.value for r in at.radio] == [None] * n_q
    for r in at.radio:
        r.set_value("no")
    at.run()
    assert not at.exception
    stored = [a for e in J.queue(db, jid, "bob")
              for a in J.answers_of(db, jid, "bob", e["item_pk"]).values()]
    assert len(stored) == 2 * n_q and sorted(set(stored)) == ["no", "yes"]
    first = J.queue(db, jid, "alice")[0]["item_pk"]
    assert list(J.answers_of(db, jid, "alice", first).values()) == ["yes"] * n_q


# --- item 5: explicit downloads are formula-safe -----------------------------------------

def test_table_csv_neutralises_formulas():
    import pandas as pd

    text = table_csv(pd.DataFrame([{"question": EVIL, "score": -0.5, "n": None}]))
    assert text.splitlines() == ["question,score,n", "'=cmd|' /C calc'!A0,-0.5,"]
    assert table_csv([{"a": "+1", "b": "@SUM(A1)"}]).splitlines()[1] == "'+1,'@SUM(A1)"


def test_annotation_jobs_downloads_are_formula_safe(db, tmp_path, monkeypatch):
    import streamlit

    chat_task(db, tmp_path)
    jid = J.create_job(db, "chat", [EVIL, "bob"], 2, n_items=2)
    item = J.queue(db, jid, "bob")[0]["item_pk"]
    qid = J.job_questions(db, jid, item)[0]["id"]
    J.save_answer(db, jid, EVIL, item, qid, "yes")
    J.save_answer(db, jid, "bob", item, qid, "no")
    submit_answered(db, jid)
    got = {}
    real = streamlit.download_button

    def spy(label, data, *a, **kw):
        got[kw.get("key")] = data
        return real(label, data, *a, **kw)

    monkeypatch.setattr(streamlit, "download_button", spy)
    at = app("app_pages/annotation_jobs.py")
    at.selectbox(key="aj_task").select("chat").run()
    assert not at.exception
    assert {"aj_dl_progress", "aj_dl_answers", "aj_dl_dis"} <= set(got)
    for key in ("aj_dl_progress", "aj_dl_answers", "aj_dl_dis"):
        cells = [c for r in csv.reader(io.StringIO(got[key])) for c in r]
        assert any(c.startswith("'" + EVIL) for c in cells), key
        assert not [c for c in cells if c[:1] in ("=", "+", "@")], key


def test_traces_decisions_download_is_formula_safe(db, tmp_path, monkeypatch):
    import streamlit

    from checkeval_core.runs import create_run, execute_run
    from checkeval_core.store import db_path

    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps({"id": "r0", "context": "Hi?", "output": "Fine."}) + "\n")
    import_file(db, p, "chat", kind="dialogue")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"quality": {"definition": "good", "sub_dimensions": {
        "Basics": {"seed": [EVIL + " Is it polite?"]}}}}))
    import_checklist(db, "chat", c)
    freeze(db, "chat")
    execute_run(db_path(db), create_run(db, "chat", "fake", "checkeval"))
    got = {}
    real = streamlit.download_button

    def spy(label, data, *a, **kw):
        got[kw.get("key")] = data
        return real(label, data, *a, **kw)

    monkeypatch.setattr(streamlit, "download_button", spy)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["task_name"] = "chat"
    at.run()
    at.switch_page("app_pages/traces.py").run()
    assert not at.exception, at.exception
    cells = [c for r in csv.reader(io.StringIO(got["tr_dl_dec"])) for c in r]
    assert "'" + EVIL + " Is it polite?" in cells
    assert not [c for c in cells if c[:1] in ("=", "+", "@")]
