"""Question origins are checked by the code (``checklists.editing.ORIGINS``), not by a table
CHECK: m0012 rebuilds ``question`` without it and keeps every row that references questions."""

from __future__ import annotations

import sqlite3

import pytest

from checkeval_core import migrations
from checkeval_core.checklists.editing import ORIGINS, add_question
from checkeval_core.demo import load_demo
from checkeval_core.runs.jobs import create_run, execute_run
from checkeval_core.store import open_db, task_id
from tests.helpers import give_old_database_todays_answer_columns


def test_old_database_upgrades_keeps_answers_and_accepts_proposals(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "0")
    monkeypatch.setenv("CHECKEVAL_DEMO_INSTRUCTION", "0")
    with monkeypatch.context() as m:
        names = [n for n in migrations.migration_names() if n < "m0012"]
        m.setattr(migrations, "migration_names", lambda: names)
        db = open_db(path)
        load_demo(db)
        give_old_database_todays_answer_columns(db)
        rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=2)
        assert execute_run(path, rid)["status"] == "completed"
        tid = task_id(db, "summeval-demo")
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):  # the old schema's limit
            db.execute("UPDATE question SET origin = 'proposal' WHERE task_id = ?", [tid])
        before = {t: db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                  for t in ("question", "answer", "score")}
        db.conn.close()
    db = open_db(path)
    for t, old in before.items():
        assert db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() == old, t
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    schema = db.execute("SELECT sql FROM sqlite_master WHERE name = 'question'").fetchone()[0]
    assert "origin IN" not in schema
    qid = add_question(db, tid, None, None, "Does the summary name the main event?",
                       origin="proposal")
    assert db.execute("SELECT origin FROM question WHERE id = ?", [qid]).fetchone()[0] == "proposal"
    with pytest.raises(ValueError, match="Unknown question origin 'bogus'. Available: seed"):
        add_question(db, tid, None, None, "Is it?", origin="bogus")
    assert "proposal" in ORIGINS
    # deleting a question still cascades through the rebuilt table's foreign keys
    used = db.execute("SELECT question_id FROM answer LIMIT 1").fetchone()[0]
    db.execute("DELETE FROM answer WHERE question_id = ?", [used])
    db.execute("DELETE FROM question WHERE id = ?", [used])
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
