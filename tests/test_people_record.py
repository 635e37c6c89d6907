"""One record of what people answered (:mod:`checkeval_core.people`): per (item, question)
every annotator's answer, the majority, a tie is no label, the coordinator's settled answer
wins — and every view reads it the same way: Align, Versions, the escalation labels, the
question diagnostics, Traces' disagreement filter, the agreement report and ``checkeval
questions``. A job where two annotators tie (the third is unsure) and a coordinator overturns
a 2–1 majority moves every view alike; a tie is absent everywhere."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from checkeval_core.analysis.align import question_agreement, run_answers, start_sample
from checkeval_core.analysis.diagnostics import question_diagnostics
from checkeval_core.analysis.version_readers import (
    annotation_hits,
    evidence_kinds,
    evidence_stamp,
)
from checkeval_core.annotation.agreement_report import agreement_report
from checkeval_core.annotation.jobs import adjudicate, save_answer
from checkeval_core.people import (
    answer_labels,
    has_answers,
    pair_majority,
    people_answers,
    people_labels,
    people_pair_labels,
    people_stamp,
    people_votes,
)
from checkeval_core.runs.escalation.units import run_units
from checkeval_core.runs.jobs import get_run
from checkeval_core.runs.traces import SHOW_FILTERS, decision_rows, item_trace
from checkeval_core.stats.agreement import cohen_kappa
from checkeval_core.store import db_path, task_id
from tests.helpers import build_ranking_task, run_cli, small_run, submit_answered

TASK = "summeval-demo"


def _flip(v: str) -> str:
    return "no" if v == "yes" else "yes"


@pytest.fixture
def job(demo_db):
    """A fake-judge run, a 12-item sample answered by three annotators:

    * item ``it``, questions ``qa`` (judge Yes) and ``qb`` (judge No): ann1 as the judge, ann2
      the other way, ann3 unsure — a 1–1 tie on both;
    * ``qa`` on item ``x``: all three as the judge; on item ``y``: all three the other way;
    * ``qc`` on item ``w``: all three as the judge; on item ``z``: ann1 and ann2 as the judge,
      ann3 not — a 2–1 majority with the judge, which the coordinator overturns (later).
    """
    db = demo_db
    rid = small_run(db)
    jid, _ = start_sample(db, rid, ["ann1", "ann2", "ann3"], overlap=3, n=12)
    sample = {r[0] for r in db.execute("SELECT DISTINCT item_id FROM annotation_assignment "
                                       "WHERE job_id = ?", [jid])}
    ans = run_answers(db, rid)
    ans = ans[ans["item_pk"].isin(sample) & ans["verdict"].isin(["yes", "no"])]
    verdict = {(int(r.item_pk), int(r.question_id)): r.verdict for r in ans.itertuples()}
    # an item with a Yes and a No among the judge's answers, on two questions
    it = qa = qb = None
    for pk in sorted(sample):
        mine = {q: v for (i, q), v in verdict.items() if i == pk}
        yes = [q for q, v in sorted(mine.items()) if v == "yes"]
        no = [q for q, v in sorted(mine.items()) if v == "no"]
        if yes and no:
            it, qa, qb = pk, yes[0], no[0]
            break
    assert it is not None, "the fake judge answered Yes and No on some item"
    others = sorted(p for p in sample if p != it and (p, qa) in verdict)
    x, y = others[0], others[1]
    qc = next(q for q in sorted({q for _, q in verdict}) if q not in (qa, qb)
              and sum((p, q) in verdict for p in sample if p != it) >= 2)
    w, z = sorted(p for p in sample if p != it and (p, qc) in verdict)[:2]

    def answer(pk: int, q: int, values: list[str]) -> None:
        for who, v in zip(("ann1", "ann2", "ann3"), values):
            save_answer(db, jid, who, pk, q, v)

    for q in (qa, qb):
        answer(it, q, [verdict[(it, q)], _flip(verdict[(it, q)]), "unsure"])
    answer(x, qa, [verdict[(x, qa)]] * 3)
    answer(y, qa, [_flip(verdict[(y, qa)])] * 3)
    answer(w, qc, [verdict[(w, qc)]] * 3)
    answer(z, qc, [verdict[(z, qc)]] * 2 + [_flip(verdict[(z, qc)])])
    submit_answered(db, jid)  # people's answers count once their item is submitted
    return {"db": db, "rid": rid, "jid": jid, "it": it, "qa": qa, "qb": qb, "qc": qc,
            "x": x, "y": y, "w": w, "z": z, "verdict": verdict}


def _views(j: dict) -> dict:
    """What each view says about the job's decisions."""
    db, rid = j["db"], j["rid"]
    align = question_agreement(db, rid, "all", n_boot=50)
    by_q = {q["question_id"]: q for q in align["questions"]}
    hits = annotation_hits(db, rid)
    run = get_run(db, rid)
    labels_q, _, _ = answer_labels(db, task_id(db, TASK), run["item_ids"])
    units = run_units(db, run)
    agree_a = dict(zip(units.keys, units.agree_a))
    diag = {d["question_id"]: d for d in question_diagnostics(db, [rid])}
    traces = {pk: {r["question_id"] for r in decision_rows(item_trace(db, pk, [rid]),
                                                           SHOW_FILTERS[2])}
              for pk in (j["it"], j["z"], j["x"], j["y"])}
    rep = agreement_report(db, TASK, [rid])
    cli = run_cli(["questions", "--run", rid, "--split", "all", "--bootstrap", 50, "--json"],
                  db=db_path(db), check=True)
    return {"align": by_q, "headline": align["headline"],
            "hits": {(int(r.item_pk), int(r.question_id)): int(r.hit)
                     for r in hits.itertuples()},
            "labels": labels_q, "agree_a": agree_a, "diag": diag, "traces": traces,
            "report": next(iter(rep["human_judge"].values())),
            "cli": {q["question_id"]: q for q in json.loads(cli.stdout)["questions"]}}


def test_a_tie_is_no_label_and_a_settled_answer_wins_in_every_view(job):
    db, it, qa, qb, qc = job["db"], job["it"], job["qa"], job["qb"], job["qc"]
    x, y, w, z, verdict = job["x"], job["y"], job["w"], job["z"], job["verdict"]
    stamp = evidence_stamp(db, TASK)
    before = _views(job)
    adjudicate(db, job["jid"], z, qc, _flip(verdict[(z, qc)]), "coord", "the guide says so")
    assert evidence_stamp(db, TASK) != stamp  # the Versions page's cache sees the settling
    after = _views(job)

    # the record itself
    rec = people_answers(db, TASK)
    assert rec[(it, qa)].answers == {"ann1": verdict[(it, qa)], "ann2": _flip(verdict[(it, qa)])}
    assert rec[(it, qa)].majority is None and rec[(it, qa)].label is None
    assert rec[(z, qc)].majority == verdict[(z, qc)]
    assert rec[(z, qc)].settled == rec[(z, qc)].label == _flip(verdict[(z, qc)])
    want = {(x, qa): verdict[(x, qa)], (y, qa): _flip(verdict[(y, qa)]),
            (w, qc): verdict[(w, qc)], (z, qc): _flip(verdict[(z, qc)])}
    assert people_labels(db, TASK) == want
    assert people_labels(db, task_id(db, TASK), [z, it]) == {k: v for k, v in want.items()
                                                             if k[0] in (z, it)}

    # escalation: the labels are the record's, the overturned answer no longer agrees
    assert after["labels"] == want and (it, qa) not in before["labels"]
    assert before["agree_a"][(z, qc, "")] == 1.0 and after["agree_a"][(z, qc, "")] == 0.0

    # Align (and `checkeval questions --json`): the tie counts nowhere, the settled answer counts
    for view in ("align", "cli"):
        a, b = before[view], after[view]
        assert a[qa]["n"] == b[qa]["n"] == 2 and b[qa]["agreement"] == pytest.approx(0.5)
        assert a[qb]["n"] == b[qb]["n"] == 0
        assert a[qc]["n"] == b[qc]["n"] == 2
        assert a[qc]["agreement"] == pytest.approx(1.0)
        assert b[qc]["agreement"] == pytest.approx(0.5)
    assert after["align"][qc]["n_split"] == 1 and after["align"][qc]["agreement_split"] == 0.0
    assert after["headline"]["n"] == 4
    assert after["headline"]["agreement"] == pytest.approx(0.5)

    # Versions: the same decisions, the same hits
    assert after["hits"] == {(x, qa): 1, (y, qa): 0, (w, qc): 1, (z, qc): 0}
    assert before["hits"][(z, qc)] == 1

    # the question diagnostics: agreement with people over the decided items only
    assert after["diag"][qa]["human_agreement"] == pytest.approx(0.5)
    assert math.isnan(after["diag"][qb]["human_agreement"])
    assert before["diag"][qc]["human_agreement"] == pytest.approx(1.0)
    assert after["diag"][qc]["human_agreement"] == pytest.approx(0.5)

    # Traces: a tie never makes a disagreement; the overturned answer does
    assert qa not in after["traces"][it] and qb not in after["traces"][it]
    assert qc not in before["traces"][z] and qc in after["traces"][z]
    assert qa in after["traces"][y] and qa not in after["traces"][x]

    # the agreement report: the same units and the same κ as Align's headline
    judge = [verdict[u] for u in want]
    assert after["report"]["n_units"] == after["headline"]["n"] == 4
    # (NaN alike when one side gave one answer only: one κ rule in the floor)
    assert after["report"]["cohen_kappa"] == pytest.approx(
        cohen_kappa(list(want.values()), judge), nan_ok=True)
    assert after["report"]["cohen_kappa"] == pytest.approx(after["headline"]["kappa"],
                                                           nan_ok=True)


def test_settling_one_of_six_opposite_answers_makes_n_one(demo_db):
    """The issue's case: two annotators answer one question opposite on 6 items (six ties),
    a coordinator settles one → the question's n is 1 (it was 0)."""
    db = demo_db
    rid = small_run(db)
    jid, _ = start_sample(db, rid, ["ann1", "ann2"], overlap=2, n=6)
    items = sorted(r[0] for r in db.execute("SELECT DISTINCT item_id FROM "
                                            "annotation_assignment WHERE job_id = ?", [jid]))
    ans = run_answers(db, rid)
    q = int(ans["question_id"].min())
    for pk in items:
        save_answer(db, jid, "ann1", pk, q, "yes")
        save_answer(db, jid, "ann2", pk, q, "no")

    def n_of_q() -> int:
        out = run_cli(["questions", "--run", rid, "--split", "all", "--bootstrap", 50,
                       "--json"], db=db_path(db), check=True)
        return next(x["n"] for x in json.loads(out.stdout)["questions"]
                    if x["question_id"] == q)

    assert n_of_q() == 0 and people_labels(db, TASK) == {}
    adjudicate(db, jid, items[0], q, "no", "coord")
    assert n_of_q() == 1
    assert people_labels(db, TASK) == {(items[0], q): "no"}


def test_an_annotator_counts_once_with_the_latest_answer(demo_db):
    """Answering the same question in two jobs is one person's answer, not two votes; ``unsure``
    as the latest answer takes that person out of the majority."""
    db = demo_db
    rid = small_run(db)
    j1, _ = start_sample(db, rid, ["ann1", "ann2", "ann3"], overlap=3, n=6, name="first")
    j2, _ = start_sample(db, rid, ["ann1", "ann2", "ann3"], overlap=3, n=6, name="second")
    j3, _ = start_sample(db, rid, ["ann1"], overlap=1, n=6, name="third")
    pk = next(r[0] for r in db.execute("SELECT item_id FROM annotation_assignment WHERE "
                                       "job_id = ? ORDER BY position", [j1]))
    q = int(run_answers(db, rid)["question_id"].min())
    save_answer(db, j1, "ann1", pk, q, "yes")
    save_answer(db, j1, "ann2", pk, q, "no")
    submit_answered(db, j1)
    db.execute("UPDATE annotation SET updated_at = '2020-01-01' WHERE job_id = ?", [j1])
    save_answer(db, j2, "ann1", pk, q, "yes")  # the same person again: still 1–1
    submit_answered(db, j2)
    assert people_answers(db, TASK)[(pk, q)].answers == {"ann1": "yes", "ann2": "no"}
    assert people_labels(db, TASK) == {}
    save_answer(db, j2, "ann3", pk, q, "yes")
    submit_answered(db, j2)
    assert people_labels(db, TASK) == {(pk, q): "yes"}
    save_answer(db, j3, "ann1", pk, q, "unsure")  # ann1's latest word: unsure
    submit_answered(db, j3)
    assert people_answers(db, TASK)[(pk, q)].answers == {"ann2": "no", "ann3": "yes"}
    assert people_labels(db, TASK) == {}
    # two jobs settle the same decision: the later job's answer holds, whatever the order;
    # the pages' cache key moves with every settling, a changed one included
    stamps = [people_stamp(db, TASK)]
    adjudicate(db, j2, pk, q, "yes", "coord")
    adjudicate(db, j1, pk, q, "no", "coord")
    stamps.append(people_stamp(db, TASK))
    assert people_labels(db, TASK) == {(pk, q): "yes"}
    adjudicate(db, j2, pk, q, "no", "coord", "changed my mind")
    stamps.append(people_stamp(db, TASK))
    assert people_labels(db, TASK) == {(pk, q): "no"}
    assert len(set(stamps)) == 3


def test_an_answer_counts_once_its_item_is_submitted(demo_db):
    """In a fixed job as in a pool, a saved answer is a draft until its author submits the
    item: an item still open, skipped, or handed on to someone else (its first annotator's
    partial answers stay under their name) is nobody's answer — the same answers the job's own
    agreement and its disagreements read. Submitting needs every question answered, by any
    path."""
    from checkeval_core.annotation import jobs as J
    from checkeval_core.annotation.pools import hand_on, people_agreement

    db = demo_db
    rid = small_run(db)
    jid, _ = start_sample(db, rid, ["ann1", "ann2", "ann3"], overlap=2, n=6)
    q = int(run_answers(db, rid)["question_id"].min())
    queue = {who: [r["item_pk"] for r in J.queue(db, jid, who)] for who in ("ann1", "ann2",
                                                                            "ann3")}
    shared = sorted(set(queue["ann1"]) & set(queue["ann2"]))
    one, two = shared[0], shared[1]
    for who, v in (("ann1", "yes"), ("ann2", "no")):
        J.save_answer(db, jid, who, one, q, v)
        J.save_answer(db, jid, who, two, q, v)
    assert people_answers(db, TASK) == {}  # drafts: nothing is people's answer yet
    assert J.disagreements(db, jid) == []
    assert not has_answers(db, TASK) and "annotations" not in evidence_kinds(db, TASK)
    with pytest.raises(ValueError, match="questions of this item have no answer"):
        J.set_status(db, jid, "ann1", one, "done")  # done by the back door: refused too
    assert people_answers(db, TASK) == {}
    J.set_status(db, jid, "ann2", two, "skipped", "cannot judge this one")
    submit_answered(db, jid)  # ann1 on both, ann2 on `one` (`two` is skipped)
    rec = people_answers(db, TASK)
    assert rec[(one, q)].answers == {"ann1": "yes", "ann2": "no"}
    assert rec[(two, q)].answers == {"ann1": "yes"}  # the skipped item's answer: not counted
    assert has_answers(db, TASK) and "annotations" in evidence_kinds(db, TASK)
    assert [d["item_pk"] for d in J.disagreements(db, jid)] == [one]
    units = {r["units"] for r in people_agreement(db, jid)["per_question"]
             if r["question_id"] == q}
    assert units == {1}  # the job's agreement reads the same submitted answers

    # a partial answer handed on: its author no longer has the item, their draft never counts
    left = next(pk for pk in queue["ann3"] if pk not in shared
                and J.queue(db, jid, "ann3")[queue["ann3"].index(pk)]["status"] == "todo")
    J.save_answer(db, jid, "ann3", left, q, "no")
    moved = hand_on(db, jid, "ann3", ["ann1", "ann2"], coordinator="coord")
    assert moved["moved"] >= 1
    taker = next(w for w in ("ann1", "ann2") if left in [r["item_pk"] for r in
                                                         J.queue(db, jid, w)])
    J.save_answer(db, jid, taker, left, q, "yes")
    submit_answered(db, jid)
    assert people_answers(db, TASK)[(left, q)].answers == {taker: "yes"}
    assert db.execute("SELECT value FROM annotation WHERE job_id = ? AND annotator = 'ann3' "
                      "AND item_id = ?", [jid, left]).fetchone()[0] == "no"  # kept, on record


def test_pairwise_votes_a_tie_vote_is_for_neither_side(db):
    build_ranking_task(db, prefs=False, ratings=False)
    tid = db.execute("SELECT id FROM task").fetchone()[0]
    a, b, c = (r[0] for r in db.execute("SELECT id FROM item WHERE task_id = ? ORDER BY id "
                                        "LIMIT 3", [tid]))
    g = db.execute("SELECT group_id FROM item WHERE id = ?", [a]).fetchone()[0]

    def vote(x: int, y: int, winner: str, who: str) -> None:
        db.execute("INSERT INTO preference (task_id, group_id, item_a, item_b, winner, source, "
                   "annotator, created_at, vote_id) VALUES (?, ?, ?, ?, ?, 'test', ?, '', ?)",
                   [tid, g, x, y, winner, who, f"{x}-{y}-{who}"])

    vote(a, b, "a", "p1")
    vote(b, a, "a", "p2")  # stored the other way round: b won, i.e. "b" in canonical order
    vote(a, b, "tie", "p3")  # a tie vote counts for neither side: 1–1, no label
    vote(a, c, "a", "p1")
    vote(a, c, "tie", "p2")  # 1–0: a
    votes = people_votes(db, tid)
    assert [(v.item_a, v.item_b, v.winner) for v in votes] == [
        (a, b, "a"), (a, b, "b"), (a, b, "tie"), (a, c, "a"), (a, c, "tie")]
    assert people_pair_labels(db, tid) == {(a, c): ("a", g)}
    assert people_pair_labels(db, tid, [a, b]) == {}
    assert pair_majority(["tie", "tie"]) is None and pair_majority(["b", "tie"]) == "b"


CORE = Path(__file__).resolve().parent.parent / "checkeval_core"
#: who else may read the ``annotation`` / ``adjudication`` tables, and why: annotation/ owns
#: them (jobs, files, the queue); the checklist review reads its own decisions (``kind =
#: 'validation'``), not answers; a question's deletion counts the human records it would
#: delete; a landed migration is never edited; the pool benchmark checks the stored rows
#: themselves (that no answer was lost), not what people decided
MAY_READ = {"people.py", "checklists/review.py", "checklists/editing.py",
            "migrations/m0014_review_history.py", "bench/pool_queue.py"}


def test_only_the_reader_reads_peoples_answers():
    sql = re.compile(r"\b(FROM|JOIN)\s+(annotation|adjudication)\b")
    found = sorted(str(p.relative_to(CORE)) for p in CORE.rglob("*.py")
                   if p.parent.name != "annotation" and sql.search(p.read_text("utf-8"))
                   and str(p.relative_to(CORE)) not in MAY_READ)
    assert found == [], ("read people's answers through checkeval_core.people "
                         f"(people_answers / people_labels): {found}")
