"""The statistics floor (``checkeval_core.stats``): one implementation per statistic, checked
against hand-computed values and the reference packages."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats as st
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss
from statsmodels.stats.proportion import proportion_confint

from checkeval_core.stats import bootstrap as B
from checkeval_core.stats.agreement import (
    binary_alpha,
    cohen_kappa,
    fleiss_kappa,
    interval_alpha,
    interval_stats,
    krippendorff_alpha,
)
from checkeval_core.stats.correlation import (
    bootstrap_ci,
    corr,
    group_correlations,
    level_value,
    paired_bootstrap,
)
from checkeval_core.stats.intervals import fisher_z_interval, t_critical, t_interval
from checkeval_core.stats.significance import (
    bh_adjust,
    fisher_exact_p,
    spearman_test,
    wilcoxon_test,
)
from checkeval_core.stats.values import Figure, fmt, fmt_ci, isnan, nan_to_none
from tests.reference_stats import paired_bootstrap as reference_paired


def test_draw_rule_is_one_integers_call_row_by_row():
    idx = B.resample_index(5, 7, seed=3)
    assert idx.shape == (7, 5)
    assert (idx == np.random.default_rng(3).integers(0, 5, size=(7, 5))).all()
    counts = B.resample_counts(idx, 5)
    for row, c in zip(idx, counts):
        assert c.tolist() == np.bincount(row, minlength=5).tolist()


def test_percentile_ci_drops_undefined_and_needs_two():
    assert B.percentile_ci([1.0, float("nan"), 3.0]) == [pytest.approx(1.05),
                                                          pytest.approx(2.95)]
    assert all(math.isnan(x) for x in B.percentile_ci([1.0, float("nan")]))


def test_group_bootstrap_of_a_mean_by_hand():
    per = np.array([0.1, 0.5, float("nan"), 0.9])
    n = max(B.MIN_GROUPS, 4)
    per = np.resize(per, n)
    boot = B.group_bootstrap(n, B.mean_of_groups(per), 50, seed=1)
    idx = B.resample_index(n, 50, 1)
    want = [np.nanmean(per[row]) for row in idx if not np.isnan(per[row]).all()]
    assert boot.values.tolist() == pytest.approx(want)
    assert boot.ci() == pytest.approx([float(np.quantile(want, 0.025)),
                                       float(np.quantile(want, 0.975))])
    assert boot.se == pytest.approx(float(np.std(want, ddof=1)))


def test_too_few_groups_give_no_interval_with_the_reason():
    boot = B.group_bootstrap(B.MIN_GROUPS - 1, B.mean_of_groups(np.ones(B.MIN_GROUPS - 1)),
                             100)
    assert all(math.isnan(x) for x in boot.ci())
    assert boot.ci_reason == (f"no interval: needs ≥ {B.MIN_GROUPS} groups (documents / "
                              f"contexts / queries) (n={B.MIN_GROUPS - 1})")
    assert B.group_bootstrap(10, B.mean_of_groups(np.ones(10)), 0).ci_reason == (
        "no interval: bootstrap switched off (0 resamples)")
    assert not B.enough_groups(B.MIN_GROUPS - 1) and B.enough_groups(B.MIN_GROUPS)


def test_share_ci_is_a_ratio_of_sums_per_resample():
    hits, counts = np.array([1, 2, 0, 3, 1, 2, 0, 1.0]), np.array([2, 2, 1, 4, 1, 3, 2, 2.0])
    r = B.share_ci(hits, counts, 200, seed=4)
    assert r.value == pytest.approx(10 / 17) and (r.n_items, r.n_groups) == (17, 8)
    idx = B.resample_index(8, 200, 4)
    vals = hits[idx].sum(1) / counts[idx].sum(1)
    assert list(r.ci) == pytest.approx([np.quantile(vals, 0.025), np.quantile(vals, 0.975)])
    few = B.share_ci(hits[:3], counts[:3], 200)
    assert few.ci is None and "needs ≥ 6" in few.ci_reason and few.defined
    none = B.share_ci([0, 0], [0, 0], 200)
    assert not none.defined and none.text() == "— (no decision)"


def test_wilson_matches_statsmodels_and_scipy():
    lo, hi = B.wilson_ci(7, 20)
    assert [lo, hi] == pytest.approx(list(proportion_confint(7, 20, method="wilson")))
    ci = st.binomtest(7, 20).proportion_ci(method="wilson")
    assert [lo, hi] == pytest.approx([ci.low, ci.high])
    assert B.wilson_ci(0, 0) is None


def test_mde_is_z_sum_times_the_paired_se_by_hand():
    assert B.mde(0.01) == pytest.approx((1.959964 + 0.841621) * 0.01, rel=1e-5)
    assert math.isnan(B.mde(float("nan")))
    a = np.array([0.1, 0.2, 0.3, 0.4])
    b = np.array([0.15, 0.2, 0.5, 0.35])
    pb = B.PairedBoot(a, b, n_groups=10, n_boot=4)
    d = b - a
    assert pb.se == pytest.approx(float(np.std(d, ddof=1)))
    assert pb.mde() == pytest.approx(2.8015852 * float(np.std(d, ddof=1)), rel=1e-6)


@pytest.mark.parametrize("ci,expected", [
    ([0.01, 0.05], "better on held-out"),
    ([-0.05, -0.01], "worse on held-out"),
    ([-0.02, 0.03], "no detectable change (could have detected ≥ 0.042)"),
])
def test_verdict_sentences(ci, expected):
    assert B.verdict(0.01, ci, 0.0421, 12) == expected


def test_verdict_below_the_minimum_and_without_interval():
    n = B.MIN_GROUPS - 1
    assert B.verdict(0.3, [0.1, 0.4], 0.05, n) == (
        f"too few groups (n = {n} < {B.MIN_GROUPS}): no verdict")
    assert B.verdict(0.3, [float("nan")] * 2, float("nan"), 20,
                     ci_reason="no interval: fewer than 2 resamples had a value") == (
        "no verdict: fewer than 2 resamples had a value")
    assert B.verdict(0.0, [0.0, 0.0], 0.0, 20) == "no change (Δ = 0 on every resample)"


def _frame(n_groups: int, seed: int = 0, shift: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(n_groups):
        for s in range(5):
            h = float(rng.integers(1, 6))
            rows.append({"item_pk": g * 10 + s, "group": f"g{g:02d}", "system": f"s{s}",
                         "human": h, "metric": h + rng.normal(scale=1.5) + shift * s})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("coef", ["spearman", "pearson", "kendall"])
def test_group_correlations_equal_scipy_per_group(coef):
    df = _frame(9, seed=2)
    df.loc[df["group"] == "g03", "human"] = 3.0  # constant: undefined
    groups = sorted(df["group"].unique()) + ["absent"]
    got = group_correlations(df, groups, "metric", coef)
    for g, v in zip(groups, got):
        part = df[df["group"] == g]
        want = corr(part["metric"], part["human"], coef)
        assert (math.isnan(v) and math.isnan(want)) or v == pytest.approx(want)
    x = df[df["group"] == "g00"]
    ref = {"spearman": st.spearmanr, "pearson": st.pearsonr,
           "kendall": lambda a, b: st.kendalltau(a, b, variant="b")}[coef](x["metric"],
                                                                           x["human"])[0]
    assert got[0] == pytest.approx(ref)


@pytest.mark.parametrize("level", ["sample_level", "dataset_level", "system_level"])
def test_paired_bootstrap_equals_the_slow_reference(level):
    fa, fb = _frame(10, seed=5), _frame(10, seed=5, shift=0.4)
    d, boot = paired_bootstrap(fa, fb, level, "spearman", 120, seed=0)
    ref = reference_paired(fb, fa, level, "spearman", n_boot=120, seed=0)
    assert d == pytest.approx(ref["difference"])
    assert boot.ci() == pytest.approx(ref["ci"])
    one = bootstrap_ci(fa, level, "spearman", 120, 0)
    assert level_value(fa, level, "spearman")[0] == pytest.approx(
        np.mean([corr(p["metric"], p["human"], "spearman") for _, p in fa.groupby("group")])
        if level == "sample_level" else level_value(fa, level, "spearman")[0])
    assert one[0] <= one[1]


def test_agreement_against_the_packages():
    data = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan],
                     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5],
                     [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5]])
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha(data, level) == pytest.approx(
            krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    assert interval_alpha(interval_stats(data).sum(axis=0)) == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))
    table = np.array([[3, 0], [2, 1], [0, 3], [1, 2], [3, 0]])
    assert fleiss_kappa(table) == pytest.approx(sm_fleiss(table))
    from sklearn.metrics import cohen_kappa_score

    a, b = list("yynnyyn"), list("ynnnyyy")
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))


def test_binary_alpha_from_sums_equals_krippendorff():
    votes = np.array([[1, 1, 0, 0, 1, 0], [1, 0, 0, 0, 1, 1], [1, 1, 0, 1, 1, 0]], float)
    y = votes.sum(0)
    n = 3 - y
    totals = [y.sum(), n.sum(), (y * n / 2).sum()]
    assert binary_alpha(totals) == pytest.approx(
        krippendorff.alpha(reliability_data=votes, level_of_measurement="nominal"))
    assert math.isnan(binary_alpha([3, 0, 0]))


def test_undefined_values_and_formatting():
    assert isnan(None) and isnan(float("nan")) and isnan(np.float64("nan"))
    assert not isnan(0.0) and not isnan("x") and not isnan(True)
    assert nan_to_none(float("nan")) is None and nan_to_none(np.float64(0.5)) == 0.5
    assert type(nan_to_none(np.float64(0.5))) is float
    assert fmt(None) == "—" and fmt(0.12345) == "0.123" and fmt(0.1, 2, signed=True) == "+0.10"
    assert fmt_ci([0.1, 0.25]) == "[0.10, 0.25]"
    assert fmt_ci([float("nan"), 1], reason="no interval: 3 groups") == "no interval: 3 groups"
    u = Figure.undefined("no human scores", n_items=0)
    assert not u.defined and math.isnan(float(u)) and u.text() == "— (no human scores)"
    assert u.ci_text() == "no human scores" and u.to_dict()["value"] is None


def test_a_figure_prints_one_way():
    """The one printer: a value with its interval, the reason for a missing interval, a
    missing value, percentages and signs — and the JSON shapes read back unchanged."""
    f = Figure(0.41234, [0.3, 0.55], n_items=48, n_groups=8, n_systems=6)
    assert f.text() == "0.412 [0.300, 0.550]" and f.text(2) == "0.41 [0.30, 0.55]"
    assert f.text(3, ci_digits=2, label="95% CI ") == "0.412 95% CI [0.30, 0.55]"
    assert f.support_text() == "n = 48 items, 8 groups, 6 systems" and not f.weak
    g = Figure(0.5, [float("nan"), 0.7], ci_reason="no interval: 3 groups (fewer than 6)")
    assert g.weak and g.ci is None
    assert g.text(2) == "0.50 (no interval: 3 groups (fewer than 6))"
    assert Figure(0.5).ci_text() == "no interval"
    d = Figure(-0.031, (-0.08, 0.02))
    assert d.text(3, signed=True) == "-0.031 [-0.080, +0.020]"
    assert Figure(0.25, [0.2, 0.31]).text(0, percent=True) == "25% [20%, 31%]"
    back = Figure.from_dict(f.to_dict())
    assert back == f
    # a dict with one reason for both (the older shape) keeps it for the interval
    assert Figure.from_dict({"value": 0.4, "ci": [None, None], "reason": "few"}).ci_text() == "few"
    assert Figure.from_dict({"delta": 0.1, "ci": [0.0, 0.2]}, value_key="delta").value == 0.1


def test_fleiss_from_counts_keeps_the_most_common_number_of_ratings():
    """Units rated 3, 2 and 3 times (and one once): κ over the two 3-rated units, by hand —
    and the same from the labels; between equally common sizes, the first seen wins."""
    from checkeval_core.stats.agreement import fleiss_from_counts, fleiss_from_labels

    labels = [["y", "y", "n"], ["y", "n"], ["n", "n", "n"], ["y"]]
    counts = np.array([[1, 2], [1, 1], [3, 0], [0, 1]])  # no, yes
    k, used = fleiss_from_counts(counts)
    # by hand: P_i = (2·1 + 0)/6 = 1/3 and 1; P̄ = 2/3; p = (4/6, 2/6): P_e = 5/9
    assert used == 2 and k == pytest.approx((2 / 3 - 5 / 9) / (1 - 5 / 9))
    assert fleiss_from_labels(labels) == (k, 2)
    k2, used2 = fleiss_from_counts(np.array([[1, 1], [2, 1], [0, 2], [3, 0]]))
    assert used2 == 2 and k2 == fleiss_from_labels([["n", "y"], ["n", "n", "y"],
                                                   ["y", "y"], ["n", "n", "n"]])[0]
    k0, used0 = fleiss_from_counts(np.zeros((0, 2)))
    assert math.isnan(k0) and used0 == 0


def test_closed_form_intervals_against_the_formula_and_scipy():
    # Fisher's z with the Bonett-Wright standard error, by hand
    rho, n = 0.42, 30
    se = math.sqrt((1 + rho * rho / 2) / (n - 3))
    ci, why = fisher_z_interval(rho, n)
    assert why is None and ci == pytest.approx([math.tanh(math.atanh(rho) - 1.959964 * se),
                                                math.tanh(math.atanh(rho) + 1.959964 * se)])
    assert ci[0] < rho < ci[1]
    assert fisher_z_interval(-1.0, 9) == ([-1.0, -1.0], None)
    assert fisher_z_interval(0.5, 3) == (None, "needs ≥ 4 items for an interval")
    # Student's t: scipy's interval of the mean
    d = [0.1, 0.3, -0.05, 0.2, 0.25]
    ci, why = t_interval(d)
    ref = st.t.interval(0.95, len(d) - 1, loc=np.mean(d), scale=st.sem(d))
    assert why is None and ci == pytest.approx(list(ref))
    assert t_interval([0.2, 0.2, 0.2]) == ([pytest.approx(0.2)] * 2, None)  # no rounding noise
    assert t_interval([0.2], unit="documents") == (None, "needs ≥ 2 documents for an interval")
    assert t_critical(0.05, 10) == pytest.approx(2.228138851986273)


def test_tests_of_significance_against_scipy():
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=15), rng.normal(size=15)
    ref = st.spearmanr(x, y)
    assert spearman_test(x, y) == pytest.approx((ref.statistic, ref.pvalue))
    assert spearman_test(x, x) == pytest.approx((1.0, 0.0))
    assert all(math.isnan(v) for v in spearman_test(x, np.full(15, 2.0)))
    assert all(math.isnan(v) for v in spearman_test([1.0], [2.0]))
    w = st.wilcoxon(x, y)
    assert wilcoxon_test(x, y) == pytest.approx((w.statistic, w.pvalue))
    assert all(math.isnan(v) for v in wilcoxon_test(x, x + 1e-12))  # identical up to rounding
    assert fisher_exact_p([[8, 2], [1, 5]]) == pytest.approx(st.fisher_exact([[8, 2], [1, 5]])[1])
    # Benjamini-Hochberg by hand: sorted p·m/rank, then the running minimum from the top
    assert list(bh_adjust([0.04, 0.001, 0.03, 0.2])) == pytest.approx(
        [0.04 * 4 / 3, 0.004, 0.04 * 4 / 3, 0.2])
