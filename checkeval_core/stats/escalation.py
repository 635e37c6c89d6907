"""Selective evaluation with a human-agreement guarantee (Trust or Escalate, Jung et al., ICLR
2025): the pure statistics of an escalating run and the human labels they are fitted on.

A *unit* is one decision the cascade can keep or escalate:

* on a task with human scores or checklist annotations, one judge **answer** (an item ×
  question); its confidence is ``|p(Yes) − 0.5|`` (0 for an answer without p(Yes): a text
  answer or an invalid one has no confidence and is always escalated);
* on a task with human **pairwise votes**, one **pair** of the run's items; the judge's
  decision is the item with the higher mean p(Yes) and its confidence the score margin
  ``|s(a) − s(b)|``.

Human labels of a unit are read by :mod:`checkeval_core.people` (``answer_labels``,
``people_pair_labels``) and come here as values: the people's label of the same question on the
same item (the settled answer, else the majority; a tie gives no label — :func:`majority`)
where there is one, else the experts' score turned into a decision (:func:`median_direction`)
— the item's score on the question's dimension above the median of its group (document) is
"Yes", below is "No", at the median no label (the checklist's questions are phrased so that Yes
is better). On a pairwise task, the majority of the votes on the pair (ties: no label).

Fitting (:func:`fit_threshold`) is the paper's fixed-sequence test: candidate thresholds λ
from the most confident down; at each, the kept dev units (confidence ≥ λ) with ``k``
disagreements out of ``n`` give the binomial p-value ``P(Bin(n, 1 − target) ≤ k)``; the
sequence stops at the first p-value above δ and the last λ that passed is the threshold. Then,
for units exchangeable with the dev units, P(agreement on what the judge keeps ≥ target) ≥ 1 − δ.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import binom

from checkeval_core.stats.bootstrap import group_bootstrap
from checkeval_core.stats.bootstrap import percentile_ci as _percentile_ci

DEFAULT_DELTA = 0.1
NO_THRESHOLD = math.inf  # nothing kept: every unit goes to the second judge


def confidence(p_yes: float | None, verdict: str | None = None,
               fit: dict[str, Any] | None = None) -> float:
    """``|p(Yes) − 0.5|``; 0 when there is no probability (always escalated).

    With a judge's calibration (a :func:`platt_fit` with a slope) and its verdict, the
    confidence is how far the chance that people agree with *that verdict* lies above a coin:
    ``q − 0.5`` for a Yes, ``0.5 − q`` for a No, ``q`` the calibrated p(Yes), and 0 when
    people more likely disagree (the answer is then always escalated). A verdict that follows
    its own p(Yes) gets ``|q − 0.5|``; uncalibrated, the same as before."""
    if p_yes is None or (isinstance(p_yes, float) and math.isnan(p_yes)):
        return 0.0
    if not fit or "slope" not in fit or verdict not in ("yes", "no"):
        return abs(float(p_yes) - 0.5)
    q = float(platt_apply(fit, float(p_yes)))
    return max(0.0, q - 0.5 if verdict == "yes" else 0.5 - q)


#: Fewest labelled dev answers of each label (Yes and No) a judge's calibration is fitted on.
MIN_CALIBRATION_PER_LABEL = 5
_P_CLIP = 1e-4  # p(Yes) of 0 or 1 has no logit: clipped to [1e-4, 1 − 1e-4]


def _logit(p: Any) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=float), _P_CLIP, 1 - _P_CLIP)
    return np.log(q / (1 - q))


def platt_fit(p_yes: Sequence[float], label_yes: Sequence[bool]) -> dict[str, Any]:
    """Platt scaling of one judge's p(Yes) against people's labels on dev answers:
    ``P(label Yes | p) = σ(slope · logit p + intercept)``, the maximum-likelihood logistic
    fit (scikit-learn's LogisticRegression with C = 10⁶: practically no penalty, and finite
    when dev separates the labels perfectly). Two judges' p(Yes) are on different scales (a
    larger model says Yes at 0.9 where a small one says 0.6); mapped through their own fit,
    both read as the chance that people say Yes, so answers of the two can be averaged in
    one item's score. Returns ``{"slope", "intercept", "n", "n_yes"}``, or ``{"reason", "n",
    "n_yes"}`` with fewer than :data:`MIN_CALIBRATION_PER_LABEL` answers of either label."""
    p = np.asarray(p_yes, dtype=float)
    y = np.asarray(label_yes, dtype=bool)
    ok = ~np.isnan(p)
    p, y = p[ok], y[ok]
    n, n_yes = int(len(p)), int(y.sum())
    if min(n_yes, n - n_yes) < MIN_CALIBRATION_PER_LABEL:
        return {"reason": f"needs ≥ {MIN_CALIBRATION_PER_LABEL} labelled dev answers of each "
                          f"label (has {n_yes} Yes, {n - n_yes} No)", "n": n, "n_yes": n_yes}
    from sklearn.linear_model import LogisticRegression

    m = LogisticRegression(C=1e6, tol=1e-10, max_iter=1000).fit(_logit(p).reshape(-1, 1), y)
    return {"slope": float(m.coef_[0, 0]), "intercept": float(m.intercept_[0]), "n": n,
            "n_yes": n_yes}


def platt_apply(fit: dict[str, Any] | None, p_yes: Any) -> np.ndarray:
    """``p_yes`` through a :func:`platt_fit` (unchanged without a fitted slope); NaN stays."""
    p = np.asarray(p_yes, dtype=float)
    if not fit or "slope" not in fit:
        return p
    z = fit["slope"] * _logit(p) + fit["intercept"]
    return np.where(np.isnan(p), np.nan, 1 / (1 + np.exp(-z)))


def binomial_pvalue(k: int, n: int, target: float) -> float:
    """``P(Bin(n, 1 − target) ≤ k)``: the p-value of "the disagreement risk is above
    1 − target" given ``k`` disagreements in ``n`` kept units (1.0 for n = 0)."""
    if n <= 0:
        return 1.0
    return float(binom.cdf(int(k), int(n), 1.0 - float(target)))


def check_target(target: float, where: str = "--target-agreement") -> float:
    if isinstance(target, bool) or not isinstance(target, (int, float)) or \
            not math.isfinite(target) or not 0.5 <= target < 1:
        raise ValueError(f"{where} {target}: give an agreement between 0.5 and 1 "
                         "(exclusive), e.g. 0.8")
    return float(target)


def check_delta(delta: float, where: str = "--delta") -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or \
            not math.isfinite(delta) or not 0 < delta < 1:
        raise ValueError(f"{where} {delta}: give a probability between 0 and 1 (exclusive), "
                         "e.g. 0.1 for a 90 % guarantee")
    return float(delta)


def min_kept(target: float, delta: float) -> int:
    """The fewest kept units that can pass at all: ``⌈log δ / log target⌉`` (zero
    disagreements in n units give the p-value targetⁿ)."""
    return max(1, math.ceil(math.log(delta) / math.log(target) - 1e-12))


@dataclass
class Fit:
    """A fitted threshold and its evidence (``steps``: every tested λ with n, k, p-value)."""

    threshold: float
    target: float
    delta: float
    n_dev: int  # labelled dev units
    n_kept: int  # dev units at or above the threshold
    k_disagree: int
    coverage_dev: float  # share of labelled dev units kept
    steps: list[dict[str, float]]
    reason: str = ""  # why no threshold passed, when none did

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": None if math.isinf(self.threshold) else self.threshold,
                "target": self.target, "delta": self.delta, "n_dev": self.n_dev,
                "n_kept": self.n_kept, "k_disagree": self.k_disagree,
                "coverage_dev": self.coverage_dev, "steps": self.steps, "reason": self.reason}


def fit_threshold(conf: Sequence[float], agree: Sequence[bool], target: float,
                  delta: float = DEFAULT_DELTA) -> Fit:
    """The lowest confidence threshold that the fixed-sequence test accepts (module doc).

    ``conf`` and ``agree`` are the labelled dev units' confidences and whether the judge
    agreed with the people. Candidates are the distinct confidences, tested from the highest
    down; the first rejection ends the sequence (so the family-wise error stays ≤ δ without a
    correction). No accepted λ: the threshold is ``inf`` (the judge keeps nothing)."""
    check_target(target)
    check_delta(delta)
    c = np.asarray(conf, float)
    a = np.asarray(agree, bool)
    if len(c) != len(a):
        raise ValueError("conf and agree differ in length")
    steps: list[dict[str, float]] = []
    best = NO_THRESHOLD
    kept_n = kept_k = 0
    least = min_kept(target, delta)
    for lam in sorted(set(c.tolist()), reverse=True):
        keep = c >= lam
        n, k = int(keep.sum()), int((~a[keep]).sum())
        if n < least:  # cannot pass even without a disagreement: decided by conf alone
            continue
        p = binomial_pvalue(k, n, target)
        steps.append({"threshold": lam, "n": n, "k": k, "pvalue": p})
        if p > delta:
            break
        best, kept_n, kept_k = lam, n, k
    reason = ""
    if math.isinf(best):
        reason = (f"no threshold keeps dev units whose agreement is ≥ {target:g} with "
                  f"probability {1 - delta:g} ({len(c)} labelled dev units): every unit goes "
                  "to the second judge")
    return Fit(best, float(target), float(delta), len(c), kept_n, kept_k,
               kept_n / len(c) if len(c) else 0.0, steps, reason)


def cascade_outcome(conf_a: np.ndarray, agree_a: np.ndarray, threshold: float,
                    conf_b: np.ndarray | None = None, agree_b: np.ndarray | None = None,
                    b_threshold: float | None = None) -> dict[str, Any]:
    """What a cascade at ``threshold`` decides on labelled units: A keeps ``conf_a ≥
    threshold``, B answers the rest (``agree_b`` NaN where B has no answer); with
    ``b_threshold`` B's answers below it are "not decidable". Returns coverage (share kept by
    A), the share decided, agreement on the decided units (NaN when none) and how many units
    lacked B's answer (then the agreement is undefined)."""
    conf_a = np.asarray(conf_a, float)
    n = len(conf_a)
    keep = conf_a >= threshold
    out = {"n": n, "coverage": float(keep.mean()) if n else float("nan"),
           "decided": float("nan"), "agreement": float("nan"), "missing_b": 0}
    if not n:
        return out
    ok = np.asarray(agree_a, float).copy()
    decided = np.ones(n, bool)
    if (~keep).any():
        if agree_b is None:
            out["missing_b"] = int((~keep).sum())
            return out
        b = np.asarray(agree_b, float)
        missing = ~keep & np.isnan(b)
        if missing.any():
            out["missing_b"] = int(missing.sum())
            return out
        ok[~keep] = b[~keep]
        if b_threshold is not None and conf_b is not None:
            decided = keep | (np.asarray(conf_b, float) >= b_threshold)
    out["decided"] = float(decided.mean())
    if decided.any():
        out["agreement"] = float(ok[decided].mean())
    return out


def resample_groups(groups: Sequence[Any], stat: Callable[[np.ndarray], float],
                    n_boot: int = 200, seed: int = 0) -> np.ndarray:
    """``stat(index)`` over ``n_boot`` resamples of whole groups (units of one group share a
    source and are not independent), drawn by the floor's group bootstrap (its draw rule and
    small-sample rule: below the minimum number of groups nothing is drawn). Returns the
    finite resampled values (empty when there is no interval)."""
    g = np.asarray([str(x) for x in groups])
    keys = np.unique(g)
    idx_of = [np.flatnonzero(g == k) for k in keys]
    boot = group_bootstrap(len(keys), lambda pick: stat(np.concatenate([idx_of[i] for i in pick])),
                           n_boot, seed, vectorised=False)
    return boot.values[np.isfinite(boot.values)] if not boot.reason else np.array([])


def percentile_ci(values: np.ndarray, level: float = 0.95) -> list[float] | None:
    """The floor's percentile interval, ``None`` when there is none."""
    ci = _percentile_ci(values, 1 - level)
    return None if any(math.isnan(x) for x in ci) else ci


def curve(conf_a: np.ndarray, agree_a: np.ndarray, agree_b: np.ndarray,
          cost_a: float, cost_b: float, groups: Sequence[Any], thresholds: Sequence[float]
          | None = None, n_boot: int = 200, seed: int = 0) -> list[dict[str, Any]]:
    """Coverage–agreement points on labelled (held-out) units: for each threshold, the share
    A keeps, the cascade's agreement [group-resampled 95 % interval] and the expected judge
    cost per unit ``cost_a + (1 − coverage) · cost_b``. The thresholds default to the
    confidence quantiles (0, 10, …, 100 %) plus ``inf`` (B alone) and 0 (A alone). A point
    whose escalated units lack B's answers has no agreement (``missing_b`` says how many)."""
    conf_a = np.asarray(conf_a, float)
    if thresholds is None:
        qs = np.quantile(conf_a, np.linspace(0, 1, 11)) if len(conf_a) else []
        thresholds = sorted({0.0, *[float(q) for q in qs], NO_THRESHOLD})
    pts = []
    for t in thresholds:
        o = cascade_outcome(conf_a, agree_a, t, agree_b=agree_b)
        ci = None
        if not math.isnan(o["agreement"]):
            ci = percentile_ci(resample_groups(groups, lambda ix, t=t: cascade_outcome(
                conf_a[ix], np.asarray(agree_a)[ix], t,
                agree_b=np.asarray(agree_b)[ix])["agreement"], n_boot, seed))
        pts.append({"threshold": None if math.isinf(t) else float(t),
                    "coverage": o["coverage"], "agreement": o["agreement"], "ci": ci,
                    "missing_b": o["missing_b"],
                    "cost": cost_a + (1 - o["coverage"]) * cost_b if o["n"] else float("nan")})
    return pts


# -- human labels ------------------------------------------------------------------------------
def median_direction(scores: dict[tuple[int, str], float], group_of: dict[int, str]
                     ) -> dict[tuple[int, str], str]:
    """``{(item, dimension): "yes" | "no"}``: above / below the median of the item's group on
    that dimension (at the median: no label)."""
    by: dict[tuple[str, str], list[float]] = {}
    for (pk, dim), v in scores.items():
        by.setdefault((group_of.get(pk, ""), dim), []).append(v)
    med = {k: float(np.median(v)) for k, v in by.items()}
    out = {}
    for (pk, dim), v in scores.items():
        m = med[(group_of.get(pk, ""), dim)]
        if v > m:
            out[(pk, dim)] = "yes"
        elif v < m:
            out[(pk, dim)] = "no"
    return out


def majority(values: Sequence[str]) -> str | None:
    """The more frequent of yes/no (a tie or nothing: None)."""
    y = sum(1 for v in values if v == "yes")
    n = sum(1 for v in values if v == "no")
    return "yes" if y > n else "no" if n > y else None
