"""Agreement statistics as small pure functions with documented edge cases.

* :func:`krippendorff_alpha` — rows = coders, columns = units, NaN = missing (``krippendorff``).
* :func:`fleiss_kappa` — a units × categories count table (statsmodels).
* :func:`cohen_kappa` — two label sequences (scikit-learn).

Edge cases never raise; they return NaN: no units, fewer than two coders, or no variation at
all (every label identical — chance agreement is 1, so κ and α are undefined). Fleiss' κ
needs the same number of ratings per unit: :func:`fleiss_from_labels` keeps only the units
with the most common number of ratings and says how many it used.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

NAN = float("nan")


def krippendorff_alpha(data: Sequence[Sequence[Any]] | np.ndarray, level: str = "nominal") -> float:
    """Krippendorff's α; ``level`` nominal / ordinal / interval / ratio."""
    import krippendorff

    arr = np.asarray(data, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] == 0:
        return NAN
    pairable = (~np.isnan(arr)).sum(axis=0) >= 2
    arr = arr[:, pairable]
    if arr.shape[1] == 0:
        return NAN
    values = arr[~np.isnan(arr)]
    if len(np.unique(values)) < 2:
        return NAN
    try:
        return float(krippendorff.alpha(reliability_data=arr, level_of_measurement=level))
    except (ValueError, ZeroDivisionError):
        return NAN


def fleiss_kappa(table: Sequence[Sequence[float]] | np.ndarray) -> float:
    """Fleiss' κ from a units × categories table of counts (equal raters per unit)."""
    from statsmodels.stats.inter_rater import fleiss_kappa as _fk

    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] == 0 or t.shape[1] < 2:
        return NAN
    n = t.sum(axis=1)
    if n.min() < 2 or not np.all(n == n[0]):
        return NAN
    p = t.sum(axis=0) / t.sum()
    if np.isclose((p ** 2).sum(), 1.0):
        return NAN
    with np.errstate(divide="ignore", invalid="ignore"):
        k = float(_fk(t, method="fleiss"))
    return k if math.isfinite(k) else NAN


def fleiss_from_labels(labels_by_unit: Sequence[Sequence[Any]]) -> tuple[float, int]:
    """Fleiss' κ from each unit's list of labels; returns ``(kappa, n_units_used)``."""
    units = [list(u) for u in labels_by_unit if len(u) >= 2]
    if not units:
        return NAN, 0
    k = Counter(len(u) for u in units).most_common(1)[0][0]
    units = [u for u in units if len(u) == k]
    cats = sorted({x for u in units for x in u}, key=str)
    table = [[u.count(c) for c in cats] for u in units]
    if len(cats) < 2:
        return NAN, len(units)
    return fleiss_kappa(table), len(units)


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Cohen's κ of two equally long label sequences (NaN if empty or no variation)."""
    from sklearn.metrics import cohen_kappa_score

    if len(a) != len(b) or len(a) == 0:
        return NAN
    if len(set(a) | set(b)) < 2:
        return NAN
    with np.errstate(divide="ignore", invalid="ignore"):
        k = float(cohen_kappa_score(list(map(str, a)), list(map(str, b))))
    return k if math.isfinite(k) else NAN


def percent_agreement(labels_by_unit: Sequence[Sequence[Any]]) -> float:
    """Share of units whose labels are all equal (units with ≥ 2 labels)."""
    units = [u for u in labels_by_unit if len(u) >= 2]
    if not units:
        return NAN
    return sum(len(set(u)) == 1 for u in units) / len(units)
