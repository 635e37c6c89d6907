"""Aggregations from Yes/No decisions to scores: small pure functions with documented edges.

* :func:`share_yes` — CheckEval: yes / (yes + no); invalid answers are excluded from the
  denominator (and counted). No valid answer → None.
* :func:`mean_p_yes` — RocketEval's unsupervised score: mean normalised p(Yes); an answer
  without p(Yes) counts as 1.0/0.0 from its verdict; invalid excluded. None if nothing valid.
* :func:`seal_unit_score` / :func:`seal_dimension_score` — SEAL: unit score Σ w·v over
  sub-dimensions, dimension score = mean over units.
* :func:`normalize_weights` — non-negative weights summing to 1; uniform when missing, all
  zero, negative or not finite.
* :func:`kl_alpha` — RocketEval's weight factor α = (ε − KL(P_r ‖ U)) / ε, ε = log K for K
  score levels (the KL of a point mass): 1 when labels spread uniformly, 0 when all equal.
* :func:`supervised_scores` — Extremely Randomized Trees on per-question scores, blended
  with the unsupervised score by α (RocketEval eq. 4), always predicted out of sample.
* :func:`linear_weight_scores` — CheckEval's learned question weights: linear regression
  fitted on other groups' items (k-fold by group), predicted on held-out groups.
* :func:`calibrated_scores` — our calibration for small judges: ridge regression of the human
  score on *every* question's value (all dimensions: a tiny judge's dimensions blur, so the
  other dimensions' questions carry signal too), each value also centred within its group
  (sample-level correlation ranks within a document), leave-one-group-out.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

# scikit-learn is imported inside the learned aggregations (about 0.2 s): this module loads
# with the CLI, and most runs never fit one.


def share_yes(verdicts: Sequence[str]) -> tuple[float | None, int]:
    """``(share of yes among yes/no, n_invalid)``."""
    yes = sum(v == "yes" for v in verdicts)
    no = sum(v == "no" for v in verdicts)
    invalid = len(verdicts) - yes - no
    return (yes / (yes + no) if yes + no else None), invalid


def answer_value(verdict: str, p_yes: float | None) -> float | None:
    """One answer as a number: p(Yes) if known, else 1/0 from the verdict, None if invalid."""
    if verdict == "invalid":
        return None
    if p_yes is not None:
        return float(p_yes)
    return 1.0 if verdict == "yes" else 0.0


def mean_p_yes(answers: Sequence[tuple[str, float | None]]) -> float | None:
    vals = [v for v in (answer_value(a, p) for a, p in answers) if v is not None]
    return float(np.mean(vals)) if vals else None


def normalize_weights(weights: dict[str, Any], names: Sequence[str]) -> dict[str, float]:
    """Weights for ``names`` (missing ones 0), normalised to sum 1; uniform on garbage."""
    vals = []
    for n in names:
        try:
            x = float(weights.get(n, 0.0))
        except (TypeError, ValueError):
            x = float("nan")
        vals.append(x)
    if not names:
        return {}
    if any(not math.isfinite(x) or x < 0 for x in vals) or sum(vals) <= 0:
        return {n: 1.0 / len(names) for n in names}
    s = sum(vals)
    return {n: x / s for n, x in zip(names, vals)}


def seal_unit_score(verdicts: dict[str, str], weights: dict[str, float]) -> float | None:
    """Σ w·v over the sub-dimensions with a valid verdict, renormalised over those."""
    valid = {k: v for k, v in verdicts.items() if v in ("yes", "no") and k in weights}
    total = sum(weights[k] for k in valid)
    if not valid or total <= 0:
        return None
    return sum(weights[k] * (1.0 if v == "yes" else 0.0) for k, v in valid.items()) / total


def seal_unit_score_p(p_yes: dict[str, float | None], weights: dict[str, float]) -> float | None:
    """Σ w·p(Yes) over the sub-dimensions with a probability, renormalised over those — SEAL's
    unit score with RocketEval's probabilities instead of hard verdicts (a small judge that
    answers Yes to everything still ranks units by how sure it is)."""
    valid = {k: v for k, v in p_yes.items() if v is not None and k in weights}
    total = sum(weights[k] for k in valid)
    if not valid or total <= 0:
        return None
    return sum(weights[k] * float(v) for k, v in valid.items()) / total


def seal_dimension_score(unit_scores: Sequence[float | None]) -> float | None:
    vals = [u for u in unit_scores if u is not None]
    return float(np.mean(vals)) if vals else None


def kl_alpha(labels: Sequence[float], levels: Sequence[float]) -> float:
    """α of RocketEval eq. (3) for ``labels`` over the score ``levels`` of the scale."""
    levels = sorted(set(levels))
    k = len(levels)
    if k < 2 or len(labels) == 0:
        return 0.0
    # assign each label to its nearest level
    idx = [int(np.argmin([abs(x - lv) for lv in levels])) for x in labels]
    p = np.bincount(idx, minlength=k) / len(idx)
    u = 1.0 / k
    kl = float(sum(pi * math.log(pi / u) for pi in p if pi > 0))
    eps = math.log(k)
    return max(0.0, min(1.0, (eps - kl) / eps))


def score_levels(values: Sequence[float], max_levels: int = 10) -> list[float]:
    """The scale's levels: the distinct label values, or ``max_levels`` even bins if many."""
    vals = sorted(set(float(v) for v in values))
    if len(vals) <= max_levels:
        return vals
    return list(np.linspace(vals[0], vals[-1], max_levels))


def supervised_scores(features: np.ndarray, labels: np.ndarray, groups: Sequence[Any],
                      unsup: np.ndarray, mode: str = "across", seed: int = 0,
                      levels: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-sample supervised RocketEval scores and the α used for each item.

    ``mode="across"``: for each group, fit on the items of all *other* groups (global
    checklists: the same questions everywhere). ``mode="within"``: for each item, fit on
    the other items of its own group (instance checklists: per-query predictor,
    leave-one-out). An item never contributes to the model that scores it. Items whose
    training set is empty or constant keep the unsupervised score (α = 0).
    """
    from sklearn.ensemble import ExtraTreesRegressor

    X = np.nan_to_num(np.asarray(features, dtype=float), nan=0.5)
    y = np.asarray(labels, dtype=float)
    g = np.asarray(groups, dtype=object)
    levels = list(levels) if levels is not None else score_levels(y[~np.isnan(y)])
    out = np.array(unsup, dtype=float)
    alphas = np.zeros(len(y))
    for i_test in _folds(g, mode):
        train = np.ones(len(y), bool)
        train[i_test] = False
        if mode == "within":
            train &= g == g[i_test[0]]
        train &= ~np.isnan(y)
        if train.sum() < 2 or len(set(y[train])) < 2:
            continue
        model = ExtraTreesRegressor(n_estimators=100, random_state=seed, min_samples_leaf=1)
        model.fit(X[train], y[train])
        pred = model.predict(X[i_test])
        a = kl_alpha(y[train], levels)
        # put the unsupervised score on the label scale before blending (eq. 4 mixes the two)
        lo, hi = min(levels), max(levels)
        base = lo + (hi - lo) * np.asarray(unsup, dtype=float)[i_test]
        out[i_test] = (1 - a) * base + a * pred
        alphas[i_test] = a
    return out, alphas


def _folds(groups: np.ndarray, mode: str) -> list[np.ndarray]:
    if mode == "within":
        return [np.array([i]) for i in range(len(groups))]
    return [np.where(groups == gv)[0] for gv in dict.fromkeys(groups.tolist())]


def linear_weight_scores(features: np.ndarray, labels: np.ndarray, groups: Sequence[Any],
                         n_folds: int = 5) -> np.ndarray:
    """CheckEval's learned question weights, out of sample: k-fold over groups."""
    from sklearn.linear_model import LinearRegression

    X = np.nan_to_num(np.asarray(features, dtype=float), nan=0.5)
    y = np.asarray(labels, dtype=float)
    g = np.asarray(groups, dtype=object)
    uniq = list(dict.fromkeys(g.tolist()))
    out = np.full(len(y), np.nan)
    k = max(2, min(n_folds, len(uniq)))
    for f in range(k):
        test_groups = set(uniq[f::k])
        test = np.array([gv in test_groups for gv in g])
        train = ~test & ~np.isnan(y)
        if train.sum() < 2 or not test.any():
            continue
        out[test] = LinearRegression().fit(X[train], y[train]).predict(X[test])
    return out


def calibrated_scores(features: np.ndarray, labels: np.ndarray, groups: Sequence[Any],
                      alphas: Sequence[float] = (0.1, 1.0, 10.0, 100.0, 1000.0)) -> np.ndarray:
    """Out-of-sample ridge calibration, leave-one-group-out.

    ``features`` are the item's per-question values (NaN = no valid answer: the group's
    column mean, else 0.5). Each column is used twice: as is (between-group level) and minus
    its group mean (within-group contrast; computed from the held-out group's own features,
    never its labels). Standardised, then ``RidgeCV`` picks the penalty on the training
    groups. An item's score never comes from a model that saw its group's labels. Groups
    whose training labels are constant or fewer than 3 keep NaN (no score).
    """
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = np.asarray(features, dtype=float).copy()
    y = np.asarray(labels, dtype=float)
    g = np.asarray(groups, dtype=object)
    out = np.full(len(y), np.nan)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        return out
    centred = np.zeros_like(X)
    for gv in dict.fromkeys(g.tolist()):
        m = g == gv
        block = X[m]
        with warnings.catch_warnings():  # an all-NaN column is expected: it becomes 0.5
            warnings.simplefilter("ignore", RuntimeWarning)
            col = np.nanmean(block, axis=0)
        col = np.where(np.isnan(col), 0.5, col)
        block = np.where(np.isnan(block), col, block)
        X[m] = block
        centred[m] = block - col
    Z = np.hstack([X, centred])
    for test in _folds(g, "across"):
        train = np.ones(len(y), bool)
        train[test] = False
        train &= ~np.isnan(y)
        if train.sum() < 3 or len(set(y[train])) < 2:
            continue
        model = make_pipeline(StandardScaler(), RidgeCV(alphas=list(alphas)))
        out[test] = model.fit(Z[train], y[train]).predict(Z[test])
    return out
