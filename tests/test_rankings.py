"""Ranking analysis (issue 14): Bradley–Terry Elo, rank correlations with bootstrap intervals,
pairwise agreement — pure functions against hand-computed values, then the reports on a
small fake-judge run (4 queries × 3 systems, per-query checklists)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from checkeval_core.analysis import rankings as R
from checkeval_core.stats import ranking as RS
from tests.helpers import (
    FRUITS,
    build_ranking_task,
)

ELO_PER_LN = 400 / math.log(10)


# -- Bradley–Terry ------------------------------------------------------------------------------
def test_bt_two_players_closed_form():
    # a wins 3 of 4: p_a / p_b = 3, so the gap is 400·log10(3) = 190.85 and the mean is 1000
    r = RS.bradley_terry([("a", "b", "a")] * 3 + [("a", "b", "b")])
    assert r["a"] - r["b"] == pytest.approx(400 * math.log10(3), abs=1e-4)
    assert (r["a"] + r["b"]) / 2 == pytest.approx(1000)


def test_bt_three_player_chain_hand_computed():
    # a beats b 2:1, b beats c 2:1, a and c never meet: the chain has no cycle, so each
    # pair's odds are fitted exactly — gaps of ln 2 in θ = 400·log10(2) = 120.41 Elo.
    m = [("a", "b", "a"), ("a", "b", "a"), ("b", "a", "a"),
         ("b", "c", "a"), ("b", "c", "a"), ("c", "b", "a")]
    r = RS.bradley_terry(m)
    gap = 400 * math.log10(2)
    assert r["a"] == pytest.approx(1000 + gap, abs=1e-3)
    assert r["b"] == pytest.approx(1000, abs=1e-3)
    assert r["c"] == pytest.approx(1000 - gap, abs=1e-3)


def test_bt_mle_score_equations_with_ties():
    # At the MLE every player's expected wins equal its observed wins (ties = half a win).
    m = [("a", "b", "a"), ("a", "b", "a"), ("a", "b", "b"), ("b", "c", "a"), ("b", "c", "tie"),
         ("c", "b", "a"), ("a", "c", "a"), ("a", "c", "tie"), ("c", "a", "a")]
    r = RS.bradley_terry(m)
    names, w = RS.win_matrix(m)
    theta = np.array([r[n] for n in names]) / ELO_PER_LN
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
    n = w + w.T
    expected = (n * p).sum(axis=1)
    assert expected == pytest.approx(w.sum(axis=1), abs=1e-5)
    assert r["a"] > r["b"]


def test_bt_ties_count_half():
    # one win and two ties for a = 2 wins of 3 → odds 2:1
    r = RS.bradley_terry([("a", "b", "a"), ("a", "b", "tie"), ("b", "a", "tie")])
    assert r["a"] - r["b"] == pytest.approx(400 * math.log10(2), abs=1e-3)


def test_bt_undefeated_is_regularised_not_infinite():
    names, w = RS.win_matrix([("a", "b", "a"), ("b", "c", "a"), ("a", "c", "a")])
    assert not RS.strongly_connected(w)
    theta, regularised = RS.fit_bt(w)
    elo = RS.to_elo(theta)
    assert regularised and np.all(np.isfinite(elo))
    assert elo[0] > elo[1] > elo[2]


def test_score_matches_tie_margin():
    t = pd.DataFrame({"x": [0.9, 0.5], "y": [0.85, 0.2], "z": [np.nan, 0.45]}, index=["q1", "q2"])
    m = RS.score_matches(t, tie_margin=0.1)
    assert ("x", "y", "tie") in m  # |0.05| < 0.1
    assert ("x", "y", "a") in m and ("y", "z", "b") in m and ("x", "z", "tie") in m
    assert len(m) == 4  # z has no answer to q1
    assert RS.score_matches(t, tie_margin=0.0).count(("x", "y", "a")) == 2


# -- rank correlations and the list level --------------------------------------------------------
def test_rank_correlation_matches_scipy_and_reasons():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=8), rng.normal(size=8)
    rc = RS.rank_correlation(x, y)
    assert rc["spearman"] == pytest.approx(stats.spearmanr(x, y)[0])
    assert rc["kendall"] == pytest.approx(stats.kendalltau(x, y)[0])
    assert rc["n"] == 8 and rc["reason"] is None
    two = RS.rank_correlation([1, 2, np.nan], [3, 4, 5])
    assert math.isnan(two["spearman"]) and "≥ 3 systems" in two["reason"] and two["n"] == 2
    const = RS.rank_correlation([0.5, 0.5, 0.5], [1, 2, 3])
    assert math.isnan(const["kendall"]) and "same score" in const["reason"]
    assert "reference rating is the same" in RS.rank_correlation([1, 2, 3], [5, 5, 5])["reason"]


def test_batch_rank_correlation_equals_scipy_per_row():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, size=(40, 7)).astype(float)  # many ties
    x[3, 2] = np.nan  # a resample where one system has no answer
    x[4] = 1.0  # a constant row
    y = np.array([5, 3, 3, 9, 1, 7, np.nan])  # a system without a reference
    out = RS.batch_rank_correlation(x, y)
    for r in range(len(x)):
        one = RS.rank_correlation(x[r], y)
        for c in ("spearman", "kendall"):
            if math.isnan(one[c]):
                assert math.isnan(out[c][r]), (r, c)
            else:
                assert out[c][r] == pytest.approx(one[c], abs=1e-12), (r, c)
    assert math.isnan(out["spearman"][4])


@pytest.mark.usefixtures("few_groups_allowed")
def test_list_level_scores_ranks_and_bootstrap():
    t = pd.DataFrame({"s1": [0.9, 0.8, 0.7, 0.95], "s2": [0.6, np.nan, 0.5, 0.7],
                      "s3": [0.2, 0.3, 0.1, 0.4], "s4": [0.5, 0.6, 0.4, 0.45]},
                     index=["q1", "q2", "q3", "q4"])
    ref = {"s1": 1300, "s2": 1200, "s3": 1000, "s4": 1100}
    out = RS.list_level(t, ref, n_boot=300, seed=1)
    df = out["systems"].set_index("system")
    assert df.loc["s2", "score"] == pytest.approx(0.6)  # mean over the 3 queries it answered
    assert df.loc["s2", "n_queries"] == 3
    assert list(df["rank"]) == [1, 2, 4, 3]
    assert out["spearman"].value == pytest.approx(1.0)
    assert out["kendall"].value == pytest.approx(1.0)
    assert (out["spearman"].n_systems, out["spearman"].n_groups) == (4, 4)
    for k in ("s1", "s3"):
        assert df.loc[k, "ci_low"] <= df.loc[k, "score"] <= df.loc[k, "ci_high"]
    lo, hi = out["spearman"].ci
    assert lo <= out["spearman"].value <= hi
    # same seed → same interval; the interval is computed from resampled queries
    assert RS.list_level(t, ref, n_boot=300, seed=1)["spearman"].ci == (lo, hi)
    none = RS.list_level(t, {}, n_boot=50)
    assert not none["spearman"].defined and none["spearman"].reason
    one_q = RS.list_level(t.iloc[:1], ref, n_boot=50)
    assert math.isnan(one_q["systems"]["ci_low"].iloc[0])


def test_pair_agreement_hand_computed():
    gold = ["a", "b", "tie", "a", "b"]
    pred = ["a", "tie", "tie", "b", "b"]
    out = RS.pair_agreement(gold, pred)
    assert out["accuracy"] == pytest.approx(2 / 4)  # decisive gold: a✓ b✗(tie) a✗ b✓
    assert out["tie_rate"] == pytest.approx(2 / 5)
    assert out["three_way"] == pytest.approx(3 / 5)
    assert out["confusion"]["b"]["tie"] == 1 and out["confusion"]["a"]["b"] == 1
    no_ties = RS.pair_agreement(["a", "b"], ["a", "a"])
    assert no_ties["accuracy"] == 0.5 and math.isnan(no_ties["three_way"])
    assert "no ties" in no_ties["reasons"]["three_way"]
    assert math.isnan(RS.pair_agreement([], [])["accuracy"])


# -- reports on a fake-judge run ------------------------------------------------------------------
@pytest.mark.usefixtures("few_groups_allowed")
def test_rankings_report_on_fake_run(db):
    rid = build_ranking_task(db)
    rep = R.rankings_report(db, rid, n_boot=200)
    assert rep["aggregation"] == "mean_p_yes" and rep["n_queries"] == 4 and rep["n_systems"] == 3
    order = [s["system"] for s in rep["systems"]]
    assert order == ["sys-best", "sys-mid", "sys-low"]
    assert [s["rank"] for s in rep["systems"]] == [1, 2, 3]
    best = rep["systems"][0]
    assert best["reference"] == 1200 and best["reference_lower"] == 1190
    assert best["ci"][0] <= best["score"] <= best["ci"][1]
    # the score is the mean over queries of the stored item scores
    sc = R.item_scores(db, rid)
    mine = sc[(sc["system"] == "sys-mid") & (sc["aggregation"] == "mean_p_yes")]["score"]
    assert rep["systems"][1]["score"] == pytest.approx(mine.mean())
    assert rep["spearman"]["value"] == pytest.approx(1.0) and rep["spearman"]["n"] == 3
    elo = {s["system"]: s["rating"] for s in rep["elo"]["systems"]}
    assert elo["sys-best"] > elo["sys-mid"] > elo["sys-low"]
    assert np.mean(list(elo.values())) == pytest.approx(1000)
    assert rep["elo"]["n_matches"] == 12  # 4 queries × 3 pairs of systems
    assert rep["human_elo"]["n_matches"] == 4
    assert set(rep["aggregations"]) >= {"mean_p_yes", "share_yes"}
    ss = R.system_scores(db, rid)
    assert set(ss["aggregation"]) >= {"mean_p_yes", "share_yes"}
    assert len(ss[ss["aggregation"] == "share_yes"]) == 3


def test_rankings_report_without_reference_or_preferences(db):
    rid = build_ranking_task(db, prefs=False, ratings=False)
    rep = R.rankings_report(db, rid, n_boot=20)
    assert rep["reference_source"] is None
    assert math.isnan(rep["spearman"]["value"])
    assert "no reference ratings" in rep["spearman"]["reason"]
    assert rep["human_elo"]["systems"] == [] and "no human pairwise" in rep["human_elo"]["reason"]
    prs = R.pairs_report(db, rid)
    assert prs["n_pairs"] == 0 and math.isnan(prs["accuracy"])
    assert "no human pairwise preferences" in prs["reasons"]["accuracy"]
    with pytest.raises(ValueError, match="no aggregation 'nope'"):
        R.rankings_report(db, rid, aggregation="nope")


def test_pairs_report_and_detail(db):
    rid = build_ranking_task(db)
    prs = R.pairs_report(db, rid, tie_margin=0.1)
    assert prs["n_pairs"] == 4 and prs["n_gold_ties"] == 1
    by = {(p["item_a_id"], p["item_b_id"]): p for p in prs["pairs"]}
    p1 = by[("g1:sys-best", "g1:sys-low")]
    assert p1["judge"] == RS.judge_outcome(p1["score_a"], p1["score_b"], 0.1) == "a"
    gold = [p["gold"] for p in prs["pairs"]]
    pred = [p["judge"] for p in prs["pairs"]]
    expect = RS.pair_agreement(gold, pred)
    assert prs["accuracy"] == expect["accuracy"] and prs["three_way"] == expect["three_way"]
    # a huge margin makes every judge call a tie: accuracy 0, tie rate 1
    wide = R.pairs_report(db, rid, tie_margin=2.0)
    assert wide["accuracy"] == 0 and wide["tie_rate"] == 1
    d = R.pair_detail(db, rid, "g1:sys-best", "g1:sys-low")
    assert d["same_query"] and d["query"].startswith("Write a short note")
    assert [q["text"] for q in d["questions"]] == [f"Does it mention {f}?"
                                                  for f in FRUITS["g1"]]
    for q in d["questions"]:
        assert q["verdict_a"] in ("yes", "no") and q["p_yes_b"] is not None
        assert q["differs"] == (q["verdict_a"] != q["verdict_b"])
    assert d["n_differ"] == sum(q["differs"] for q in d["questions"]) > 0
    assert d["human"] == [{"winner": "a", "source": "prefs.csv", "annotator": ""}]
    # the same pair the other way round flips the human vote
    assert R.pair_detail(db, rid, "g1:sys-low", "g1:sys-best")["human"][0]["winner"] == "b"
    qa = R.query_answers(db, rid)
    assert len(qa) == 12 and set(qa["group"]) == set(FRUITS)
