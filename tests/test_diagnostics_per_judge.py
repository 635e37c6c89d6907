"""Question diagnostics on Analysis: one series per judge, on the items that judge's selected
runs share — a flag, and the set *Send flagged* offers, is the same whichever runs of other
judges are selected."""

from __future__ import annotations

import json

from checkeval_core.analysis.analysis_view import evidence_page
from checkeval_core.analysis.report import page_report
from checkeval_core.stats.bootstrap import MIN_GROUPS
from checkeval_core.store import now_iso
from tests.helpers import fake_demo_runs

TASK = "summeval-demo"


def _other_judge(db, like: int, n_items: int | None = None) -> int:
    """A completed run of another judge ('other') answering the opposite of run ``like``
    (on its first ``n_items`` items): the judges disagree everywhere."""
    task_id, vid, method, items, params = db.execute(
        "SELECT task_id, checklist_version_id, method, item_ids, params FROM run WHERE id = ?",
        [like]).fetchone()

    keep = json.loads(items)[:n_items] if n_items else json.loads(items)
    rid = db.execute("INSERT INTO run (task_id, checklist_version_id, judge_spec, method, "
                     "params, item_ids, status, created_at) VALUES (?, ?, 'other', ?, ?, ?, "
                     "'completed', ?)", [task_id, vid, method, params, json.dumps(keep),
                                         now_iso()]).lastrowid
    db.execute("INSERT INTO score (run_id, item_id, dimension, aggregation, value) SELECT ?, "
               "item_id, dimension, aggregation, 1 - value FROM score WHERE run_id = ? AND "
               "item_id IN (SELECT value FROM json_each(?))", [rid, like, json.dumps(keep)])
    db.execute("INSERT INTO answer (run_id, item_id, question_id, unit, dimension, verdict, "
               "p_yes, created_at) SELECT ?, item_id, question_id, unit, dimension, CASE verdict "
               "WHEN 'yes' THEN 'no' WHEN 'no' THEN 'yes' ELSE verdict END, 1 - p_yes, ? FROM "
               "answer WHERE run_id = ? AND item_id IN (SELECT value FROM json_each(?))",
               [rid, now_iso(), like, json.dumps(keep)])
    return rid


def _flags(ev: dict, judge: str = "fake") -> dict[int, str]:
    return {d["question_id"]: d["flags"] for d in ev["diagnostics"] if d["judge"] == judge}


def test_a_third_run_of_another_judge_leaves_the_flags_unchanged(db):
    a, b = fake_demo_runs(db, 16 * MIN_GROUPS)  # documents enough for a flag
    two = evidence_page(db, TASK, [a, b])
    flagged = {q: f for q, f in _flags(two).items() if f and not f.startswith("(")}
    assert flagged, "the fake judge's two runs should flag some questions"
    for n in (None, 40):  # over the same items, and over fewer of them
        c = _other_judge(db, b, n)
        three = evidence_page(db, TASK, [a, b, c])
        assert _flags(three) == _flags(two)
        assert {x["question_id"] for x in three["candidates"] if "other" not in x["judges"]} \
            <= {x["question_id"] for x in two["candidates"]}
        assert {x["question_id"]: x for x in three["candidates"]
                if x["judges"] == "fake"}.keys() <= {x["question_id"]
                                                     for x in two["candidates"]}
        assert "fake — run(s) #" in three["basis"] and "other — run(s)" in three["basis"]


def test_agreement_reads_the_items_the_runs_share(db):
    a, b = fake_demo_runs(db, 32)
    c = _other_judge(db, b, 16)
    rep = page_report(db, TASK, [a, b, c], n_boot=0)
    assert rep["coverage"]["n_shared_items"] == 16
    assert rep["agreement"]["support"]["n_items"] == 16  # not the 32 two of them share
