"""Annotation jobs: assignment with overlap, sampling, answers saved as given, skip/submit,
disagreements and adjudication, concurrent writers."""

import threading
from collections import Counter

import pytest

from checkeval_core.annotation import jobs as J
from checkeval_core.annotation.agreement_report import agreement_report
from checkeval_core.store import open_db
from tests.helpers import load_demo_copy


@pytest.mark.parametrize("n_items,annotators,k", [(10, 3, 2), (7, 4, 3), (5, 2, 1), (9, 3, 3)])
def test_assign_exactly_k_balanced(n_items, annotators, k):
    names = [f"a{i}" for i in range(annotators)]
    pairs = J.assign(list(range(n_items)), names, k)
    per_item = Counter(i for i, _ in pairs)
    assert set(per_item.values()) == {k}
    assert all(len({a for i2, a in pairs if i2 == i}) == k for i in range(n_items))
    loads = Counter(a for _, a in pairs)
    assert max(loads.values()) - min(loads.values()) <= 1
    with pytest.raises(ValueError, match="overlap"):
        J.assign([1], names, annotators + 1)


def test_job_flow(db):
    load_demo_copy(db)
    jid = J.create_job(db, "summeval-demo", ["ann", "bob", "cy"], 2, n_items=6,
                       strategy="stratified", dimension="coherence", seed=3)
    prog = {p["annotator"]: p for p in J.progress(db, jid)}
    assert sum(p["assigned"] for p in prog.values()) == 12
    q = J.queue(db, jid, "ann")
    item = q[0]["item_pk"]
    qs = J.job_questions(db, jid, item)
    assert len(qs) == 122
    J.save_answer(db, jid, "ann", item, qs[0]["id"], "yes")
    J.save_answer(db, jid, "ann", item, qs[0]["id"], "no")  # changed mind: one row, updated
    assert J.answers_of(db, jid, "ann", item) == {qs[0]["id"]: "no"}
    with pytest.raises(ValueError, match="reason"):
        J.set_status(db, jid, "ann", item, "skipped")
    J.set_status(db, jid, "ann", item, "done")
    other = next(a for a in ("bob", "cy") if any(x["item_pk"] == item for x in J.queue(db, jid,
                                                                                        a)))
    J.save_answer(db, jid, other, item, qs[0]["id"], "yes")
    dis = J.disagreements(db, jid)
    assert [(d["item_pk"], d["question_id"]) for d in dis] == [(item, qs[0]["id"])]
    J.adjudicate(db, jid, item, qs[0]["id"], "yes", "coord", "checked the article")
    assert J.disagreements(db, jid)[0]["settled"] == "yes"
    assert agreement_report(db, "summeval-demo")["human_human"]["n_units"] == 1


def test_concurrent_annotators_and_judge_writes(db, db_path):
    load_demo_copy(db)
    jid = J.create_job(db, "summeval-demo", ["a", "b"], 2, n_items=4)
    errors = []

    def annotate(name):
        try:
            d = open_db(db_path)
            for entry in J.queue(d, jid, name):
                for qq in J.job_questions(d, jid, entry["item_pk"])[:30]:
                    J.save_answer(d, jid, name, entry["item_pk"], qq["id"], "yes")
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def judge():
        try:
            from checkeval_core.runs import create_run, execute_run

            d = open_db(db_path)
            execute_run(db_path, create_run(d, "summeval-demo", "fake", "rocketeval", limit=4))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=annotate, args=(n,)) for n in ("a", "b")] + \
        [threading.Thread(target=judge)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    d = open_db(db_path)
    assert d.execute("SELECT COUNT(*) FROM annotation WHERE job_id = ?", [jid]).fetchone()[0] \
        == 2 * 4 * 30
    assert d.execute("SELECT COUNT(*) FROM answer").fetchone()[0] == 4 * 122
