"""The question diagnostics read the compared runs' tasks' rows only: another task's human
scores and people's answers are neither read nor change a number."""

from __future__ import annotations

import json
import math

from checkeval_core.analysis.diagnostics import question_diagnostics
from checkeval_core.annotation.jobs import create_job, job_questions, save_answer
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.store import task_id
from tests.helpers import CHECKLIST, make_runs_task, run, submit_answered


def _answer_all(db, task: str, who: str, value: str) -> int:
    """``who`` answers ``value`` to every question of every item of ``task``; the answers."""
    jid = create_job(db, task, [who], 1)
    n = 0
    for (pk,) in db.execute("SELECT id FROM item WHERE task_id = ?", [task_id(db, task)]):
        for q in job_questions(db, jid, pk):
            save_answer(db, jid, who, pk, q["id"], value)
            n += 1
    submit_answered(db, jid)
    return n


def _other_task(db, tmp_path) -> None:
    """Task ``other``: 40 items with human scores on the same dimensions, its own checklist and
    an annotator's answer to every question."""
    rows = [{"id": f"o{k}", "group_id": f"g{k // 4}", "system_id": f"s{k % 4}",
             "source": "A source.", "output": f"Output {k}.",
             "scores": {"fluency": float(k % 5), "coherence": float(k % 3)}} for k in range(40)]
    p = tmp_path / "other.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    import_file(db, p, "other", kind="summarization")
    c = tmp_path / "other.json"
    c.write_text(json.dumps(CHECKLIST))
    import_checklist(db, "other", c)
    freeze(db, "other")
    _answer_all(db, "other", "bob", "no")


def _rows_read(db, statements: list[str], table: str) -> int:
    """Rows the traced SELECTs naming ``table`` returned (each run again to count them)."""
    return sum(len(db.execute(s).fetchall()) for s in statements
               if s.lstrip().upper().startswith(("SELECT", "WITH"))
               and f"FROM {table} " in s.replace("\n", " "))


def _same(a: list[dict], b: list[dict]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.keys() == y.keys()
        for k in x:
            if isinstance(x[k], float) and math.isnan(x[k]):
                assert isinstance(y[k], float) and math.isnan(y[k]), k
            else:
                assert x[k] == y[k], k


def test_diagnostics_read_only_the_runs_task(db, tmp_path):
    task = make_runs_task(db, tmp_path)
    rid = run(db, task, "checkeval")
    n_answers = _answer_all(db, task, "ann", "yes")
    n_human = db.execute("SELECT COUNT(*) FROM human_score h JOIN item i ON i.id = h.item_id "
                         "WHERE i.task_id = ?", [task_id(db, task)]).fetchone()[0]
    before = question_diagnostics(db, [rid])
    assert any(not math.isnan(d["discrimination"]) for d in before)  # human scores were read
    assert any(not math.isnan(d["human_agreement"]) for d in before)  # and people's answers

    _other_task(db, tmp_path)
    seen: list[str] = []
    db.conn.set_trace_callback(seen.append)
    try:
        after = question_diagnostics(db, [rid])
    finally:
        db.conn.set_trace_callback(None)
    _same(before, after)
    human = _rows_read(db, seen, "human_score")
    people = _rows_read(db, seen, "annotation")
    assert 0 < human <= n_human, f"read {human} human_score rows; the run's task has {n_human}"
    assert 0 < people <= n_answers, f"read {people} annotation rows; the task has {n_answers}"
