"""The held-out-mean interval of the calibrated estimate borrows spread from the other systems
(``stats/variance.py``): hand-computed values, the fallbacks (too few systems, no system id),
equal labelled scores, and why — on skewed 1–5 scores like SummEval's fluency the plain t
interval covers too little and the moderated one does not."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t

from checkeval_core.analysis.calibrate import calibrated, ppi_mean_unlabelled
from checkeval_core.stats.variance import MIN_POOL, moderated_variance, pooled_variance

Y = np.array([3.0, 4.0, 5.0, 2.0])
F = np.array([3.2, 3.9, 4.4, 2.5])
FU = np.array([3.0, 4.0, 4.5, 3.3, 2.9])


def test_pooled_and_moderated_variance_by_hand():
    assert pooled_variance([1.0, 2.0, 3.0], [1, 2, 3]) == pytest.approx(14 / 6)
    assert pooled_variance([1.0, 2.0, 3.0, 9.0], [1, 2, 3, 0]) == pytest.approx(14 / 6)
    assert MIN_POOL == 3 and pooled_variance([1.0, 2.0], [4, 4]) is None
    assert moderated_variance(0.5, 4, 1.5) == (1.0, 8)
    assert moderated_variance(0.5, 4, None) == (0.5, 4)


def test_unlabelled_mean_with_a_pool_by_hand():
    n, big_n = len(Y), len(FU)
    lam = np.cov(Y, F, ddof=1)[0, 1] / np.var(F, ddof=1)
    est = lam * FU.mean() + np.mean(Y - lam * F)
    k = math.sqrt(1 / n + 1 / big_n)
    got = ppi_mean_unlabelled(Y, F, FU, pooled={"human": 2.0, "residual": 0.4})
    own_r, own_h = np.var(Y - lam * F, ddof=2), np.var(Y, ddof=1)  # λ costs one more
    assert got["var_residual"] == pytest.approx(own_r) and got["var_human"] == pytest.approx(own_h)
    assert (got["df_residual"], got["df"]) == (n - 2, n - 1)
    hw = float(t.ppf(0.975, 2 * (n - 2))) * math.sqrt((0.4 + own_r) / 2) * k
    assert got["ci"] == pytest.approx([est - hw, est + hw]) and got["moderated"]
    hh = float(t.ppf(0.975, 2 * (n - 1))) * math.sqrt((2.0 + own_h) / 2) * k
    assert got["ci_human_only"] == pytest.approx([3.5 - hh, 3.5 + hh])


def test_equal_labelled_scores_borrow_the_pool_or_get_no_interval():
    y = np.array([5.0, 5.0, 5.0])
    alone = ppi_mean_unlabelled(y, F[:3], FU)
    assert math.isnan(alone["ci"][0]) and "no interval" in alone["reason"]
    pooled = ppi_mean_unlabelled(y, F[:3], FU, pooled={"human": 0.3, "residual": 0.3})
    hw = float(t.ppf(0.975, 4)) * math.sqrt(0.15) * math.sqrt(1 / 3 + 1 / 5)
    assert pooled["ci"] == pytest.approx([5 - hw, 5 + hw])
    assert "other systems' (pooled)" in pooled["reason"]


def test_a_judge_that_does_not_narrow_gives_the_humans_mean_alone():
    """A judge unrelated to the people on these items: its fitted weight costs a degree of
    freedom and explains nothing, so the calibrated interval would be wider — the humans'
    mean and interval instead, λ = 0, with the reason."""
    y = np.array([3.0, 4.0, 5.0, 2.0, 4.0, 3.0])
    f = np.array([1.0, -1.0, 0.0, 0.0, 1.0, -1.0])  # Cov(y, f) = 0
    got = ppi_mean_unlabelled(y, f, np.array([0.5, -0.5, 2.0]))
    assert got["lambda"] == 0.0 and got["estimate"] == pytest.approx(y.mean())
    assert got["ci"] == got["ci_human_only"] and "does not narrow" in got["reason"]


def _skewed(n_sys: int, docs: int, seed: int) -> pd.DataFrame:
    """Scores on a 1–5 scale, mostly 5 with rare low ones (SummEval fluency's shape), and a
    judge score that follows them a little."""
    rng = np.random.default_rng(seed)
    recs = []
    for s in range(n_sys):
        p_low = 0.05 + 0.25 * s / n_sys  # systems differ in how often they slip
        for g in range(docs):
            low = rng.random() < p_low
            h = float(rng.choice([1.0, 2.0, 3.0])) if low else float(rng.choice([4.67, 5.0],
                                                                                p=[0.2, 0.8]))
            recs.append({"item_pk": len(recs), "group": g, "system": f"S{s}",
                         "dimension": "fluency", "human": h,
                         "metric": 0.2 * h + rng.normal()})
    return pd.DataFrame(recs)


def _coverage(moderate: bool, draws: int = 40) -> float:
    hit = tot = 0
    for d in range(draws):
        df = _skewed(16, 32, seed=d)
        lab = set(df[df["group"] < 10]["item_pk"])  # 10 labelled documents per system
        if moderate:
            entries = {s: dims["fluency"] for s, dims in calibrated(df, lab).items()}
        else:  # one system at a time: no pool to borrow from
            entries = {s: calibrated(part, lab & set(part["item_pk"]))[s]["fluency"]
                       for s, part in df.groupby("system")}
        for sys_name, e in entries.items():
            lo, hi = e["ci_unlabelled_mean"]
            if math.isnan(lo):
                continue
            truth = df[(df["system"] == sys_name) & (df["group"] >= 10)]["human"].mean()
            hit += lo <= truth <= hi
            tot += 1
    return hit / tot


def test_moderation_restores_coverage_on_skewed_scores():
    plain, moderated = _coverage(False), _coverage(True)
    assert plain < 0.9 <= moderated, (plain, moderated)


def test_too_few_systems_or_no_system_id_keep_the_plain_interval():
    df = _skewed(2, 12, seed=3)
    lab = set(df[df["group"] < 6]["item_pk"])
    out = calibrated(df, lab)
    assert not any(e["unlabelled_mean_moderated"] for dims in out.values()
                   for e in dims.values())
    five = _skewed(5, 12, seed=3)
    lab5 = set(five[five["group"] < 6]["item_pk"])
    one = calibrated(five.assign(system=None), lab5)
    assert list(one) == ["(all items)"]
    assert not one["(all items)"]["fluency"]["unlabelled_mean_moderated"]
    many = calibrated(five, lab5)
    assert all(e["unlabelled_mean_moderated"] for dims in many.values() for e in dims.values())
