"""Align: per-question agreement with people, driven by simulated annotators whose answers are
known (κ and agreement checked against hand computation), the stratified sample, consensus vs
split items, the saturated / separation / leave-one-out figures, the CLI contract and the
Align and Versions pages."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from checkeval_core.analysis.align import (
    CONFUSION_KEYS,
    agreement_figures,
    align_rows,
    kappa_from_counts,
    question_agreement,
    run_answers,
    separated_pairs,
    start_sample,
    stratified_sample,
    version_headlines,
)
from checkeval_core.annotation.jobs import save_answer
from tests.helpers import small_run, submit_answered


def test_kappa_by_hand():
    # judge/people: yes·yes 20, yes·no 5, no·yes 10, no·no 15 → po 0.7, pe 0.5, κ 0.4
    assert float(kappa_from_counts([20, 5, 10, 15])) == pytest.approx(0.4)
    from sklearn.metrics import cohen_kappa_score

    judge = ["yes"] * 25 + ["no"] * 25
    people = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa_score(judge, people) == pytest.approx(0.4)
    assert math.isnan(float(kappa_from_counts([7, 0, 0, 0])))  # one answer only: undefined


def test_agreement_figures_intervals_and_reasons():
    pairs = pd.DataFrame({"group": [f"g{i // 5}" for i in range(50)],
                          "judge": ["yes"] * 25 + ["no"] * 25,
                          "human": ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15})
    f = agreement_figures(pairs, n_boot=200, seed=0)
    assert f["agreement"] == pytest.approx(0.7) and f["kappa"] == pytest.approx(0.4)
    assert f["confusion"] == {"yes/yes": 20, "yes/no": 5, "no/yes": 10, "no/no": 15}
    assert f["ci"][0] < 0.7 < f["ci"][1] and f["kappa_ci"][0] < 0.4 < f["kappa_ci"][1]
    assert f["phi"] == pytest.approx(250 / math.sqrt(25 * 25 * 30 * 20))
    assert f["fpr"] == pytest.approx(0.25) and f["fnr"] == pytest.approx(1 / 3)
    assert f["kappa_phi_gap"] == pytest.approx(f["phi"] - 0.4)
    assert f["phi_ci"][0] < f["phi"] < f["phi_ci"][1] and f["phi_reason"] is None
    one = agreement_figures(pairs.assign(group="g0"))
    assert math.isnan(one["ci"][0]) and "needs ≥ 6 groups" in one["ci_reason"]
    assert math.isnan(one["phi_ci"][0]) and "needs ≥ 6 groups" in one["phi_reason"]
    none = agreement_figures(pairs.iloc[:0])
    assert none["n"] == 0 and "no decision" in none["reason"]


def test_stratified_sample_is_even_over_groups_and_systems():
    items = [{"item_pk": g * 10 + s, "group": f"g{g}", "system": f"s{s}"}
             for g in range(4) for s in range(4)]
    pick = stratified_sample(items, 8, seed=3)
    chosen = [i for i in items if i["item_pk"] in pick]
    assert len(set(pick)) == 8
    assert pd.Series([i["group"] for i in chosen]).value_counts().tolist() == [2, 2, 2, 2]
    assert pd.Series([i["system"] for i in chosen]).value_counts().tolist() == [2, 2, 2, 2]
    assert stratified_sample(items, 8, seed=3) == pick


def test_separated_pairs_fisher():
    a = pd.DataFrame({"system": ["A"] * 6 + ["B"] * 6 + ["C"] * 6,
                      "verdict": ["yes"] * 6 + ["no"] * 6 + ["yes"] * 5 + ["no"]})
    # A 6/6 vs B 0/6: p = 0.002; B vs C 0/6 vs 5/6: p = 0.015; A vs C: p = 1
    assert separated_pairs(a) == (2, 3)


@pytest.fixture
def aligned(demo_db):
    """A small fake-judge run on 6 documents (:func:`small_run`) and a 24-item sample
    answered by three simulated annotators whose answers are known."""
    rid = small_run(demo_db)
    jid, created = start_sample(demo_db, rid, ["ann1", "ann2", "ann3"], overlap=3, n=24)
    assert created and start_sample(demo_db, rid, ["ann1", "ann2", "ann3"], 3, 24) == (jid,
                                                                                       False)
    return demo_db, rid, jid


def _flip(v: str) -> str:
    return "no" if v == "yes" else "yes"


def test_per_question_agreement_with_simulated_annotators(aligned):
    db, rid, jid = aligned
    ans = run_answers(db, rid)
    sample = [r[0] for r in db.execute("SELECT DISTINCT item_id FROM annotation_assignment "
                                       "WHERE job_id = ?", [jid])]
    assert len(sample) == 24
    sub = ans[ans["item_pk"].isin(sample) & ans["verdict"].isin(["yes", "no"])]
    # three questions, those with both answers among the judge's verdicts first
    spread = sub.groupby("question_id")["verdict"].nunique()
    varied = [int(q) for q in spread.sort_values(ascending=False, kind="stable").index[:3]]
    q_same, q_half, q_split = varied
    expect = {}
    for q in varied:
        part = sub[sub["question_id"] == q].sort_values("item_pk")
        counts = np.zeros(4)
        for k, r in enumerate(part.itertuples()):
            if q == q_same:  # everyone answers as the judge
                votes = [r.verdict] * 3
            elif q == q_half:  # everyone contradicts the judge on every other item
                votes = [r.verdict if k % 2 == 0 else _flip(r.verdict)] * 3
            else:  # ann3 contradicts the two others: a split item, majority = the judge
                votes = [r.verdict, r.verdict, _flip(r.verdict)]
            for who, v in zip(("ann1", "ann2", "ann3"), votes):
                save_answer(db, jid, who, int(r.item_pk), int(q), v)
            maj = max(set(votes), key=votes.count)
            counts[(r.verdict == "no") * 2 + (maj == "no")] += 1
        expect[q] = counts
    submit_answered(db, jid)
    res = question_agreement(db, rid, "all", n_boot=100)
    by = {x["question_id"]: x for x in res["questions"]}
    for q in varied:
        c = expect[q]
        po = (c[0] + c[3]) / c.sum()
        pe = ((c[0] + c[1]) * (c[0] + c[2]) + (c[2] + c[3]) * (c[1] + c[3])) / c.sum() ** 2
        assert by[q]["n"] == c.sum()
        assert by[q]["agreement"] == pytest.approx(po)
        one_sided = min(c[0] + c[1], c[2] + c[3], c[0] + c[2], c[1] + c[3]) == 0
        if one_sided:  # one side gave one answer only: κ is undefined, with the reason
            assert math.isnan(by[q]["kappa"]) and "κ undefined" in by[q]["reason"]
        else:
            assert by[q]["kappa"] == pytest.approx((po - pe) / (1 - pe))
        assert list(by[q]["confusion"].values()) == c.astype(int).tolist()
    assert by[q_same]["agreement"] == 1.0 and by[q_same]["n_consensus"] == by[q_same]["n"]
    assert by[q_split]["n_split"] == by[q_split]["n"] and by[q_split]["agreement_split"] == 1.0
    assert by[q_split]["n_consensus"] == 0
    assert all(d["judge"] != d["human"] for d in by[q_half]["disagreements"])
    assert len(by[q_half]["disagreements"]) == expect[q_half][1] + expect[q_half][2]
    # the headline over every answered decision
    total = sum(expect.values())
    assert res["headline"]["n"] == total.sum()
    assert res["headline"]["agreement"] == pytest.approx((total[0] + total[3]) / total.sum())
    assert res["headline"]["text"].startswith("agrees with people on")
    assert res["human_answers"]["how_to_start"] is None
    heads = version_headlines(db, "summeval-demo")
    assert any(h["run"] == rid and h["n"] == total.sum() for h in heads)


def test_demo_without_human_answers_still_gives_what_the_experts_support(aligned):
    """No invented answers: agreement is blank with its reason, while yes-rate, separation
    and the leave-one-out effect on agreement with the experts' scores (dev) are there."""
    db, rid, _ = aligned
    res = question_agreement(db, rid, "dev", n_boot=50)
    assert res["headline"]["n"] == 0
    assert "Align page" in res["human_answers"]["how_to_start"]
    assert res["loo"]["evidence"] == "human_scores" and res["loo"]["part"] == "dev"
    for q in res["questions"]:
        assert q["n"] == 0 and q["agreement"] != q["agreement"]  # NaN, with a reason
        assert q["reason"]
        assert 0.0 <= q["yes_rate"] <= 1.0 and q["n_pairs"] == 120
        assert q["saturated"] in (None, "always yes", "always no")
        assert q["saturated"] == ("always yes" if q["yes_rate"] >= 0.95 else "always no"
                                  if q["yes_rate"] <= 0.05 else None)
    assert len(res["questions"]) == 12
    assert any(not math.isnan(q["loo_delta"]) for q in res["questions"])


def test_cli_questions_contract(aligned):
    from checkeval_core.cli import app

    db, rid, _ = aligned
    r = CliRunner().invoke(app, ["questions", "--run", str(rid), "--split", "dev", "--json",
                                 "--bootstrap", "20"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["split"]["which"] == "dev" and out["questions"]
    for q in out["questions"]:
        assert {"question_id", "text", "n", "agreement", "kappa", "ci", "confusion",
                "yes_rate", "separates", "loo_delta", "loo_ci", "phi", "fpr", "fnr",
                "phi_ci", "fpr_ci", "fnr_ci", "kappa_phi_gap", "kappa_phi_gap_ci",
                "phi_reason", "fpr_reason", "fnr_reason"} <= set(q)
    bad = CliRunner().invoke(app, ["questions", "--run", str(rid), "--split", "train"])
    assert bad.exit_code == 2 and "--split 'train'" in bad.output
    assert CliRunner().invoke(app, ["questions", "--run", "999"]).exit_code == 2


def test_align_page_opens_with_the_empty_panel_and_the_figures(aligned):
    from streamlit.testing.v1 import AppTest

    from tests.helpers import APP

    db, rid, _ = aligned
    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state["task_name"] = "summeval-demo"
    at.run()
    at.switch_page("app_pages/align.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="al_run").value == rid
    assert any("No one has answered" in i.value for i in at.info)
    table = at.dataframe(key="al_table").value
    assert {"question", "agreement", "κ", "φ", "FPR", "FNR", "κ–φ gap", "yes-rate", "separates",
            "LOO Δ"} <= set(table.columns)
    assert len(table) == len(question_agreement(db, rid, "dev", n_boot=0)["questions"])
    assert at.dataframe(key="al_table").proto.row_height > 64  # long questions wrap
    at.switch_page("app_pages/versions.py").run()
    assert not at.exception, at.exception
    assert any("Align page" in i.value for i in at.info)


def test_kappa_of_a_constant_side_is_undefined_with_the_reason():
    """Judge always Yes, people mixed: κ would be 0.00 [0.00, 0.00] (observed = chance), a
    number that says nothing; it is undefined and says which side is constant."""
    assert math.isnan(float(kappa_from_counts([6, 4, 0, 0])))  # the judge always yes
    assert math.isnan(float(kappa_from_counts([0, 3, 0, 7])))  # people always no
    pairs = pd.DataFrame({"group": [f"g{i}" for i in range(10)], "judge": ["yes"] * 10,
                          "human": ["yes"] * 6 + ["no"] * 4})
    f = agreement_figures(pairs, n_boot=100)
    assert f["agreement"] == pytest.approx(0.6)
    assert math.isnan(f["kappa"]) and all(math.isnan(x) for x in f["kappa_ci"])
    assert "κ undefined" in f["reason"] and "the judge answered 'yes' on all 10" in f["reason"]
    row = align_rows({"questions": [{
        "text": "q", "dimension": "d", "n": 10, "agreement": 0.6, "kappa": f["kappa"],
        "yes_rate": 1.0, "saturated": "always yes", "separates": 0, "n_pairs": 1,
        "loo_delta": 0.0, "ci": f["ci"], "kappa_ci": f["kappa_ci"], "loo_ci": [0.0, 0.0],
        "confusion": f["confusion"], "n_consensus": 0, "n_split": 0, "reason": f["reason"],
        "ci_reason": f["ci_reason"], "loo_reason": None, "question_id": 1,
        **{f"{k}{s}": f.get(f"{k}{s}", math.nan if s == "" else None)
           for k in CONFUSION_KEYS for s in ("", "_ci", "_reason")}}]})[0]
    assert "κ undefined" in row["why"] and row["κ CI"] == "no interval"


def test_a_question_people_split_on_says_so_and_answers_are_counted(aligned):
    """Two annotators who disagree on every item of a question: no majority anywhere, said in
    *why* (not 0 answers and a blank); the caption counts people's answers, not decisions."""
    db, rid, jid = aligned
    ans = run_answers(db, rid)
    sample = [r[0] for r in db.execute("SELECT DISTINCT item_id FROM annotation_assignment "
                                       "WHERE job_id = ?", [jid])]
    sub = ans[ans["item_pk"].isin(sample)]
    q_tied, q_ok = sorted(set(sub["question_id"]))[:2]
    n_items = 0
    for r in sub[sub["question_id"] == q_tied].itertuples():
        save_answer(db, jid, "ann1", int(r.item_pk), int(q_tied), "yes")
        save_answer(db, jid, "ann2", int(r.item_pk), int(q_tied), "no")
        n_items += 1
    for r in sub[sub["question_id"] == q_ok].itertuples():
        for who in ("ann1", "ann2", "ann3"):
            save_answer(db, jid, who, int(r.item_pk), int(q_ok), r.verdict)
    submit_answered(db, jid)
    res = question_agreement(db, rid, "all", n_boot=20)
    rows = {r["question_id"]: r for r in align_rows(res)}
    assert rows[q_tied]["answers"] == 0
    assert rows[q_tied]["why"].startswith(
        f"no majority: the annotators disagreed on every item ({n_items})")
    assert "no majority" not in rows[q_ok]["why"]
    n_ok = int((sub["question_id"] == q_ok).sum())
    human = res["human_answers"]
    assert human["n_decisions"] == n_items + n_ok
    assert human["n_answers"] == 2 * n_items + 3 * n_ok
