"""Parsing grouped answers, Likert scores, SEAL weights; aggregation edge cases."""

import math

import numpy as np
import pytest

from checkeval_core.runs import score_math as A
from checkeval_core.runs.methods import (
    likert_from_logprobs,
    parse_grouped,
    parse_likert,
    parse_weights,
    unit_kind,
)


def test_grouped_missing_extra_misordered():
    assert parse_grouped("Q1: Yes\nQ2: No\nQ3: yes", 3) == ["yes", "no", "yes"]
    assert parse_grouped("Q2: No\nQ1: Yes", 3) == ["yes", "no", "invalid"]  # misordered, missing
    assert parse_grouped("Q1: Yes\nQ2: No\nQ3: Yes\nQ4: No", 2) == ["yes", "no"]  # extra ignored
    assert parse_grouped("1. **Yes**\n2) no, because...", 2) == ["yes", "no"]
    assert parse_grouped("Q1: maybe\nQ2: Yes", 2) == ["invalid", "yes"]
    assert parse_grouped("Yes\nNo", 2) == ["yes", "no"]  # unnumbered, exactly n verdicts
    assert parse_grouped("Yes", 2) == ["invalid", "invalid"]
    assert parse_grouped("", 1) == ["invalid"]


def test_likert():
    assert parse_likert("Score: 4") == 4.0
    assert parse_likert("4.5") is None or parse_likert("4.5") == 4.0
    assert parse_likert("no idea") is None
    assert likert_from_logprobs({"4": math.log(0.5), "5": math.log(0.5), "a": -1}) == 4.5
    assert likert_from_logprobs({"x": -0.1}) is None


def test_weights_and_units():
    assert parse_weights('{"weights": {"a": 2, "b": 1}}') == {"a": 2, "b": 1}
    assert parse_weights("garbage") == {}
    assert A.normalize_weights({"a": 2, "b": 2}, ["a", "b"]) == {"a": 0.5, "b": 0.5}
    assert A.normalize_weights({"a": -1, "b": 3}, ["a", "b"]) == {"a": 0.5, "b": 0.5}
    assert A.normalize_weights({"a": "x"}, ["a", "b"]) == {"a": 0.5, "b": 0.5}
    assert A.normalize_weights({"a": 3}, ["a", "b"]) == {"a": 1.0, "b": 0.0}
    assert unit_kind("fluency", "summarization") == "sentence"
    assert unit_kind("coherence", "summarization") == "pair"
    assert unit_kind("consistency", "summarization") == "fact"
    assert unit_kind("coherence", "dialogue") == "whole"


def test_aggregation_edges():
    assert A.share_yes(["yes", "no", "invalid"]) == (0.5, 1)
    assert A.share_yes(["invalid"]) == (None, 1)
    assert A.mean_p_yes([("yes", 0.8), ("no", None), ("invalid", None)]) == pytest.approx(0.4)
    assert A.mean_p_yes([]) is None
    assert A.seal_unit_score({"a": "yes", "b": "invalid"}, {"a": 0.25, "b": 0.75}) == 1.0
    assert A.seal_dimension_score([None, 0.5, 1.0]) == 0.75
    # probability-weighted unit: 0.25·0.8 + 0.75·0.4 = 0.5; a missing p is left out and the
    # weights renormalised; nothing left → None
    assert A.seal_unit_score_p({"a": 0.8, "b": 0.4}, {"a": 0.25, "b": 0.75}) == \
        pytest.approx(0.5)
    assert A.seal_unit_score_p({"a": 0.8, "b": None}, {"a": 0.25, "b": 0.75}) == \
        pytest.approx(0.8)
    assert A.seal_unit_score_p({"b": None}, {"a": 1.0}) is None


def test_kl_alpha():
    assert A.kl_alpha([1, 2, 3, 4, 5], [1, 2, 3, 4, 5]) == pytest.approx(1.0)
    assert A.kl_alpha([3, 3, 3], [1, 2, 3, 4, 5]) == pytest.approx(0.0)
    a = A.kl_alpha([1, 1, 5, 5], [1, 2, 3, 4, 5])  # two levels of five
    assert a == pytest.approx((math.log(5) - math.log(5 / 2)) / math.log(5))


def test_supervised_never_uses_the_test_group():
    rng = np.random.default_rng(0)
    X = rng.random((12, 3))
    y = np.array([1, 2, 3, 4, 5, 1] * 2, dtype=float)
    groups = ["a"] * 4 + ["b"] * 4 + ["c"] * 4
    unsup = X.mean(axis=1)
    base, _ = A.supervised_scores(X, y, groups, unsup)
    # changing group a's labels must not change group a's own predictions
    y2 = y.copy()
    y2[:4] = [5, 5, 1, 1]
    again, _ = A.supervised_scores(X, y2, groups, unsup)
    assert np.allclose(base[:4], again[:4])
    assert not np.allclose(base[4:], again[4:])
    lin = A.linear_weight_scores(X, y, groups, n_folds=3)
    lin2 = A.linear_weight_scores(X, y2, groups, n_folds=3)
    assert np.allclose(lin[:4], lin2[:4])
