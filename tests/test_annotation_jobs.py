"""Annotation jobs: assignment with overlap, sampling, answers saved as given, skip/submit,
disagreements and adjudication, concurrent writers."""

import threading
from collections import Counter

import pytest

from checkeval_core.annotation import jobs as J
from checkeval_core.annotation.agreement_report import agreement_report
from checkeval_core.store import open_db
from tests.helpers import load_demo_copy, submit_answered


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
    # done needs every question of the item's checklist answered, by any path
    with pytest.raises(ValueError, match="121 of 122 questions of this item have no answer"):
        J.set_status(db, jid, "ann", item, "done")
    assert J.queue(db, jid, "ann")[0]["status"] == "todo"
    submit_answered(db, jid)  # the 121 others: unsure
    assert J.queue(db, jid, "ann")[0]["status"] == "done"
    other = next(a for a in ("bob", "cy") if any(x["item_pk"] == item for x in J.queue(db, jid,
                                                                                        a)))
    J.save_answer(db, jid, other, item, qs[0]["id"], "yes")
    # a disagreement is between submitted answers: the other's is a draft until submitted
    assert J.disagreements(db, jid) == []
    submit_answered(db, jid)
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


def _answered_and_submitted(db):
    """A fixed job of ann and bob (both on every item); ann answered and submitted her first
    item, bob has answered its first question."""
    load_demo_copy(db)
    jid = J.create_job(db, "summeval-demo", ["ann", "bob"], 2, n_items=2)
    item = J.queue(db, jid, "ann")[0]["item_pk"]
    qs = J.job_questions(db, jid, item)
    for q in qs:
        J.save_answer(db, jid, "ann", item, q["id"], "yes")
    J.submit_item(db, jid, "ann", item)
    J.save_answer(db, jid, "bob", item, qs[0]["id"], "yes")
    return jid, item, qs


def test_a_changed_answer_keeps_the_one_it_replaced(db):
    """Before submitting, a person may change their mind; the answer it replaces was
    overwritten without a trace: it is appended to the history, the current one stays one row."""
    import json

    jid, item, qs = _answered_and_submitted(db)
    J.save_answer(db, jid, "bob", item, qs[0]["id"], "yes")  # the same again: no change
    J.save_answer(db, jid, "bob", item, qs[0]["id"], "no")
    assert J.answers_of(db, jid, "bob", item)[qs[0]["id"]] == "no"
    hist = [(a, json.loads(d)) for a, d in db.execute(
        "SELECT actor, detail FROM review_event WHERE action = 'change_answer'")]
    assert [(a, d["question"], d["was"], d["now"]) for a, d in hist] == [
        ("bob", qs[0]["id"], "yes", "no")]


def test_a_submitted_item_keeps_its_answers(db):
    """Security audit D2: after submitting (the page then shows the judges' answers) nothing
    of the item changes any more: no answer, no status; refused with the reason, nothing
    written."""
    jid, item, qs = _answered_and_submitted(db)
    before = J.answers_of(db, jid, "ann", item)
    stamp = db.execute("SELECT MAX(updated_at), COUNT(*) FROM annotation").fetchone()
    for write in (lambda: J.save_answer(db, jid, "ann", item, qs[0]["id"], "no"),
                  lambda: J.set_status(db, jid, "ann", item, "todo"),
                  lambda: J.set_status(db, jid, "ann", item, "skipped", "changed my mind"),
                  lambda: J.submit_item(db, jid, "ann", item)):
        with pytest.raises(ValueError, match="this item is submitted: its answers are final"):
            write()
    assert J.answers_of(db, jid, "ann", item) == before and set(before.values()) == {"yes"}
    assert db.execute("SELECT MAX(updated_at), COUNT(*) FROM annotation").fetchone() == stamp
    assert J.queue(db, jid, "ann")[0]["status"] == "done"
    # bob has not submitted: he still changes his mind
    J.save_answer(db, jid, "bob", item, qs[0]["id"], "no")
    assert J.answers_of(db, jid, "bob", item) == {qs[0]["id"]: "no"}


def test_only_the_people_given_an_item_answer_it(db):
    """Security audit D4: a person the job did not give the item to (not in the job at all)
    cannot answer it, skip it or submit it; people's answers therefore never count them."""
    from checkeval_core.people import people_answers

    jid, item, qs = _answered_and_submitted(db)
    for write in (lambda: J.save_answer(db, jid, "eve", item, qs[1]["id"], "no"),
                  lambda: J.save_answer(db, jid, "ann ", item, qs[1]["id"], "no"),
                  lambda: J.set_status(db, jid, "eve", item, "skipped", "not mine"),
                  lambda: J.submit_item(db, jid, "eve", item)):
        with pytest.raises(ValueError, match="was not given item"):
            write()
    assert db.execute("SELECT DISTINCT annotator FROM annotation WHERE job_id = ? ORDER BY 1",
                      [jid]).fetchall() == [("ann",), ("bob",)]
    assert J.queue(db, jid, "eve") == []
    J.adjudicate(db, jid, item, qs[0]["id"], "yes", " coord ")  # stored as one person
    assert db.execute("SELECT coordinator FROM adjudication").fetchall() == [("coord",)]
    who = people_answers(db, "summeval-demo", [item])[(item, qs[1]["id"])].answers
    assert who == {"ann": "yes"}
