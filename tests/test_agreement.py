"""Agreement statistics against textbook values and their edge cases."""

import math

import numpy as np
import pytest

from checkeval_core.stats.agreement import (
    alpha_binary_ci,
    binary_alpha_ci,
    binary_group_sums,
    cohen_kappa,
    fleiss_from_labels,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
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
