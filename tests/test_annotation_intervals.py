"""Annotation agreement carries its interval or the reason it has none: α and κ among the
annotators, the judge-vs-humans κ, and per question (a κ on one unit is a dash, not −1.000)."""

from __future__ import annotations

import math

from checkeval_core.annotation import jobs as J
from checkeval_core.annotation.agreement_report import agreement_report, agreement_view
from checkeval_core.checklists.editing import questions
from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import db_path
from tests.conftest import open_app_page
from tests.helpers import submit_answered


def _job(db, tmp_path, n_docs: int = 6):
    import json

    from checkeval_core.checklists.io import import_checklist
    from checkeval_core.checklists.versions import freeze
    from checkeval_core.datasets import import_file

    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"id": f"r{i}", "group_id": f"g{i}", "context": "Hi?",
                                     "output": f"Fine {i}."}) + "\n" for i in range(n_docs)))
    import_file(db, p, "chat", kind="dialogue")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"quality": {"definition": "good", "sub_dimensions": {"B": {
        "seed": ["Is the reply polite?", "Does the reply answer?", "Is it short?"]}}}}))
    import_checklist(db, "chat", c)
    freeze(db, "chat")
    jid = J.create_job(db, "chat", ["ann", "bob"], 2, n_items=n_docs)
    return jid


def _answer(db, jid, pattern):
    """``pattern(annotator, item index, question index)`` → yes/no for every unit."""
    qs = [q["id"] for q in questions(db, "chat")]
    items = sorted(r[0] for r in db.execute("SELECT id FROM item"))
    for ann in ("ann", "bob"):
        for i, pk in enumerate(items):
            for k, q in enumerate(qs):
                J.save_answer(db, jid, ann, pk, q, pattern(ann, i, k))
    submit_answered(db, jid)


def test_alpha_kappa_and_judge_kappa_have_group_intervals(db, tmp_path):
    jid = _job(db, tmp_path)
    _answer(db, jid, lambda a, i, k: "yes" if (i + k) % 2 == 0 or (a == "bob" and i == 0)
            else "no")
    rid = create_run(db, "chat", "fake", "checkeval")
    execute_run(db_path(db), rid)
    # the fake judge says No everywhere: κ undefined (it would be 0 whatever people said), no
    # interval, and why
    (judge,) = agreement_report(db, "chat")["human_judge"].values()
    assert math.isnan(judge["cohen_kappa"]) and judge["cohen_kappa_ci_reason"].startswith(
        "no interval: the judge always 'no'")
    # a judge that follows the annotators but for two items
    qs = {q["id"]: k for k, q in enumerate(questions(db, "chat"))}
    items = {pk: i for i, pk in enumerate(sorted(r[0] for r in db.execute("SELECT id FROM item")))}
    for aid, item, q in db.execute("SELECT id, item_id, question_id FROM answer WHERE run_id = ?",
                                   [rid]).fetchall():
        i, k = items[item], qs[q]
        yes = ((i + k) % 2 == 0) != (i in (2, 3) and k == 0)
        db.execute("UPDATE answer SET verdict = ? WHERE id = ?", ["yes" if yes else "no", aid])
    rep = agreement_report(db, "chat")
    hh = rep["human_human"]
    assert hh["n_groups"] == 6
    for k in ("krippendorff_alpha", "fleiss_kappa"):
        lo, hi = hh["ci"][k]
        assert lo <= hh[k] <= hi and hh["ci_reasons"][k] is None, (k, hh)
    (judge,) = rep["human_judge"].values()
    lo, hi = judge["cohen_kappa_ci"]
    assert judge["cohen_kappa_ci_reason"] is None and lo < judge["cohen_kappa"] <= hi <= 1
    view = agreement_view(db, "chat")
    assert "95% CI [" in view["summary"] and "groups resampled" in view["summary"]
    row = view["judges"][0]
    assert row["groups"] == 6 and row["κ 95% CI"].startswith("[")
    assert all(r["95% CI"].startswith("[") for r in view["per_question"])


def test_a_kappa_on_one_unit_is_a_dash_with_the_reason(db, tmp_path):
    jid = _job(db, tmp_path, n_docs=1)
    # one document, the annotators disagree on every question: κ = −1.000 on 1 unit
    _answer(db, jid, lambda a, i, k: "yes" if a == "ann" else "no")
    rep = agreement_report(db, "chat")
    assert all(math.isclose(r["fleiss_kappa"], -1.0) for r in rep["per_question"])
    view = agreement_view(db, "chat")
    for r in view["per_question"]:
        assert r["Fleiss κ"] is None and r["95% CI"] is None
        assert r["units"] == 1 and "too few units" in r["note"]
    assert "too few units" in view["summary"] or "needs ≥ 2 groups" in view["summary"]
    at = open_app_page("app_pages/annotation_jobs.py")
    tables = [d.value for d in at.dataframe if "Fleiss κ" in d.value.columns]
    assert len(tables) == 2  # this job's (submitted items) and every job's of the task
    for per_q in tables:
        assert set(per_q["Fleiss κ"]) == {"—"}
        assert "-1" not in " ".join(map(str, per_q["Fleiss κ"]))
    job_q, task_q = tables
    assert job_q["κ 95% CI"].str.contains("group").all()  # why: one document
    assert task_q["note"].str.contains("too few units").all()
