"""Agreement statistics as small pure functions with documented edge cases.

* :func:`krippendorff_alpha` — rows = coders, columns = units, NaN = missing (``krippendorff``;
  the interval level in closed form, :func:`interval_alpha`).
* :func:`fleiss_kappa` — a units × categories count table (statsmodels).
* :func:`cohen_kappa` — two label sequences (scikit-learn).
* A judge's Yes/No against people's, from confusion counts ``[yy, yn, ny, nn]`` (judge /
  people): :func:`kappa_from_counts`, :func:`agreement_from_counts`, φ (:func:`phi_from_counts`,
  Matthews), the false-positive and false-negative rates (:func:`fpr_from_counts`,
  :func:`fnr_from_counts`) and the κ–φ gap (:func:`kappa_phi_gap`); all of them with
  group-resampled intervals by :func:`confusion_figures`.

Edge cases never raise; they return NaN: no units, fewer than two coders, or no variation at
all (every label identical — chance agreement is 1, so κ and α are undefined). Fleiss' κ
needs the same number of ratings per unit: :func:`fleiss_from_labels` keeps only the units
with the most common number of ratings and says how many it used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import krippendorff
import numpy as np
import pandas as pd

from checkeval_core.stats.bootstrap import group_bootstrap, resample_counts, weighted_sums
from checkeval_core.stats.values import Figure

NAN = float("nan")


def krippendorff_alpha(data: Sequence[Sequence[Any]] | np.ndarray, level: str = "nominal") -> float:
    """Krippendorff's α; ``level`` nominal / ordinal / interval / ratio."""
    arr = np.asarray(data, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] == 0:
        return NAN
    if level == "interval":
        return interval_alpha(interval_stats(arr).sum(axis=0))
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


def interval_stats(arr: np.ndarray) -> np.ndarray:
    """Per pairable unit (column with ≥ 2 values) of a coders × units array: ``[m, Σv, Σv²,
    Σ_{i≠j}(v_i − v_j)² / (m − 1)]``. Summed over any set of units, these are all interval α
    needs (:func:`interval_alpha`), so a bootstrap over groups of units is a weighted sum.

    Why not the ``krippendorff`` package here: it builds a values × values coincidence matrix
    per unit, and continuous scores (a mean p(Yes)) have as many distinct values as units —
    16 TiB for 8,000 units."""
    a = np.asarray(arr, dtype=float)
    ok = ~np.isnan(a)
    m = ok.sum(axis=0)
    keep = m >= 2
    v = np.where(ok, a, 0.0)[:, keep]
    m = m[keep].astype(float)
    s1 = v.sum(axis=0)
    s2 = (v * v).sum(axis=0)
    within = 2 * (m * s2 - s1 * s1) / (m - 1)  # Σ_{i≠j}(v_i − v_j)² = 2(mΣv² − (Σv)²)
    return np.column_stack([m, s1, s2, within]) if len(m) else np.zeros((0, 4))


def interval_alpha(totals: Sequence[float] | np.ndarray) -> float:
    """α (interval) from summed :func:`interval_stats` ``[n, Σv, Σv², Σ within]``:
    α = 1 − D_o / D_e with D_o = Σ within / n and D_e = 2(nΣv² − (Σv)²) / (n(n − 1)).
    NaN without two pairable values or without any variation."""
    n, s1, s2, within = (float(x) for x in totals)
    if n < 2:
        return NAN
    d_e = 2 * (n * s2 - s1 * s1) / (n * (n - 1))
    if d_e <= 1e-12 * max(1.0, abs(s2)):
        return NAN
    return float(1 - (within / n) / d_e)


def fleiss_kappa(table: Sequence[Sequence[float]] | np.ndarray) -> float:
    """Fleiss' κ from a units × categories table of counts (equal raters per unit)."""
    # statsmodels takes about a second to import: only the callers of this function pay it
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
    """Fleiss' κ from each unit's list of labels; returns ``(kappa, n_units_used)``
    (:func:`fleiss_from_counts` of their counts, the categories sorted)."""
    units = [list(u) for u in labels_by_unit if len(u) >= 2]
    cats = sorted({x for u in units for x in u}, key=str)
    return fleiss_from_counts(np.array([[u.count(c) for c in cats] for u in units],
                                       dtype=float).reshape(len(units), len(cats)))


def fleiss_from_counts(counts: np.ndarray) -> tuple[float, int]:
    """Fleiss' κ from a units × categories table of counts whose units may have different
    numbers of ratings: κ needs equal ones, so only the units with the most common number of
    ratings (the first seen among equally common ones) are used, over the categories they
    hold. Returns ``(kappa, n_units_used)``."""
    t = np.asarray(counts, dtype=float)
    m = t.sum(axis=1) if t.ndim == 2 else np.zeros(0)
    t, m = t[m >= 2], m[m >= 2]
    if not len(m):
        return NAN, 0
    sizes, first, n = np.unique(m, return_index=True, return_counts=True)
    keep = m == sizes[np.lexsort((first, -n))[0]]
    table = t[keep][:, t[keep].sum(axis=0) > 0]
    used = int(keep.sum())
    return (NAN, used) if table.shape[1] < 2 else (fleiss_kappa(table), used)


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Cohen's κ of two equally long label sequences; NaN if empty or when either side gave
    one label only: κ is then 0 whatever the other side does (observed = chance agreement),
    a number that says nothing — the same rule as :func:`kappa_from_counts`."""
    from sklearn.metrics import cohen_kappa_score

    if len(a) != len(b) or len(a) == 0:
        return NAN
    if len(set(a)) < 2 or len(set(b)) < 2:
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


def binary_alpha(totals: Sequence[float] | np.ndarray) -> float:
    """Krippendorff α (nominal, Yes/No) from summed ``[n_yes, n_no, Σ n_yes·n_no/(m−1)]`` of
    the pairable units: 1 − (n−1)·o_yn / (n_yes·n_no); NaN without both answers. Summed over
    any set of units (a resample of groups), so a bootstrap is a weighted sum."""
    ny, nn, o = (float(x) for x in totals)
    if ny <= 0 or nn <= 0:
        return NAN
    return 1 - (ny + nn - 1) * o / (ny * nn)


#: Resamples of the groups for the interval of the agreement across judges.
AGREEMENT_BOOT = 500


def alpha_binary_ci(labels: dict[Any, dict[Any, str]], group_of: dict[Any, Any],
                    n_boot: int = AGREEMENT_BOOT, seed: int = 0) -> dict[str, Any]:
    """Percentile interval of Krippendorff's α (nominal, Yes/No) resampling *groups*.

    The (item, question) units of one document are not independent, so the document is what
    is drawn. Binary nominal α only needs, per group, the sums of n_yes, n_no and
    n_yes·n_no/(m−1) over its pairable units (α = 1 − (n−1)·o_yn / (n_yes·n_no)), so a
    resample is a weighted sum — fast enough for every page view.
    ``{"ci": [lo, hi], "reason": why there is none or None}``."""
    yes, m, groups = [], [], []
    for u, by_rater in labels.items():
        vals = list(by_rater.values())
        if len(vals) < 2:
            continue
        yes.append(vals.count("yes"))
        m.append(len(vals))
        groups.append(group_of[u])
    return binary_alpha_ci(binary_group_sums(np.array(yes, int), np.array(m, int), groups),
                           n_boot, seed)


def binary_group_sums(yes: np.ndarray, m: np.ndarray, group_of_unit: list[Any]) -> np.ndarray:
    """Per group, ``[n_yes, n_no, Σ n_yes·n_no/(m−1)]`` over its units (``yes`` Yes answers of
    ``m ≥ 2`` per unit): the sufficient statistics of binary α that :func:`binary_alpha_ci`
    resamples. Groups in order of their first unit; each sum accumulated unit by unit, in unit
    order (so the Analysis view's arrays and a dict of labels give the same bits)."""
    yes, m = np.asarray(yes), np.asarray(m)
    codes, uniq = pd.factorize(pd.Series(list(group_of_unit), dtype=object), sort=False)
    if not len(uniq):
        return np.zeros((0, 3))
    no = m - yes
    w = (yes * no) / (m - 1)
    return np.column_stack([np.bincount(codes, yes.astype(float), len(uniq)),
                            np.bincount(codes, no.astype(float), len(uniq)),
                            np.bincount(codes, w, len(uniq))])


def binary_alpha_ci(sums: np.ndarray, n_boot: int = AGREEMENT_BOOT, seed: int = 0
                    ) -> dict[str, Any]:
    """The group-bootstrap interval of :func:`alpha_binary_ci` from each group's summed
    ``[n_yes, n_no, Σ n_yes·n_no/(m−1)]`` (one row per group): a resample's α is
    :func:`binary_alpha` of its draw-weighted sums."""
    boot = group_bootstrap(len(sums), weighted_sums(sums, binary_alpha), n_boot, seed)
    if boot.reason:
        return {"ci": [math.nan, math.nan], "reason": boot.reason}
    if len(boot.values) < 2:
        return {"ci": [math.nan, math.nan],
                "reason": "no interval: fewer than 2 resamples had both answers"}
    return {"ci": boot.ci(), "reason": None}


# -- a judge's Yes/No against people's: confusion counts [yy, yn, ny, nn] (judge / people) -------
def _cells(c: Sequence[float] | np.ndarray) -> tuple[np.ndarray, ...]:
    a = np.asarray(c, float)
    return a[..., 0], a[..., 1], a[..., 2], a[..., 3]


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), NAN)


def kappa_from_counts(c: Sequence[float] | np.ndarray) -> np.ndarray:
    """Cohen's κ from confusion counts ``[..., (yy, yn, ny, nn)]`` (judge, people); NaN when
    one side gave one answer only (the judge, or people, always Yes or always No): κ is then
    0 whatever the other side does (observed = chance agreement), a number that says nothing
    about agreement. Chance agreement 1 (every decision the same) is a case of it."""
    yy, yn, ny, nn = _cells(c)
    n = yy + yn + ny + nn
    constant = ((yy + yn) == 0) | ((ny + nn) == 0) | ((yy + ny) == 0) | ((yn + nn) == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (yy + nn) / n
        pe = ((yy + yn) * (yy + ny) + (ny + nn) * (yn + nn)) / (n * n)
        k = (po - pe) / (1 - pe)
    return np.where(constant | (n == 0), NAN, k)


def agreement_from_counts(c: Sequence[float] | np.ndarray) -> np.ndarray:
    """Share of decisions where the judge and people agree; NaN without any."""
    yy, yn, ny, nn = _cells(c)
    return _ratio(yy + nn, yy + yn + ny + nn)


def phi_from_counts(c: Sequence[float] | np.ndarray) -> np.ndarray:
    """φ (Matthews correlation) of the judge's and people's Yes/No:
    (yy·nn − yn·ny) / √((yy+yn)(ny+nn)(yy+ny)(yn+nn)). NaN when either side gives one answer
    only (a zero margin): a constant cannot correlate."""
    yy, yn, ny, nn = _cells(c)
    den = (yy + yn) * (ny + nn) * (yy + ny) * (yn + nn)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (yy * nn - yn * ny) / np.sqrt(np.where(den > 0, den, 1)), NAN)


def fpr_from_counts(c: Sequence[float] | np.ndarray) -> np.ndarray:
    """False-positive rate: of the decisions people answered No, the share the judge answered
    Yes (yn / (yn + nn)); NaN when people never said No."""
    _, yn, _, nn = _cells(c)
    return _ratio(yn, yn + nn)


def fnr_from_counts(c: Sequence[float] | np.ndarray) -> np.ndarray:
    """False-negative rate: of the decisions people answered Yes, the share the judge answered
    No (ny / (yy + ny)); NaN when people never said Yes."""
    yy, _, ny, _ = _cells(c)
    return _ratio(ny, yy + ny)


def kappa_phi_gap(c: Sequence[float] | np.ndarray) -> np.ndarray:
    """φ − κ. κ is φ shrunk by the difference between the two sides' Yes rates (with equal
    Yes rates κ = φ), so the gap grows when the judge says Yes more (or less) often than people
    do although it orders the decisions alike: a drift of its positive rate that a prompt
    or threshold change can fix, not a disagreement about which outputs are good. NaN when
    either is."""
    return phi_from_counts(c) - kappa_from_counts(c)


#: The per-question figures of :func:`confusion_figures`, each a function of the counts.
CONFUSION_STATS = {"phi": phi_from_counts, "fpr": fpr_from_counts, "fnr": fnr_from_counts,
                   "kappa_phi_gap": kappa_phi_gap}

_UNDEFINED = {"phi": "φ undefined: the judge or people gave one answer only",
              "fpr": "no false-positive rate: people never answered No",
              "fnr": "no false-negative rate: people never answered Yes",
              "kappa_phi_gap": "κ–φ gap undefined: κ or φ is"}


def confusion_figures(per_group: Sequence[Sequence[float]] | np.ndarray, n_boot: int,
                      seed: int = 0) -> dict[str, Figure]:
    """φ, FPR, FNR and the κ–φ gap of a judge against people from each group's confusion
    counts (groups × ``[yy, yn, ny, nn]``), each a :class:`~checkeval_core.stats.values.Figure`
    (``n_items`` = decisions, ``n_groups``): the value on
    the summed counts, a percentile interval resampling groups (the floor's draw rule, so with
    the same seed the same resamples as agreement and κ), and why a value or interval is
    missing (below :data:`~checkeval_core.stats.bootstrap.MIN_GROUPS` groups there is none)."""
    C = np.asarray(per_group, float).reshape(-1, 4)
    tot = C.sum(0)
    out: dict[str, Figure] = {}
    boots = {k: group_bootstrap(len(C), lambda idx, f=f: f(resample_counts(idx, len(C)) @ C),
                                n_boot, seed) for k, f in CONFUSION_STATS.items()}
    for k, f in CONFUSION_STATS.items():
        value = float(f(tot)) if tot.sum() > 0 else NAN
        b = boots[k]
        why = ("no decision answered by both the judge and people" if tot.sum() <= 0
               else _UNDEFINED[k])
        out[k] = (Figure.undefined(why, n_items=int(tot.sum()), n_groups=len(C))
                  if math.isnan(value) else
                  Figure(value, b.ci(), ci_reason=b.ci_reason, n_items=int(tot.sum()),
                         n_groups=len(C)))
    return out
