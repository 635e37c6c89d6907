"""Tests of significance: paired differences, several comparisons at once, 2 × 2 tables and
a rank correlation's p-value. Pure functions over arrays, like the rest of the floor.

* :func:`wilcoxon_test` — Wilcoxon's signed-rank test of paired values (two-sided);
* :func:`bh_adjust` — Benjamini–Hochberg adjusted p-values over several comparisons;
* :func:`wilcoxon_bh` — both together over named comparisons, with the reason a comparison
  has no test (the Analysis report's method-vs-method significance);
* :func:`fisher_exact_p` — Fisher's exact test of a 2 × 2 table (two-sided);
* :func:`spearman_test` — Spearman's ρ with its two-sided p-value (Student's t approximation),
  undefined under :func:`~checkeval_core.stats.correlation.corr`'s rule (< 2 pairs or a side
  constant up to rounding).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from checkeval_core.stats.correlation import is_constant

NAN = float("nan")


def _untestable(a: np.ndarray, b: np.ndarray) -> bool:
    return len(a) < 2 or bool(np.allclose(a, b))


def wilcoxon_test(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """``(W, p)`` of Wilcoxon's signed-rank test of ``a − b`` (two-sided; zero differences
    dropped, scipy's default); ``(NaN, NaN)`` below 2 pairs or when every pair is equal (up to
    :func:`numpy.allclose`), where there is nothing to test."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if _untestable(a, b):
        return NAN, NAN
    res = stats.wilcoxon(a, b)
    return float(res.statistic), float(res.pvalue)


def bh_adjust(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values, in the order given (no value: an empty array)."""
    ps = np.asarray(p_values, float)
    if not len(ps):
        return ps
    return np.asarray(stats.false_discovery_control(ps, method="bh"), float)


def wilcoxon_bh(pairs: dict[str, tuple[Sequence[float], Sequence[float]]],
                unit: str = "judges run with both methods") -> dict[str, dict[str, Any]]:
    """Per named comparison (paired values, e.g. correlations of the same judges under two
    methods) Wilcoxon's signed-rank test, then Benjamini–Hochberg over the comparisons that
    have one: ``{name: {"statistic", "p", "p_bh", "n", "reason"}}``; a comparison with fewer
    than 2 pairs (``unit`` names them) or identical pairs has NaNs and the reason."""
    names, ps, out = [], [], {}
    for name, (a, b) in pairs.items():
        n = len(a)
        if _untestable(np.asarray(a, float), np.asarray(b, float)):
            why = (f"needs ≥ 2 {unit} (n={n})" if n < 2
                   else "the paired values are identical: nothing to test")
            out[name] = {"statistic": NAN, "p": NAN, "p_bh": NAN, "n": n, "reason": why}
            continue
        w, p = wilcoxon_test(a, b)
        out[name] = {"statistic": w, "p": p, "n": n, "reason": None}
        names.append(name)
        ps.append(p)
    for name, p in zip(names, bh_adjust(ps)):
        out[name]["p_bh"] = float(p)
    return out


def fisher_exact_p(table: Sequence[Sequence[float]]) -> float:
    """The two-sided p-value of Fisher's exact test of a 2 × 2 table of counts
    ``[[a_yes, a_no], [b_yes, b_no]]``."""
    return float(stats.fisher_exact(np.asarray(table, dtype=np.int64))[1])


def spearman_test(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """``(ρ, p)``: Spearman's ρ (Pearson of the average ranks) and its two-sided p-value
    (Student's t with n − 2 degrees of freedom, scipy's ``spearmanr``); ``(NaN, NaN)`` below
    2 pairs or when a side is constant up to rounding
    (:func:`~checkeval_core.stats.correlation.is_constant`)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 2 or is_constant(x) or is_constant(y):
        return NAN, NAN
    res = stats.spearmanr(x, y)
    rho, p = float(res.statistic), float(res.pvalue)
    return (rho, p) if math.isfinite(rho) else (NAN, NAN)
