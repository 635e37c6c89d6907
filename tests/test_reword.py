"""Align → *Propose a rewording* with the fake judge: written from the dev disagreements only,
both wordings answered on the items people labelled, held-out Δ with its verdict, queued for
review as a proposed edit (old question kept, history appended), safe twice; the CLI."""

from __future__ import annotations

import json

import pytest

from checkeval_core.analysis.align import run_answers, start_sample
from checkeval_core.analysis.reword import propose_rewording
from checkeval_core.annotation.jobs import save_answer
from checkeval_core.checklists.review import question_history
from checkeval_core.task_split import members
from tests.helpers import cli, small_run, submit_answered


@pytest.fixture
def contradicted(demo_db):
    """A fake-judge run, a 24-item sample, and two annotators who answer one question the
    opposite way to the judge on every sampled item (and another exactly as the judge)."""
    db = demo_db
    rid = small_run(db)
    jid, _ = start_sample(db, rid, ["ann1", "ann2"], overlap=2, n=24)
    sample = {r[0] for r in db.execute("SELECT DISTINCT item_id FROM annotation_assignment "
                                       "WHERE job_id = ?", [jid])}
    ans = run_answers(db, rid)
    ans = ans[ans["item_pk"].isin(sample) & ans["verdict"].isin(["yes", "no"])]
    q_bad, q_good = [int(q) for q in ans["question_id"].unique()[:2]]
    for r in ans[ans["question_id"].isin([q_bad, q_good])].itertuples():
        v = r.verdict if r.question_id == q_good else {"yes": "no", "no": "yes"}[r.verdict]
        for who in ("ann1", "ann2"):
            save_answer(db, jid, who, int(r.item_pk), int(r.question_id), v)
    submit_answered(db, jid)
    return db, rid, q_bad, q_good


def test_rewording_from_dev_disagreements_goes_to_review_as_an_edit(contradicted):
    db, rid, q_bad, q_good = contradicted
    old = db.execute("SELECT text, status FROM question WHERE id = ?", [q_bad]).fetchone()
    r = propose_rewording(db, rid, q_bad, "fake", n_boot=100)
    assert r["created"] and r["new_text"] != old[0] and r["new_text"].endswith("?")
    groups, _ = members(db, "summeval-demo")
    examples = r["false_positives"] + r["false_negatives"]
    assert 0 < len(examples) <= 6
    pks = [e["item_pk"] for e in examples]
    dev_groups = {db.execute("SELECT group_id FROM item WHERE id = ?", [p]).fetchone()[0]
                  for p in pks}
    assert all(groups[g] == "dev" for g in dev_groups)  # examples from dev items only
    # the old wording, answered again by the same judge, disagrees with people everywhere the
    # run did (the fake judge answers a request the same way every time)
    assert r["dev"]["old"]["value"] == pytest.approx(0.0)
    h = r["heldout"]
    assert h["n_items"] > 0 and h["delta"] == pytest.approx(h["new"] - h["old"])
    assert h["verdict"] and "mde" in h
    new = db.execute("SELECT status, origin, parent_id, reason FROM question WHERE id = ?",
                     [r["new_question"]]).fetchone()
    assert new[:3] == ("proposed", "edited", q_bad) and h["verdict"] in new[3]
    assert db.execute("SELECT text, status FROM question WHERE id = ?",
                      [q_bad]).fetchone() == old  # the old question is kept as it was
    hist = question_history(db, r["new_question"])
    assert [e["action"] for e in hist][-1] == "propose_rewording"
    assert hist[-1]["detail"]["from_question"] == q_bad
    again = propose_rewording(db, rid, q_bad, "fake", n_boot=100)
    assert not again["created"] and again["new_question"] == r["new_question"]
    assert len(question_history(db, r["new_question"])) == len(hist)


def test_no_disagreement_no_rewording(contradicted):
    db, rid, _, q_good = contradicted
    n = db.execute("SELECT COUNT(*) FROM question").fetchone()[0]
    with pytest.raises(ValueError, match="agree on every dev item"):
        propose_rewording(db, rid, q_good, "fake")
    assert db.execute("SELECT COUNT(*) FROM question").fetchone()[0] == n


def test_cli_reword(contradicted, tmp_path):
    from checkeval_core.store import db_path

    db, rid, q_bad, _ = contradicted
    path = db_path(db)
    r = cli(path, "reword", "--run", str(rid), "--question", str(q_bad), "--judge", "fake",
            "--bootstrap", "50", "--json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["question_id"] == q_bad and out["heldout"]["verdict"]
    bad = cli(path, "reword", "--run", str(rid), "--question", "999999", "--judge", "fake")
    assert bad.exit_code == 2 and "no question #999999" in (bad.stdout + bad.stderr)
