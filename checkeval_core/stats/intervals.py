"""Closed-form intervals: Fisher's z interval of a correlation and Student's t interval of a
mean (paired differences). The resampled intervals (percentile, group bootstrap) and Wilson's
interval of a share are in :mod:`~checkeval_core.stats.bootstrap`.

Each returns ``(interval, reason)``: ``[lo, hi]`` and None, or None and why there is none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from checkeval_core.stats.correlation import is_constant

#: The 97.5th percentile of the standard normal to six decimals: the length probe's 95 %
#: Fisher-z interval has always used it (``scipy.stats.norm.ppf(0.975)`` = 1.9599640 to 7).
Z_975 = 1.959964


def fisher_z_interval(r: float, n: int, z: float = Z_975,
                      unit: str = "items") -> tuple[list[float] | None, str | None]:
    """95 % interval of a rank correlation ``r`` over ``n`` pairs: ``tanh(atanh(r) ± z·se)``
    with the Bonett–Wright standard error ``sqrt((1 + r²/2) / (n − 3))``. Needs n ≥ 4
    (``unit`` names the pairs in the reason); ``r = ±1`` is its own interval ``[r, r]``."""
    if n <= 3:
        return None, f"needs ≥ 4 {unit} for an interval"
    if abs(r) >= 1:
        return [r, r], None
    se = math.sqrt((1 + r * r / 2) / (n - 3))
    zr = math.atanh(r)
    return [math.tanh(zr - z * se), math.tanh(zr + z * se)], None


def t_critical(alpha: float, df: float) -> float:
    """The two-sided critical value of Student's t: its ``1 − alpha/2`` quantile at ``df``
    degrees of freedom."""
    return float(stats.t.ppf(1 - alpha / 2, df))


def t_interval(values: Sequence[float], alpha: float = 0.05,
               unit: str = "items") -> tuple[list[float] | None, str | None]:
    """Student's t interval of the mean of ``values`` (e.g. paired differences): mean ±
    ``t_critical(alpha, n − 1)`` · sd / √n. Needs n ≥ 2 (``unit`` names the values in the
    reason); values all equal (up to rounding,
    :func:`~checkeval_core.stats.correlation.is_constant`) give ``[mean, mean]``."""
    n = len(values)
    if n < 2:
        return None, f"needs ≥ 2 {unit} for an interval"
    mean = float(np.mean(values))
    if is_constant(values):  # equal up to rounding: sd would be rounding noise
        return [mean, mean], None
    sd = float(np.std(values, ddof=1))
    half = t_critical(alpha, n - 1) * sd / math.sqrt(n)
    return [mean - half, mean + half], None
