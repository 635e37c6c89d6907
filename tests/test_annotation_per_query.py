"""Annotation on a per-query (instance) checklist: an item's checklist is its query's questions
in the job, on the Annotate page, in agreement and in ``annotations import``."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core.annotation import jobs as J
from checkeval_core.annotation.agreement_report import agreement_report, agreement_view
from checkeval_core.checklists.instance import import_group_checklists
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.store import open_db
from tests.helpers import item_button, run_cli

APP = str(Path(__file__).resolve().parent.parent / "app.py")
GROUP_QS = {"g0": ["Does it name Paris?", "Is it one sentence?"],
            "g1": ["Does it list three fruits?", "Are the fruits red?", "Is it polite?"]}


def per_query_task(db, tmp_path, scores: bool = False) -> None:
    """Task ``pq``: items r0, r1 answer query g0; r2, r3 query g1; a frozen instance
    checklist with 2 questions for g0 and 3 for g1."""
    d = tmp_path / "d.jsonl"
    d.write_text("".join(json.dumps({"id": f"r{i}", "group_id": f"g{i // 2}",
                                     "source": f"query {i // 2}", "output": f"answer {i}",
                                     **({"scores": {"overall": i + 1}} if scores else {})})
                         + "\n" for i in range(4)))
    import_file(db, d, "pq", kind="instruction")
    c = tmp_path / "c.jsonl"
    c.write_text("".join(json.dumps({"group_id": g, "questions": qs}) + "\n"
                         for g, qs in GROUP_QS.items()))
    import_group_checklists(db, "pq", c)
    freeze(db, "pq", kind="instance")


def pk(db, item_id):
    return db.execute("SELECT id FROM item WHERE item_id = ?", [item_id]).fetchone()[0]


def qid(db, text):
    return db.execute("SELECT id FROM question WHERE text = ?", [text]).fetchone()[0]


def test_job_shows_only_the_query_questions_and_agreement_counts_only_them(db, tmp_path):
    per_query_task(db, tmp_path)
    jid = J.create_job(db, "pq", ["a", "b"], 2)
    r0, r1 = pk(db, "r0"), pk(db, "r1")
    assert [q["text"] for q in J.job_questions(db, jid, r0)] == GROUP_QS["g0"]
    assert [q["text"] for q in J.job_questions(db, jid, pk(db, "r2"))] == GROUP_QS["g1"]
    q1, q2 = (qid(db, t) for t in GROUP_QS["g0"])
    # a: yes yes no no; b: yes no no no on the 4 own units
    for ann, vals in (("a", ["yes", "yes", "no", "no"]), ("b", ["yes", "no", "no", "no"])):
        for (item, q), v in zip([(r0, q1), (r0, q2), (r1, q1), (r1, q2)], vals):
            J.save_answer(db, jid, ann, item, q, v)
    # submit needs the item's 2 questions only (the other query's 3 stay unanswered); an
    # answer counts once submitted
    for ann in ("a", "b"):
        for item in (r0, r1):
            J.submit_item(db, jid, ann, item)
    # answers to the other query's questions are refused ...
    off1, off2 = qid(db, GROUP_QS["g1"][0]), qid(db, GROUP_QS["g1"][1])
    with pytest.raises(ValueError, match="not on this item's checklist"):
        J.save_answer(db, jid, "a", r0, off1, "no")
    # ... and those stored before that (one "no/no" pair, one yes/no disagreement) are not
    # counted
    for ann, q, v in (("a", off1, "no"), ("b", off1, "no"), ("a", off2, "yes"),
                      ("b", off2, "no")):
        db.execute("INSERT INTO annotation (task_id, annotator, kind, item_id, question_id, "
                   "value, job_id, created_at, updated_at) SELECT task_id, ?, 'answer', ?, ?, "
                   "?, ?, '', '' FROM annotation_job WHERE id = ?", [ann, r0, q, v, jid, jid])
    assert db.execute("SELECT COUNT(*) FROM annotation").fetchone()[0] == 12
    rep = agreement_report(db, "pq")
    hh = rep["human_human"]
    # by hand: units (1,1) (1,0) (0,0) (0,0); coincidences o11=2, o10=o01=1, o00=4, n=8
    # D_o = 2/8, D_e = 2·3·5/(8·7) = 30/56 → α = 1 − 7/15 = 8/15;
    # Fleiss: P̄ = 3/4, P_e = (3/8)² + (5/8)² = 34/64 → κ = (3/4 − 34/64)/(1 − 34/64) = 7/15
    assert hh["n_units"] == 4
    assert hh["krippendorff_alpha"] == pytest.approx(8 / 15)
    assert hh["fleiss_kappa"] == pytest.approx(7 / 15)
    assert {r["question"] for r in rep["per_question"]} == set(GROUP_QS["g0"])
    # the only disagreement on the item's own questions is (r0, q2)
    assert [(d["item_id"], d["question"]) for d in J.disagreements(db, jid)] == \
        [("r0", GROUP_QS["g0"][1])]
    J.save_answer(db, jid, "a", pk(db, "r2"), qid(db, GROUP_QS["g1"][0]), "yes")
    J.save_answer(db, jid, "a", pk(db, "r2"), qid(db, GROUP_QS["g1"][1]), "yes")
    with pytest.raises(ValueError, match="1 of 3 questions of this item have no answer"):
        J.submit_item(db, jid, "a", pk(db, "r2"))


def test_agreement_view_says_why_numbers_are_undefined(db, tmp_path):
    per_query_task(db, tmp_path)
    jid = J.create_job(db, "pq", ["a", "b"], 2)
    v = agreement_view(db, "pq")
    assert "nan" not in v["summary"] and "α = undefined" in v["summary"]
    assert "no (item, question) has Yes/No answers from two or more annotators" in v["summary"]
    assert v["likert"] == [] and v["likert_note"].startswith("This task has no human scores")
    r0 = pk(db, "r0")
    for ann in ("a", "b"):
        for t in GROUP_QS["g0"]:
            J.save_answer(db, jid, ann, r0, qid(db, t), "yes")
        J.submit_item(db, jid, ann, r0)
    v = agreement_view(db, "pq")
    assert "every answer on the 2 shared units is 'yes'" in v["summary"]
    assert [r["question"] for r in v["per_question"]] == GROUP_QS["g0"]
    assert v["per_question"][0]["Fleiss κ"] is None  # a dash in the table
    assert v["per_question"][0]["note"] == "all answers the same: undefined"


def test_queue_progress_and_next_position():
    q = [{"status": s} for s in ("done", "todo", "skipped", "todo")]
    assert J.next_position(q, 1) == 3  # the next item still to do
    assert J.next_position(q, 3) == 1  # wraps to the first still to do
    q[1]["status"] = q[3]["status"] = "done"
    assert J.next_position(q, 1) == 2 and J.next_position(q, 3) == 3
    share, where, counts = J.progress_label(q, 2)
    assert (share, where, counts) == (1.0, "Item 3 of 4", "3 of 4 done · 1 skipped · 0 to do")


def test_cli_import_refuses_another_querys_question(tmp_path, monkeypatch):
    dbf = tmp_path / "c.db"
    monkeypatch.setenv("CHECKEVAL_DB", str(dbf))
    db = open_db(dbf)
    per_query_task(db, tmp_path)
    f = tmp_path / "ans.csv"
    f.write_text("annotator,item_id,question,answer\n"
                 f"ann,r0,{GROUP_QS['g0'][0]},yes\n"
                 f"ann,r0,{GROUP_QS['g1'][2]},no\n")
    r = run_cli(["--db", str(dbf), "annotations",
                 "import", str(f), "--task", "pq"])
    assert r.returncode != 0
    assert "ans.csv, line 3, field 'question'" in r.stderr
    assert ("'Is it polite?' is not on the checklist of item 'r0' (it belongs to query "
            "'g1'; the item answers query 'g0')") in r.stderr
    assert "Traceback" not in r.stderr
    assert db.execute("SELECT COUNT(*) FROM annotation").fetchone()[0] == 0  # nothing imported
    f.write_text("annotator,item_id,question,answer\n"
                 f"ann,r0,{GROUP_QS['g0'][0]},yes\n"
                 f"ann,r2,{GROUP_QS['g1'][2]},no\n")
    r = run_cli(["--db", str(dbf), "annotations",
                 "import", str(f), "--task", "pq"])
    assert r.returncode == 0, r.stderr
    assert db.execute("SELECT COUNT(*) FROM annotation").fetchone()[0] == 2


def test_annotate_page_lists_the_item_questions_and_advances(db, tmp_path):
    per_query_task(db, tmp_path, scores=True)
    jid = J.create_job(db, "pq", ["alice"], 1)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/annotate.py").run()
    at.text_input(key="ann_name").input("alice").run()
    assert not at.exception
    assert [r.label for r in at.radio] == GROUP_QS["g0"]  # r0's query only, not all 5
    assert any(s.value == "Item 1 of 4" for s in at.subheader)
    assert "0 of 4 done · 0 skipped · 4 to do" in at.get("progress")[0].proto.text
    # the dimension's definition once, under its name (not repeated per sub-dimension)
    assert any(m.value == "#### overall" for m in at.markdown)
    assert [c.value for c in at.caption].count(
        "Overall quality of the answer to this request") == 1
    for r in at.radio:
        r.set_value("yes")
    at.run()
    item_button(at, "ann_submit").click().run()
    assert not at.exception
    assert J.queue(db, jid, "alice")[0]["status"] == "done"
    # on to the next item (r1, same query), the submitted one's comparison below
    assert any(s.value == "Item 2 of 4" for s in at.subheader)
    assert any("on the item you submitted (r0)" in s.value for s in at.subheader)
    assert [r.label for r in at.radio] == GROUP_QS["g0"]
    at.button(key="ann_next").click().run()
    assert [r.label for r in at.radio] == GROUP_QS["g1"]


def test_jobs_page_explains_undefined_agreement(db, tmp_path):
    per_query_task(db, tmp_path)
    J.create_job(db, "pq", ["a", "b"], 2)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/annotation_jobs.py").run()
    at.selectbox(key="aj_task").select("pq").run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "nan" not in text.split() and "None" not in text
    assert "Fleiss κ = undefined — no (item, question)" in text
    assert "This task has no human scores" in text
