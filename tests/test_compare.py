"""Run comparison (``checkeval_core.analysis.compare``, ``checkeval compare``, the Compare runs
page) on tiny hand-built runs whose every number is computed by hand below."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core.analysis.compare import CompareError, compare_runs, paired_agreement
from checkeval_core.stats.bootstrap import MIN_GROUPS
from tests.conftest import APP
from tests.helpers import COMPARE_HUMAN as HUMAN  # noqa: F401
from tests.helpers import COMPARE_ITEMS as ITEMS
from tests.helpers import cli
from tests.helpers import compare_run as make_run
from tests.helpers import compare_task as make_task

# per group (g1, g2), the scores of systems s1, s2, s3 — humans are 1, 2, 3 in both groups
A_SCORES = {"g1": [0.1, 0.2, 0.3], "g2": [0.3, 0.2, 0.1]}  # Spearman +1 and −1: mean 0
B_SCORES = {"g1": [0.1, 0.2, 0.3], "g2": [0.3, 0.1, 0.2]}  # Spearman +1 and −0.5: mean 0.25








# q1: A Yes everywhere, B No on g2-s1 and g2-s2 (2 Yes→No); q2: A No on g1-s1 where B says
# Yes (1 No→Yes), B invalid on g1-s2 (not a decision: q2 is compared on 5 items)
A_ANS = {**{(i, 0): "yes" for i in ITEMS}, **{(i, 1): "yes" for i in ITEMS}, ("g1-s1", 1): "no"}
B_ANS = {**{(i, 0): "yes" for i in ITEMS}, ("g2-s1", 0): "no", ("g2-s2", 0): "no",
         **{(i, 1): "yes" for i in ITEMS}, ("g1-s2", 1): "invalid"}


@pytest.fixture
def two_runs(db):
    tid = make_task(db)
    return db, make_run(db, tid, A_SCORES, A_ANS), make_run(db, tid, B_SCORES, B_ANS)


@pytest.mark.usefixtures("few_groups_allowed")
def test_agreement_and_paired_interval_by_hand(two_runs):
    db, a, b = two_runs
    res = compare_runs(db, a, b, n_boot=2000, seed=1)
    ag = res["agreement"]
    assert res["n_common_items"] == 6 and res["n_groups"] == 2
    assert ag["a"] == pytest.approx(0.0) and ag["b"] == pytest.approx(0.25)
    assert ag["delta"] == pytest.approx(0.25)
    # paired: per group Δ is 0 (g1) and 0.5 (g2); a resample draws (g1,g1) → 0, (g2,g2) → 0.5
    # or a mix → 0.25, each extreme with probability 1/4 > 2.5 %, so the interval is [0, 0.5].
    # (Unpaired draws of A ∈ {1, 0, −1} and B ∈ {1, 0.25, −0.5} would span [−1.25, 2].)
    assert ag["ci"] == pytest.approx([0.0, 0.5])
    assert ag["n_items"] == 6 and ag["n_groups"] == 2 and ag["reason"] is None
    d = ag["dimensions"]["d"]  # one dimension: its own paired interval is the same
    assert d["ci"] == pytest.approx([0.0, 0.5]) and (d["n_items"], d["n_groups"]) == (6, 2)


def test_paired_interval_needs_two_groups(two_runs):
    db, a, b = two_runs
    from checkeval_core.analysis.compare import shared_frame

    df, _ = shared_frame(db, a, b)
    one = paired_agreement(df[df["group"] == "g1"], n_boot=100)
    assert one["a"] == pytest.approx(1.0) and one["ci"][0] != one["ci"][0]  # NaN
    assert f"needs ≥ {MIN_GROUPS} groups (documents / contexts / queries) (n=1)" in one[
        "ci_reason"]
    assert one["dimensions"]["d"]["ci_reason"] == one["ci_reason"]


def test_items_sorted_by_regression_by_hand(two_runs):
    db, a, b = two_runs
    items = compare_runs(db, a, b, n_boot=0)["items"]
    # percentile ranks over the 6 shared items: 1/0.1 → 0.25, 2/0.2 → 7/12, 3/0.3 → 11/12.
    # g2-s2: A 0.2 (gap 0), B 0.1 (gap 1/3) → regression +1/3 (first);
    # g2-s3: A 0.1 (gap 2/3), B 0.2 (gap 1/3) → −1/3 (last); the others 0, by |Δ| then id.
    assert [r["item_id"] for r in items] == ["g2-s2", "g1-s1", "g1-s2", "g1-s3", "g2-s1",
                                             "g2-s3"]
    assert items[0]["regression"] == pytest.approx(1 / 3)
    assert items[-1]["regression"] == pytest.approx(-1 / 3)
    assert items[0]["delta"] == pytest.approx(-0.1) and items[0]["human"] == 2.0


def test_without_humans_sorted_by_abs_delta(db):
    tid = make_task(db, human=False)
    a = make_run(db, tid, {"g1": [0.5, 0.5, 0.5], "g2": [0.5, 0.5, 0.5]})
    b = make_run(db, tid, {"g1": [0.6, 0.1, 0.5], "g2": [0.5, 0.8, 0.45]})
    res = compare_runs(db, a, b, n_boot=10)
    assert [r["item_id"] for r in res["items"]][:3] == ["g1-s2", "g2-s2", "g1-s1"]
    assert res["items"][0]["regression"] is None
    assert "no shared item has a human score" in res["agreement"]["reason"]


def test_flipped_decisions_by_hand(two_runs):
    db, a, b = two_runs
    res = compare_runs(db, a, b, n_boot=0)
    flips = {q["question"]: q for q in res["flipped"]}
    assert flips["Is it q1?"]["yes_to_no"] == 2 and flips["Is it q1?"]["no_to_yes"] == 0
    assert sorted(flips["Is it q1?"]["items"]) == ["g2-s1", "g2-s2"]
    assert flips["Is it q2?"]["no_to_yes"] == 1 and flips["Is it q2?"]["n_both"] == 5
    assert [q["question"] for q in res["flipped"]] == ["Is it q1?", "Is it q2?"]


def test_only_shared_items_are_compared(db):
    tid = make_task(db)
    a = make_run(db, tid, A_SCORES)
    b = make_run(db, tid, {"g1": [0.1, 0.2, 0.3], "g2": [None, None, None]})
    res = compare_runs(db, a, b, n_boot=50)
    assert res["n_common_items"] == 3 and res["n_groups"] == 1
    assert res["runs"]["a"]["n_items"] == 6 and res["runs"]["b"]["n_items"] == 3
    assert {r["group"] for r in res["items"]} == {"g1"}


def test_refuses_mismatched_runs(db):
    t1, t2 = make_task(db, "t1"), make_task(db, "t2")
    a, other = make_run(db, t1, A_SCORES), make_run(db, t2, A_SCORES)
    with pytest.raises(CompareError, match="different tasks"):
        compare_runs(db, a, other)
    only_g1 = make_run(db, t1, {"g1": A_SCORES["g1"], "g2": [None] * 3})
    only_g2 = make_run(db, t1, {"g1": [None] * 3, "g2": A_SCORES["g2"]})
    with pytest.raises(CompareError, match="share no scored item"):
        compare_runs(db, only_g1, only_g2)
    with pytest.raises(CompareError, match="has no scores"):
        compare_runs(db, a, make_run(db, t1, {"g1": [None] * 3, "g2": [None] * 3}))
    with pytest.raises(CompareError, match="twice"):
        compare_runs(db, a, a)
    with pytest.raises(CompareError, match="no scores in aggregation 'likert'"):
        compare_runs(db, a, make_run(db, t1, A_SCORES), aggregation="likert")




@pytest.mark.usefixtures("few_groups_allowed")
def test_cli_compare_json_and_refusal(two_runs, db_path):
    db, a, b = two_runs
    r = cli(db_path, "compare", "--run", str(a), "--run", str(b), "--json", "--bootstrap",
            "2000", "--seed", "1")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"n_common_items", "n_groups", "agreement", "items", "flipped"} <= set(out)
    assert {"a", "b", "delta", "ci"} <= set(out["agreement"])
    assert out["n_common_items"] == 6 and out["agreement"]["ci"] == pytest.approx([0, 0.5])
    assert out["items"][0]["item_id"] == "g2-s2"
    r = cli(db_path, "compare", "--run", str(a), "--run", str(b))
    assert r.returncode == 0 and "Δ +0.250 [+0.000, +0.500]" in r.stdout
    other = make_run(db, make_task(db, "t2"), A_SCORES)
    r = cli(db_path, "compare", "--run", str(a), "--run", str(other), "--json")
    assert r.returncode == 2 and "different tasks" in r.stderr and not r.stdout
    r = cli(db_path, "compare", "--run", str(a))
    assert r.returncode == 2 and "exactly two runs" in r.stderr


@pytest.mark.usefixtures("few_groups_allowed")
def test_compare_page_first_row_and_trace_link(two_runs):
    db, a, b = two_runs
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"a": str(a), "b": str(b)})
    at.run()
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="cmp_a").value == a and at.selectbox(key="cmp_b").value == b
    items = next(d.value for d in at.dataframe if "regression" in d.value.columns)
    assert items.iloc[0]["item_id"] == "g2-s2"
    pk = db.execute("SELECT id FROM item WHERE item_id = 'g2-s2'").fetchone()[0]
    assert items.iloc[0]["trace"] == f"/traces?runs={a},{b}&item={pk}&dim=d"
    assert {m.label: m.value for m in at.metric}["Δ = B − A"] == "+0.250"
    dims = next(d.value for d in at.dataframe if "95% CI" in d.value.columns)
    assert list(dims["95% CI"]) == ["[+0.000, +0.500]"] and list(dims["groups"]) == [2]
    flips = next(d.value for d in at.dataframe if "yes_to_no" in d.value.columns)
    assert list(flips["yes_to_no"]) == [2, 0]


def test_compare_page_refuses_runs_without_shared_items(db):
    tid = make_task(db)
    a = make_run(db, tid, {"g1": [0.1, 0.2, 0.3], "g2": [None] * 3})
    b = make_run(db, tid, {"g1": [None] * 3, "g2": [0.1, 0.2, 0.3]})
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"a": str(a), "b": str(b)})
    at.run()
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert any("Not comparable" in e.value and "share no scored item" in e.value
               for e in at.error)
    assert not any("regression" in d.value.columns for d in at.dataframe)


@pytest.mark.parametrize("coef", ["spearman", "pearson", "kendall"])
def test_group_correlations_match_the_per_group_definition(coef):
    import numpy as np
    import pandas as pd

    from checkeval_core.analysis.compare import group_correlations
    from checkeval_core.stats.correlation import corr, level_value

    rng = np.random.default_rng(3)
    rows = [{"group": f"g{g}", "score_a": float(rng.integers(0, 4)) / 4,
             "human": float(rng.integers(1, 6))} for g in range(30) for _ in range(5)]
    rows += [{"group": "const", "score_a": 0.5, "human": h} for h in (1.0, 2.0, 3.0)]
    rows += [{"group": "single", "score_a": 0.1, "human": 2.0}]
    df = pd.DataFrame(rows)
    groups = sorted(df["group"].unique())
    got = group_correlations(df, groups + ["absent"], "score_a", coef)
    want = [corr(df[df.group == g]["score_a"], df[df.group == g]["human"], coef)
            for g in groups] + [float("nan")]
    np.testing.assert_allclose(got, want, atol=1e-12)
    point = level_value(df.rename(columns={"score_a": "metric"}).assign(system="s"),
                        "sample_level", coef)[0]
    assert np.nanmean(got) == pytest.approx(point)


def test_compare_page_needs_two_runs(db):
    tid = make_task(db)
    make_run(db, tid, A_SCORES)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["task_name"] = "t"
    at.run()
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert any("needs two completed runs of this task; it has 1" in i.value for i in at.info)
