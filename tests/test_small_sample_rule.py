"""The small-sample rule of the statistics floor, at its real value: below
``stats.bootstrap.MIN_GROUPS`` groups no interval, no Δ verdict, no flag, warning or proposal —
each with its reason — in every view that computes one."""

from __future__ import annotations

import json

import pytest

from checkeval_core.analysis import health as H
from checkeval_core.analysis import proposal as P
from checkeval_core.analysis import versions as V
from checkeval_core.annotation.position_bias import position_bias
from checkeval_core.stats.bootstrap import MIN_GROUPS
from checkeval_core.stats.ranking import list_level
from tests.helpers import build_proposal_task, build_versions_task, fake_demo_runs, run_cli

FEW = f"needs ≥ {MIN_GROUPS} groups (documents / contexts / queries)"


def test_the_minimum_is_six():
    # stated in docs/methods.md ("The statistics floor"); a change there changes this test
    assert MIN_GROUPS == 6


@pytest.fixture
def three_documents(db, db_path):
    """Two fake runs (rocketeval, checkeval) over the first 48 SummEval demo items: 3
    documents × 16 systems."""
    ids = fake_demo_runs(db, 48)
    n = db.execute("SELECT COUNT(DISTINCT i.group_id) FROM score s JOIN item i ON i.id = "
                   "s.item_id WHERE s.run_id = ?", [ids[0]]).fetchone()[0]
    assert n == 3
    return ids


def test_analyze_json_on_three_documents_has_no_interval_and_says_why(db_path,
                                                                      three_documents):
    a, b = three_documents
    res = run_cli(["analyze", "--run", str(a), "--run", str(b), "--json"], db=db_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    n_figures = 0
    for rep in out["runs"].values():
        assert rep["support"]["n_groups"] == 3
        for d in rep["dimensions"].values():
            e = d["sample_level"]
            for coef in ("spearman", "kendall", "pearson"):
                assert e["ci"][coef] == [None, None]
                assert FEW + " (n=3)" in e["ci_reasons"][coef]
                n_figures += 1
    assert n_figures >= 6
    for h in out["health"].values():
        assert h["warnings_withheld"].startswith("no judge-health warning raised: the run "
                                                 "scored 3 groups")
        assert {w["code"] for w in h["warnings"]} <= set(H.ALWAYS)
    [c] = out["comparisons"]
    assert (c["run_a"], c["run_b"], c["n_groups"]) == (a, b, 3)
    assert c["ci"] == [None, None] and c["mde"] is None and FEW in c["ci_reason"]
    assert c["verdict"] == f"too few groups (n = 3 < {MIN_GROUPS}): no verdict"
    assert c["delta"] == pytest.approx(c["b"] - c["a"])


def test_compare_json_carries_verdict_and_mde_on_too_few_groups(db_path, three_documents):
    a, b = three_documents
    res = run_cli(["compare", "--run", str(a), "--run", str(b), "--json"], db=db_path)
    assert res.returncode == 0, res.stderr
    ag = json.loads(res.stdout)["agreement"]
    assert ag["verdict"] == f"too few groups (n = 3 < {MIN_GROUPS}): no verdict"
    assert ag["mde"] is None and ag["ci"] == [None, None]
    for d in ag["dimensions"].values():
        assert d["verdict"].startswith("too few groups") and d["mde"] is None


def test_question_diagnostics_raise_no_flag_on_three_documents(db, three_documents):
    from checkeval_core.analysis.diagnostics import question_diagnostics

    diag = question_diagnostics(db, three_documents)
    assert diag and all(d["flags"] == [] for d in diag)
    assert any(d["weak_signs"] for d in diag)


def test_versions_delta_on_four_documents_gives_no_verdict(db):
    build_versions_task(db)  # 4 documents
    d = V.version_diff(db, "vt", 1, 2, n_boot=100)
    x = next(x for x in d["deltas"] if x["evidence"] == "human_scores")
    assert x["n_common_groups"] == 4 and all(c != c for c in x["ci"])  # NaN
    assert x["verdict"] == f"too few groups (n = 4 < {MIN_GROUPS}): no verdict"
    assert FEW in x["ci_reason"] and x["mde"] != x["mde"]  # NaN
    rep = V.versions_report(db, "vt", n_boot=100)
    assert all(f["weak"] and FEW in f["ci_reason"] for r in rep["rows"]
               for f in r["parts"].values() if f["value"] == f["value"])


def test_no_proposal_from_four_dev_documents(db):
    from checkeval_core.task_split import set_split

    build_proposal_task(db)  # 8 documents
    set_split(db, "pt", 0.5, seed=0)
    p = P.propose(db, [P.proposal_runs(db, "pt")[0]["run"]], weights=True)
    assert p["dropped"] == [] and p["weights"] is None
    assert any(n.startswith("no proposal: the dev answers come from 4 groups") for n in
               p["notes"])
    assert p["weights_reason"].startswith("no proposal")
    assert p["dev"]["verdict"].startswith("too few groups (n = 4")


def test_health_warnings_need_the_minimum_of_groups():
    dims = {"coherence": {"n_groups": 3, "n_multi_groups": 3, "constant_groups": 3,
                          "score_range": 0.5,
                          "length_corr": {"spearman": -1.0, "n": 9},
                          "human_corr": {"spearman": 0.1, "n": 9}}}
    h = {"invalid_share": 0.2, "n_answers": 50, "yes_share": 1.0, "n_yes_no": 40,
         "n_items": 9, "n_groups": 3,
         "systems": {"n": 3, "n_strong": 0, "strong_span": float("nan"),
                     "strong_se": float("nan")},
         "never_varying": {"n": 5, "n_questions": 6, "share": 5 / 6, "min_answers": 5},
         "dimensions": dims,
         "ties": {"share": float("nan")}}
    assert [w["code"] for w in H.warnings_for(h)] == ["invalid"]
    many = {**h, "n_groups": MIN_GROUPS,
            "dimensions": {"coherence": {**dims["coherence"], "n_groups": MIN_GROUPS}}}
    codes = {w["code"] for w in H.warnings_for(many)}
    assert {"invalid", "yes_share", "never_varying", "constant_groups", "length"} <= codes
    assert H.withheld_reason(3).endswith(f"fewer than the {MIN_GROUPS} a warning needs")
    assert H.withheld_reason(MIN_GROUPS) is None


def test_position_bias_flag_needs_the_minimum_of_queries():
    def votes(n_groups):
        return [{"annotator": "ann", "winner": "a", "item_a": 2 * k, "item_b": 2 * k + 1,
                 "shown_first": 2 * k, "group_id": f"q{k % n_groups}"} for k in range(30)]

    few = position_bias(votes(3))["overall"]
    assert few["share"] == 1.0 and few["ci"][0] > 0.5  # the interval excludes 0.5 …
    assert few["follows_position"] is False and few["warning"] is None  # … but no flag
    assert few["flag_reason"] == (f"no flag: the decisive votes come from 3 groups (queries), "
                                  f"fewer than the {MIN_GROUPS} a flag needs")
    many = position_bias(votes(MIN_GROUPS))["overall"]
    assert many["follows_position"] is True and many["warning"]


def test_rankings_list_level_on_four_queries_has_no_interval():
    import pandas as pd

    table = pd.DataFrame({"a": [0.9, 0.8, 0.7, 0.9], "b": [0.5, 0.4, 0.6, 0.5],
                          "c": [0.1, 0.3, 0.2, 0.2]})
    ll = list_level(table, {"a": 1200, "b": 1100, "c": 1000}, n_boot=100)
    assert ll["spearman"].value == pytest.approx(1.0)
    assert ll["spearman"].ci is None
    assert ll["spearman"].ci_reason == f"no interval: needs ≥ {MIN_GROUPS} queries (n=4)"
