"""Correlation levels against hand-computed values and scipy; the skipped-constant-group
rule; ties; bootstrap determinism; BH; the external-metric path on full SummEval."""

import csv
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from checkeval_core.stats.correlation import (
    bootstrap_ci,
    corr,
    correlations,
    is_constant,
    level_value,
    quality_split,
)
from checkeval_core.stats.significance import bh_adjust, wilcoxon_bh
from tests.helpers import FIXTURES
from tests.reference_stats import paired_bootstrap

DF = pd.DataFrame({
    "group": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
    "system": ["s1", "s2", "s3"] * 3,
    "metric": [1, 2, 3, 3, 1, 2, 5, 5, 5],
    "human": [1, 2, 3, 1, 2, 3, 2, 4, 1],
})


def test_corr_matches_scipy_and_edges():
    x, y = [1, 2, 3, 4, 4], [2, 1, 4, 3, 5]
    assert corr(x, y, "spearman") == pytest.approx(stats.spearmanr(x, y)[0])
    assert corr(x, y, "kendall") == pytest.approx(stats.kendalltau(x, y)[0])  # tau-b, ties
    assert corr(x, y, "pearson") == pytest.approx(stats.pearsonr(x, y)[0])
    assert math.isnan(corr([1, 1, 1], [1, 2, 3], "spearman"))
    assert math.isnan(corr([1], [2], "pearson"))



def test_values_equal_up_to_rounding_are_constant_with_their_reason():
    """System means of equal scores summed in another order differ in the last bits (seen in
    a fake-judge benchmark: a spread of 2.7e-15 around 3.153); scipy then returned a
    "correlation" of that noise with a NearConstantInputWarning. They are constant: NaN,
    and the reason says why, like an exact tie."""
    from checkeval_core.analysis.frames import undefined_reason
    from checkeval_core.stats.ranking import rank_correlation

    base = 3.1534819912345678
    noisy = [base, base + 2.6645352591003757e-15, base, base - 8.9e-16]
    assert len(set(noisy)) == 3 and is_constant(noisy)
    assert not is_constant([base, base + 1e-9, base, base])  # a real, if small, spread
    assert is_constant([]) and is_constant([0.0, 0.0]) and not is_constant([0.0, 1e-11])
    human = [1.0, 2.0, 3.0, 4.0]
    for m in ("pearson", "spearman", "kendall"):
        assert math.isnan(corr(noisy, human, m))
    assert rank_correlation(noisy, human)["reason"] == \
        "the judge gives every system the same score"
    df = pd.DataFrame({"group": ["d"] * 4, "system": list("abcd"), "metric": noisy,
                       "human": human})
    assert math.isnan(level_value(df, "system_level", "pearson")[0])
    assert undefined_reason(df, "system_level", 0).startswith(
        "the judge gave every system (mean) the same score")

def test_sample_level_skips_constant_groups():
    # group a: rho = 1; group b: metric (3,1,2) vs human (1,2,3): rho = -0.5; c: constant
    v, n, skipped = level_value(DF, "sample_level", "spearman")
    assert (n, skipped) == (2, 1)
    assert v == pytest.approx((1.0 - 0.5) / 2)


def _sample_level_by_pandas(df, method):
    """The sample level as it was computed group by group with pandas (the reference)."""
    df = df.dropna(subset=["metric", "human"])
    vals, skipped = [], 0
    for _, g in df.groupby("group", sort=False):
        if g["metric"].nunique() <= 1 or g["human"].nunique() <= 1:
            skipped += 1
            continue
        v = corr(g["metric"], g["human"], method)
        if math.isnan(v):
            skipped += 1
        else:
            vals.append(v)
    return (float(np.mean(vals)) if vals else math.nan), len(vals), skipped


@pytest.mark.parametrize("method", ["spearman", "kendall", "pearson"])
def test_sample_level_equals_the_group_by_group_reference(method):
    # interleaved groups, ties, constant and one-item groups, missing values and groups: the
    # numpy split must give the same floats (same groups, same order, same scipy call)
    rng = np.random.default_rng(5)
    n = 400
    df = pd.DataFrame({"group": rng.choice([f"g{i}" for i in range(37)], n).astype(object),
                       "system": "s", "metric": rng.integers(0, 5, n) / 4,
                       "human": rng.integers(1, 6, n).astype(float)})
    df.loc[df["group"] == "g3", "metric"] = 0.5  # constant judge in one group
    df.loc[rng.choice(n, 20, replace=False), "human"] = np.nan
    df.loc[rng.choice(n, 5, replace=False), "group"] = None
    got, want = level_value(df, "sample_level", method), _sample_level_by_pandas(df, method)
    # the same groups and counts exactly; the value within 1e-12 relative: both sides run the
    # same scipy call per group, but a CPU's vector code may sum the mean in another order
    assert got[1:] == want[1:] and got[0] == pytest.approx(want[0], rel=1e-12, abs=1e-15)
    assert want[2] >= 1 and want[1] > 20
    assert level_value(df.iloc[:0], "sample_level", method)[1:] == (0, 0)


def test_dataset_and_system_levels():
    v, n, _ = level_value(DF, "dataset_level", "pearson")
    assert n == 9 and v == pytest.approx(stats.pearsonr(DF["metric"], DF["human"])[0])
    sysm = DF.groupby("system")[["metric", "human"]].mean()
    v, n, _ = level_value(DF, "system_level", "spearman")
    assert n == 3 and v == pytest.approx(stats.spearmanr(sysm["metric"], sysm["human"])[0])


def test_bootstrap_contains_estimate_and_is_deterministic():
    rng = np.random.default_rng(1)
    rows = []
    for g in range(20):
        h = rng.integers(1, 6, 8)
        rows += [{"group": g, "system": f"s{i}", "metric": h[i] + rng.normal(0, 1.5),
                  "human": h[i]} for i in range(8)]
    df = pd.DataFrame(rows)
    for level in ("sample_level", "dataset_level", "system_level"):
        est = level_value(df, level, "spearman")[0]
        lo, hi = bootstrap_ci(df, level, "spearman", n_boot=300, seed=7)
        assert lo <= est <= hi
        assert (lo, hi) == bootstrap_ci(df, level, "spearman", n_boot=300, seed=7)
    assert correlations(df, n_boot=50)["sample_level"]["n"] == 20


def test_quality_split():
    q = quality_split(DF)
    assert q["high"]["n"] == 3 and q["low"]["n"] == 6  # human 3, 3, 4 vs the rest


def test_wilcoxon_bh_and_paired_bootstrap():
    a = [0.40, 0.42, 0.45, 0.41, 0.44, 0.43]
    b = [0.30, 0.35, 0.33, 0.31, 0.36, 0.30]
    res = wilcoxon_bh({"x": (a, b), "same": (a, a)})
    assert res["x"]["p"] == pytest.approx(stats.wilcoxon(a, b).pvalue)
    assert res["x"]["p_bh"] == pytest.approx(res["x"]["p"])  # one test: BH leaves it as is
    assert math.isnan(res["same"]["p"])
    # BH by hand for three p-values: 0.01, 0.04, 0.03 -> 0.03, 0.04, 0.04
    assert list(bh_adjust([0.01, 0.04, 0.03])) == pytest.approx([0.03, 0.04, 0.04])
    assert list(bh_adjust([])) == []
    pb = paired_bootstrap(DF, DF.assign(metric=DF["human"]), n_boot=100)
    assert pb["difference"] < 0 and pb["ci"][0] <= pb["difference"] <= pb["ci"][1]


FULL_SUMMEVAL = (Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
                 / "summeval.jsonl")
# without the benchmark folder: its first 3 documents x 16 systems (tests/fixtures/README.md)
SUMMEVAL = FULL_SUMMEVAL if FULL_SUMMEVAL.exists() else FIXTURES / "benchmarks" / "summeval.jsonl"


def test_external_metric_reproduces_rouge1_relevance(db, tmp_path):
    """ROUGE-1 F1 (mean over the 11 references) relevance: per-document Spearman 0.33 on the
    full SummEval; on the committed subset, the mean of scipy's per-document Spearman."""
    from rouge_score import rouge_scorer

    from checkeval_core.analysis.external import import_metric
    from checkeval_core.analysis.report import analyze_metric
    from checkeval_core.datasets import import_file

    rows = [json.loads(x) for x in SUMMEVAL.read_text().splitlines()]
    data = tmp_path / "summeval.jsonl"
    data.write_text("".join(json.dumps({"id": f"{r['doc_id']}-{r['system_id']}",
                                        "group_id": r["doc_id"], "system_id": r["system_id"],
                                        "output": r["output"], "scores": r["scores"]}) + "\n"
                            for r in rows))
    import_file(db, data, "summeval", kind="summarization")
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    metric = tmp_path / "rouge1.csv"
    with metric.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "relevance"])
        f1s = []
        for r in rows:
            f1 = np.mean([scorer.score(ref, r["output"])["rouge1"].fmeasure
                          for ref in r["references"]])
            f1s.append(f1)
            w.writerow([f"{r['doc_id']}-{r['system_id']}", f1])
    import_metric(db, "summeval", metric)
    rep = analyze_metric(db, "summeval", "rouge1", n_boot=0)
    rel = rep["dimensions"]["relevance"]["sample_level"]
    # sample level = per document, then the mean over documents (computed here with scipy)
    by_doc: dict[str, list[tuple[float, float]]] = {}
    for r, f1 in zip(rows, f1s):
        by_doc.setdefault(r["doc_id"], []).append((f1, r["scores"]["relevance"]))
    rho = np.mean([stats.spearmanr(*zip(*v))[0] for v in by_doc.values()])
    tau = np.mean([stats.kendalltau(*zip(*v))[0] for v in by_doc.values()])
    assert rel["spearman"] == pytest.approx(rho) and rel["kendall"] == pytest.approx(tau)
    assert rel["n"] == len(by_doc)
    if SUMMEVAL == FULL_SUMMEVAL:  # the published figure
        assert rel["spearman"] == pytest.approx(0.328, abs=0.006)
        assert rel["kendall"] == pytest.approx(0.253, abs=0.006)
        assert rel["n"] == 100
