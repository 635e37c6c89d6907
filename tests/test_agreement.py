"""Agreement statistics against textbook values and their edge cases."""

import math

import numpy as np
import pytest

from checkeval_core.stats.agreement import (
    alpha_binary_ci,
    binary_alpha_ci,
    binary_group_sums,
    cohen_kappa,
    confusion_figures,
    fleiss_from_labels,
    fleiss_kappa,
    fnr_from_counts,
    fpr_from_counts,
    kappa_from_counts,
    kappa_phi_gap,
    krippendorff_alpha,
    percent_agreement,
    phi_from_counts,
)

# Fleiss (1971) example as in Wikipedia: 10 subjects, 14 raters, 5 categories -> kappa 0.210
FLEISS_TABLE = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
                [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
                [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
# Krippendorff's reliability data (4 coders x 12 units, missing values): nominal alpha 0.743
N = np.nan
KRIPP = [[1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
         [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N]]


def test_fleiss_textbook():
    assert fleiss_kappa(FLEISS_TABLE) == pytest.approx(0.2099, abs=1e-4)


def test_krippendorff_textbook():
    assert krippendorff_alpha(KRIPP, "nominal") == pytest.approx(0.743, abs=1e-3)


def test_cohen_hand_computed():
    a = ["y", "y", "n", "n", "y", "n"]
    b = ["y", "n", "n", "n", "y", "y"]
    # po = 4/6, pe = 0.5*0.5 + 0.5*0.5 = 0.5 -> kappa = (2/3 - 1/2) / (1/2) = 1/3
    assert cohen_kappa(a, b) == pytest.approx(1 / 3)


def test_edge_cases_return_nan():
    assert math.isnan(fleiss_kappa([[3, 0], [3, 0]]))  # everyone always says the same
    assert math.isnan(fleiss_kappa([]))
    assert math.isnan(krippendorff_alpha([[1, 1, 1]]))  # one coder
    assert math.isnan(krippendorff_alpha([[1, 1], [1, 1]]))  # no variation
    assert math.isnan(cohen_kappa([], []))
    assert math.isnan(cohen_kappa(["y", "y"], ["y", "y"]))
    assert math.isnan(percent_agreement([["y"]]))


def test_fleiss_from_labels_uses_modal_rater_count():
    k, used = fleiss_from_labels([["y", "y"], ["y", "n"], ["n", "n"], ["y", "n", "n"], ["y"]])
    assert used == 3
    assert k == pytest.approx(fleiss_kappa([[2, 0], [1, 1], [0, 2]]))
    assert percent_agreement([["y", "y"], ["y", "n"]]) == 0.5


def test_binary_group_sums_by_hand_and_from_labels():
    # group g1: units (2 yes of 3), (0 of 2); group g2: (1 of 2); unit with one answer dropped
    sums = binary_group_sums(np.array([2, 0, 1]), np.array([3, 2, 2]), ["g1", "g1", "g2"])
    assert sums.tolist() == [[2.0, 3.0, 2 * 1 / 2], [1.0, 1.0, 1 * 1 / 1]]
    labels = {"u1": {"a": "yes", "b": "yes", "c": "no"}, "u2": {"a": "no", "b": "no"},
              "u3": {"a": "yes", "b": "no"}, "u4": {"a": "yes"}}
    group = {"u1": "g1", "u2": "g1", "u3": "g2", "u4": "g2"}
    many = {f"{u}-{k}": v for k in range(4) for u, v in labels.items()}
    gmany = {f"{u}-{k}": f"{group[u]}-{k}" for k in range(4) for u in labels}
    assert alpha_binary_ci(many, gmany) == binary_alpha_ci(binary_group_sums(
        np.array([2, 0, 1] * 4), np.array([3, 2, 2] * 4),
        [f"{g}-{k}" for k in range(4) for g in ("g1", "g1", "g2")]))
    assert binary_group_sums(np.array([], int), np.array([], int), []).shape == (0, 3)


def test_phi_fpr_fnr_and_the_gap_by_hand_and_against_sklearn():
    from sklearn.metrics import cohen_kappa_score, matthews_corrcoef

    # judge/people yy 20, yn 5, ny 10, nn 15: φ = (300 − 50) / √(25·25·30·20) = 250 / 612.37
    c = [20, 5, 10, 15]
    judge = ["yes"] * 25 + ["no"] * 25
    people = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert float(phi_from_counts(c)) == pytest.approx(250 / math.sqrt(25 * 25 * 30 * 20))
    assert float(phi_from_counts(c)) == pytest.approx(matthews_corrcoef(judge, people))
    assert float(fpr_from_counts(c)) == pytest.approx(5 / 20)   # people No, judge Yes
    assert float(fnr_from_counts(c)) == pytest.approx(10 / 30)  # people Yes, judge No
    assert float(kappa_phi_gap(c)) == pytest.approx(
        matthews_corrcoef(judge, people) - cohen_kappa_score(judge, people))
    # equal Yes rates: κ = φ, no gap; a judge saying Yes far more often: a positive gap
    assert float(kappa_phi_gap([20, 5, 5, 20])) == pytest.approx(0.0)
    assert float(kappa_phi_gap([20, 25, 0, 5])) > 0.1
    assert float(kappa_from_counts([20, 25, 0, 5])) < float(phi_from_counts([20, 25, 0, 5]))
    # one side constant: φ undefined; people never No: no FPR; never Yes: no FNR
    assert math.isnan(float(phi_from_counts([10, 5, 0, 0])))
    assert math.isnan(float(fpr_from_counts([10, 0, 5, 0])))
    assert math.isnan(float(fnr_from_counts([0, 3, 0, 7])))
    # vectorised over resamples
    assert phi_from_counts(np.array([c, [20, 5, 5, 20]])).shape == (2,)


def test_confusion_figures_intervals_and_reasons():
    per_group = np.array([[2, 1, 1, 1], [2, 0, 1, 2], [1, 1, 0, 3], [3, 0, 1, 1], [2, 1, 2, 0],
                          [1, 0, 1, 3], [3, 1, 0, 1], [2, 0, 2, 1]], float)
    f = confusion_figures(per_group, n_boot=300, seed=1)
    tot = per_group.sum(0)
    assert set(f) == {"phi", "fpr", "fnr", "kappa_phi_gap"}
    for k, fn in (("phi", phi_from_counts), ("fpr", fpr_from_counts),
                  ("fnr", fnr_from_counts), ("kappa_phi_gap", kappa_phi_gap)):
        assert f[k].value == pytest.approx(float(fn(tot)))
        lo, hi = f[k].ci
        assert lo <= f[k].value <= hi and lo < hi and f[k].ci_reason is None
        assert (f[k].n_items, f[k].n_groups) == (int(tot.sum()), 8)
    few = confusion_figures(per_group[:3], n_boot=300)
    assert few["phi"].ci is None and "needs ≥ 6 groups" in few["phi"].ci_reason
    assert few["phi"].defined and "needs ≥ 6 groups" in few["phi"].text()
    flat = confusion_figures(np.array([[3, 0, 0, 0]] * 8), n_boot=50)
    assert not flat["phi"].defined and "one answer only" in flat["phi"].reason
    assert "never answered No" in flat["fpr"].reason
    empty = confusion_figures(np.zeros((0, 4)), n_boot=50)
    assert "no decision" in empty["phi"].reason
