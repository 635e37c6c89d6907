"""The instruction-following demo (issue 14): ``alpacaeval-demo`` with its per-query
checklists, Arena Elo ratings and the pre-computed embedded-judge RocketEval run."""

from __future__ import annotations

import json

import pytest

from checkeval_core.checklists.instance import group_questions
from checkeval_core.config import data_dir
from checkeval_core.demo import load_demo
from checkeval_core.demo.instruction import TASK
from checkeval_core.store import task_id

BUNDLE = data_dir() / "demo_runs" / "alpacaeval-embedded-rocketeval.json"


@pytest.fixture(autouse=True)
def with_instruction_demo(monkeypatch):
    monkeypatch.setenv("CHECKEVAL_DEMO_INSTRUCTION", "1")


def counts(db) -> dict[str, int]:
    tid = task_id(db, TASK)
    return {t: db.execute(f"SELECT COUNT(*) FROM {t} WHERE task_id = ?", [tid]).fetchone()[0]
            for t in ("item", "question", "checklist_version", "system_rating", "run")}


def test_demo_task_checklist_ratings_idempotent(db):
    load_demo(db)
    c = counts(db)
    assert c["item"] == 96 and c["system_rating"] == 12 and c["checklist_version"] == 1
    assert c["run"] == 0  # CHECKEVAL_DEMO_RUNS=0 in the tests
    items = db.execute("SELECT item_id, group_id, system_id, source, reference, output FROM "
                       "item WHERE task_id = ?", [task_id(db, TASK)]).fetchall()
    assert all(i[0] == f"{i[1]}:{i[2]}" and i[3] and i[4] and i[5] for i in items)
    assert len({i[1] for i in items}) == 8 and len({i[2] for i in items}) == 12
    # the author-written checklists of the 8 queries, frozen as the instance checklist
    gq = group_questions(db, TASK)
    ck = {c["instruction_id"]: c["questions"] for c in map(json.loads, (
        data_dir() / "checklists" / "alpacaeval_author.jsonl").read_text("utf-8").splitlines())}
    assert {g: [q["text"] for q in qs] for g, qs in gq.items()} == ck
    v = db.execute("SELECT kind FROM checklist_version WHERE task_id = ?",
                   [task_id(db, TASK)]).fetchone()
    assert v[0] == "instance"
    elo = dict(db.execute("SELECT system_id, rating FROM system_rating WHERE source = "
                          "'arena_elo'").fetchall())
    assert elo["gpt-4-turbo-2024-04-09"] == pytest.approx(1246.1)
    load_demo(db)  # idempotent
    assert counts(db) == c


def test_demo_can_leave_the_task_out(db, monkeypatch):
    monkeypatch.setenv("CHECKEVAL_DEMO_INSTRUCTION", "0")
    assert TASK not in load_demo(db)
    assert not db.execute("SELECT 1 FROM task WHERE name = ?", [TASK]).fetchone()


def test_demo_precomputed_run_ranks_the_models(db, monkeypatch):
    assert BUNDLE.exists(), "scripts/make_demo_runs.sh alpacaeval makes this committed bundle"
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "1")
    load_demo(db)
    (rid,) = [r[0] for r in db.execute("SELECT id FROM run WHERE task_id = ?",
                                       [task_id(db, TASK)])]
    # whole queries: every model's answer to each query of the run, each asked all of its
    # query's questions
    groups = {g for (g,) in db.execute("SELECT DISTINCT i.group_id FROM answer a JOIN item i "
                                       "ON i.id = a.item_id WHERE a.run_id = ?", [rid])}
    gq = group_questions(db, TASK)
    assert len(groups) >= 4
    assert db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ?", [rid]).fetchone()[0] == \
        sum(len(gq[g]) for g in groups) * 12
    from checkeval_core.analysis.rankings import rankings_report

    rep = rankings_report(db, rid, n_boot=20)
    assert rep["judge"] == "embedded" and rep["n_systems"] == 12
    assert rep["n_queries"] == len(groups)
    assert rep["spearman"]["reason"] is None and -1 <= rep["spearman"]["value"] <= 1
    load_demo(db)
    assert db.execute("SELECT COUNT(*) FROM run WHERE task_id = ?",
                      [task_id(db, TASK)]).fetchone()[0] == 1
