"""Every proposed question tested before review: the fake judge answers each question on a
stratified sample of dev items (held-out items never read), its separation of people's high
and low items checked by hand, the dev-only flags, redundancy with kept questions, the stored
evidence on the review table, and the CLI contract."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from checkeval_core.checklists.evidence import (
    dev_sample,
    evidence_text,
    latest_evidence,
    question_evidence,
)
from checkeval_core.checklists.review_view import review_table
from checkeval_core.stats.ranking import pairs_ordered, separation
from tests.helpers import cli, evidence_task


def test_pairs_ordered_and_separation_by_hand():
    # one group, scores 1 2 3 4, answers no no yes yes: 4 pairs ordered, 2 tied, 0 reversed
    keys, per = pairs_ordered(["g"] * 4, [1, 2, 3, 4], [0, 0, 1, 1])
    assert keys == ["g"] and per.tolist() == [[4, 0, 2, 6]]
    # an invalid answer (NaN) leaves its item out; equal human scores form no pair
    _, per2 = pairs_ordered(["a", "a", "a", "b", "b"], [1, 2, 3, 2, 2],
                            [1, 0, float("nan"), 1, 0])
    assert per2.tolist() == [[0, 1, 0, 1], [0, 0, 0, 0]]
    s = separation(np.array([[4, 0, 2, 6]] * 8), n_boot=100)
    assert s["value"] == pytest.approx(5 / 6) and s["n_pairs"] == 48 and s["reason"] is None
    few = separation(np.array([[4, 0, 2, 6]] * 3), n_boot=100)
    assert math.isnan(few["ci"][0]) and "needs ≥ 6" in few["reason"]
    none = separation(np.zeros((2, 4)), n_boot=100)
    assert math.isnan(none["value"]) and "no pair" in none["reason"]


def test_dev_sample_is_dev_only_and_takes_each_groups_best_and_worst(db):
    evidence_task(db)
    s = dev_sample(db, "ev", "coherence", 12, seed=0)
    assert len(s) == 12 and {x["group"] for x in s} == {f"g{i}" for i in range(6)}
    for g in {x["group"] for x in s}:  # round one: the highest and the lowest of each group
        assert sorted(x["score"] for x in s if x["group"] == g) == [1, 4]
    assert len(dev_sample(db, "ev", "coherence", 400)) == 24  # every dev item, no held-out one


def test_evidence_separation_flags_and_redundancy(db):
    q = evidence_task(db)
    res = question_evidence(db, "ev", "fake", n_items=24, n_boot=200)
    by = {e["question_id"]: e for e in res["questions"]}
    assert set(by) == {q["good"], q["reversed"], q["constant"]}  # proposed only
    assert res["dimensions"]["coherence"] == {"n_items": 24, "n_groups": 6, "n_scored": 24}
    good = by[q["good"]]
    # every dev item answered (a held-out one would be invalid), Yes on the two high ones of 4
    assert good["n_answers"] == 24 and good["yes_rate"] == pytest.approx(0.5)
    assert good["separation"] == pytest.approx(5 / 6) and good["n_pairs"] == 36
    assert good["separation_ci"][0] <= 5 / 6 <= good["separation_ci"][1]
    assert good["flag"] is None and good["reason"] is None
    assert good["redundant_with"] == [{"question_id": q["kept"], "agreement": 1.0, "n": 24}]
    rev = by[q["reversed"]]
    assert rev["separation"] == pytest.approx(1 / 6) and rev["flag"] == "reversed"
    assert rev["redundant_with"] == []
    const = by[q["constant"]]
    assert const["yes_rate"] == 0 and const["flag"] == "never_varies"
    assert "answered No on all 24 dev items" in const["reason"]
    assert good["cost"]["calls"] == 1 and good["cost"]["prompt_tokens"] > 0
    # stored, shown beside the question on the review table; nothing deleted or filtered
    ev = latest_evidence(db, "ev")
    assert ev[q["constant"]]["flag"] == "never_varies"
    assert db.execute("SELECT COUNT(*) FROM question WHERE task_id = (SELECT id FROM task "
                      "WHERE name = 'ev') AND status = 'proposed'").fetchone()[0] == 3
    from checkeval_core.checklists.editing import questions

    qs = questions(db, "ev")
    table = review_table(qs, set(), ev).set_index("id")
    assert table.loc[q["constant"], "evidence on dev items"].startswith("⚑ never_varies")
    assert "separates 0.83 [" in table.loc[q["good"], "evidence on dev items"]
    assert "answers like kept #" in table.loc[q["good"], "evidence on dev items"]
    assert table.loc[q["kept"], "evidence on dev items"] == ""
    # the same evidence again adds no row; a kept question can be tested too
    n = db.execute("SELECT COUNT(*) FROM question_evidence").fetchone()[0]
    question_evidence(db, "ev", "fake", n_items=24, n_boot=200)
    assert db.execute("SELECT COUNT(*) FROM question_evidence").fetchone()[0] == n
    kept = question_evidence(db, "ev", "fake", status="kept", n_items=24)
    assert [e["question_id"] for e in kept["questions"]] == [q["kept"]]
    assert kept["questions"][0]["redundant_with"] == []  # never redundant with itself


def test_too_few_groups_gives_no_interval_and_no_reversed_flag(db):
    q = evidence_task(db)
    res = question_evidence(db, "ev", "fake", n_items=6, n_boot=100)  # 3 groups
    rev = next(e for e in res["questions"] if e["question_id"] == q["reversed"])
    assert math.isnan(rev["separation_ci"][0]) and rev["flag"] is None
    assert "needs ≥ 6" in rev["reason"]
    assert "(no interval)" in evidence_text({**rev, "judge": "fake"})


def test_cli_evidence_contract_and_refusals(db_path):
    from checkeval_core.store import open_db

    db = open_db(db_path)
    q = evidence_task(db)
    db.close()
    r = cli(db_path, "checklist", "evidence", "--task", "ev", "--judge", "fake", "--items",
            "24", "--json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert {e["question_id"] for e in out["questions"]} == {q["good"], q["reversed"],
                                                             q["constant"]}
    for e in out["questions"]:
        assert {"question_id", "yes_rate", "separation", "separation_ci", "redundant_with",
                "flag", "reason"} <= set(e)
    for args, msg in ((["--status", "gone"], "--status 'gone'"), (["--items", "2"], "--items 2"),
                      (["--judge", "nosuch:x"], "nosuch"),
                      (["--dimension", "fluency"], "no dimension 'fluency'")):
        bad = cli(db_path, "checklist", "evidence", "--task", "ev", "--judge", "fake", *args)
        assert bad.exit_code == 2 and msg in (bad.stdout + bad.stderr), bad.stderr
    db = open_db(db_path)
    from checkeval_core.task_split import clear_split

    clear_split(db, "ev")
    before = db.execute("SELECT COUNT(*) FROM question_evidence").fetchone()[0]
    db.close()
    nosplit = cli(db_path, "checklist", "evidence", "--task", "ev", "--judge", "fake")
    assert nosplit.exit_code == 2 and "split" in (nosplit.stdout + nosplit.stderr)
    db = open_db(db_path)
    assert db.execute("SELECT COUNT(*) FROM question_evidence").fetchone()[0] == before
