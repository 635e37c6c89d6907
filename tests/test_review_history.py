"""The review history is appended, never overwritten: reject → keep → edit leaves all three
decisions (who, role, when, what, the rejection's reason) in the core, on the Checklist review
page and after the migration's backfill; an annotation job records its coordinator."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core import migrations
from checkeval_core.annotation import jobs as J
from checkeval_core.checklists import editing as M
from checkeval_core.checklists.review import (
    decide,
    question_history,
    send_to_review,
    undo_send_to_review,
)
from checkeval_core.checklists.review_view import history_rows
from checkeval_core.checklists.versions import freeze
from checkeval_core.identity import TRUSTED_HEADER_ENV
from checkeval_core.store import open_db
from tests.conftest import APP
from tests.helpers import dialogue_task


@pytest.fixture(autouse=True)
def _no_header_trust(monkeypatch):
    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)


def _task(db, tmp_path) -> list[int]:
    dialogue_task(db, tmp_path, 4, ["Is the reply polite?", "Is the reply short?"],
                  frozen=False)
    return [q["id"] for q in M.questions(db, "chat")]


def test_reject_keep_edit_leaves_all_three_with_the_reason(db, tmp_path):
    q = _task(db, tmp_path)[0]
    decide(db, [q], "alice", "reject", "too vague")
    decide(db, [q], "bob", "keep")
    (new,) = decide(db, [q], "alice", "edit", new_text="Is the reply polite and kind?")
    events = question_history(db, new)  # the new question shows what led to it
    assert [(e["question_id"], e["actor"], e["role"], e["action"], e["reason"])
            for e in events] == [(q, "alice", "reviewer", "reject", "too vague"),
                                 (q, "bob", "reviewer", "keep", ""),
                                 (q, "alice", "reviewer", "edit", "")]
    assert events[2]["detail"]["new_question"] == new
    assert all(e["when"] for e in events)
    assert question_history(db, q) == events
    rows = history_rows(events)
    assert [r["what"] for r in rows] == ["rejected", "kept", "edited"]
    assert rows[0]["reason"] == "too vague" and rows[2]["note"].startswith(f"into #{new}")
    # the current state is unchanged: one decision per reviewer, the old question rejected
    assert db.execute("SELECT COUNT(*) FROM annotation WHERE question_id = ?",
                      [q]).fetchone()[0] == 2
    # a decision repeated is appended again (a record of each press), nothing rewritten
    decide(db, [new], "carol", "keep")
    decide(db, [new], "carol", "keep")
    assert [e["actor"] for e in question_history(db, new)][-2:] == ["carol", "carol"]
    assert len(question_history(db, new)) == 5


def test_send_to_review_and_its_undo_are_in_the_history(db, tmp_path):
    q = _task(db, tmp_path)[0]
    sent = send_to_review(db, [q], "flips on 3 of 4 items", actor="dana")
    undo_send_to_review(db, sent)
    ev = question_history(db, q)
    assert [(e["role"], e["action"], e["actor"]) for e in ev] == [
        ("analysis", "send_to_review", "dana"), ("analysis", "undo_send_to_review", "")]
    assert ev[0]["reason"] == "diagnostics: flips on 3 of 4 items"


def test_job_creation_records_its_coordinator_and_settled_answers_append(db, tmp_path):
    _task(db, tmp_path)
    freeze(db, "chat")
    jid, created = J.create_job_once(db, "chat", ["ann1", "ann2"], 2, 2, coordinator="Cora")
    assert created
    assert db.execute("SELECT coordinator FROM annotation_job WHERE id = ?",
                      [jid]).fetchone()[0] == "Cora"
    ev = db.execute("SELECT actor, role, action, job_id FROM review_event").fetchall()
    assert ev == [("Cora", "coordinator", "create_job", jid)]
    item, qid = db.execute("SELECT a.item_id, q.id FROM annotation_assignment a, question q "
                           "WHERE a.job_id = ? LIMIT 1", [jid]).fetchone()
    J.adjudicate(db, jid, item, qid, "yes", "Cora", "first look")
    J.adjudicate(db, jid, item, qid, "no", "Cora", "read it again")
    settled = db.execute("SELECT reason, detail FROM review_event WHERE action = 'settle' "
                         "ORDER BY id").fetchall()
    assert [(r, json.loads(d)["value"]) for r, d in settled] == [("first look", "yes"),
                                                                ("read it again", "no")]


def test_the_jobs_page_asks_for_the_coordinator(db, tmp_path):
    _task(db, tmp_path)
    freeze(db, "chat")
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/annotation_jobs.py").run()
    at.text_input(key="aj_annotators").input("ann1, ann2")
    at.button(key="FormSubmitter:aj_new-Create job").click().run()
    assert any("your name" in e.value for e in at.error), [e.value for e in at.error]
    assert db.execute("SELECT COUNT(*) FROM annotation_job").fetchone()[0] == 0
    at.text_input(key="aj_creator").input("Cora")
    at.button(key="FormSubmitter:aj_new-Create job").click().run()
    assert not at.exception
    assert db.execute("SELECT coordinator FROM annotation_job").fetchall() == [("Cora",)]
    assert any("created by Cora" in c.value for c in at.caption)


def test_checklist_review_page_shows_the_history(db, tmp_path):
    ids = _task(db, tmp_path)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/checklist.py").run()
    at.selectbox(key="rv_task").select("chat").run()
    at.text_input(key="rv_annotator").input("alice").run()
    at.multiselect(key="rv_status").set_value(["proposed", "kept", "filtered", "rejected"]).run()
    at.multiselect(key="rv_selected").set_value([ids[0]]).run()
    at.text_input(key="rv_reason").input("too vague").run()
    at.button(key="rv_reject").click().run()
    # a rejected question leaves the selection: picked again to keep it
    at.multiselect(key="rv_selected").set_value([ids[0]]).run()
    at.button(key="rv_keep").click().run()
    at.text_input(key="rv_newtext").input("Is the reply polite and kind?").run()
    at.button(key="rv_edit").click().run()
    assert not at.exception and not at.error
    at.multiselect(key="rv_selected").set_value([ids[0]]).run()  # its history, picked again
    hist = next(e for e in at.expander if e.label.startswith("Review history (1 question"))
    table = hist.dataframe[0].value
    assert list(table["what"]) == ["rejected", "kept", "edited"]
    assert list(table["who"]) == ["alice"] * 3 and list(table["role"]) == ["reviewer"] * 3
    assert table["reason"].iloc[0] == "too vague"


def test_migration_backfills_decisions_and_jobs(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    with monkeypatch.context() as m:
        names = [n for n in migrations.migration_names() if n < "m0014"]
        m.setattr(migrations, "migration_names", lambda: names)
        db = open_db(path)
        ids = _task(db, tmp_path)
        db.execute("INSERT INTO annotation (task_id, annotator, kind, question_id, value, reason, "
                   "created_at, updated_at) VALUES (1, 'alice', 'validation', ?, 'reject', "
                   "'too vague', 't1', 't2')", [ids[0]])
        freeze(db, "chat")
        db.execute("INSERT INTO annotation_job (task_id, checklist_version_id, name, params, "
                   "created_at) VALUES (1, 1, 'old job', '{}', 't3')")
        db.conn.close()
    db = open_db(path)
    ev = db.execute("SELECT question_id, job_id, actor, role, action, reason, created_at "
                    "FROM review_event ORDER BY id").fetchall()
    assert ev == [(ids[0], None, "alice", "reviewer", "reject", "too vague", "t2"),
                  (None, 1, "", "coordinator", "create_job", "", "t3")]
    rows = history_rows(question_history(db, ids[0]))
    assert rows[0]["note"] == "recorded before the history was kept"
    assert db.execute("SELECT coordinator FROM annotation_job").fetchone()[0] == ""
