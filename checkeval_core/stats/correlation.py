"""Correlation of metric scores with human scores at three levels, with bootstrap CIs.

Input: a table of rows ``group`` (source document / context), ``system``, ``metric``,
``human`` (one row per item; rows with a missing value are dropped).

* **sample level** — per group, the correlation over its items; a group where either side
  is constant (equal up to rounding, :data:`CONSTANT_RTOL`) is skipped and counted; the
  mean over the remaining groups. This is the number CheckEval reports for SummEval
  (per-document average).
* **dataset level** (turn level for dialogue) — one correlation over all items.
* **system level** — per-system means, then one correlation over systems.

Coefficients: Pearson, Spearman, Kendall tau-b (scipy.stats). A correlation over fewer than
2 points or a constant vector is NaN. Bootstrap CIs resample *groups* with replacement
(:mod:`checkeval_core.stats.bootstrap`: one draw rule, no interval below ``MIN_GROUPS``
groups) and recompute the level's statistic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from checkeval_core.stats.bootstrap import (
    Boot,
    PairedBoot,
    group_bootstrap,
    mean_of_groups,
    paired_group_bootstrap,
)

COEFFICIENTS = ("spearman", "kendall", "pearson")
LEVELS = ("sample_level", "dataset_level", "system_level")
NAN = float("nan")


#: A side whose spread is below this share of its magnitude is constant: means of equal
#: scores summed in another order differ in the last bits (3.1534819…9 vs …8, a spread of
#: 3e-15), and a coefficient over that rounding noise is a number with no meaning.
CONSTANT_RTOL = 1e-12


def is_constant(values: Sequence[float]) -> bool:
    """Every value equal up to rounding (:data:`CONSTANT_RTOL`); True for no value. The one
    test of "a constant side" behind every correlation and every reason it is undefined."""
    v = np.asarray(values, dtype=float)
    if not len(v):
        return True
    return float(np.ptp(v)) <= CONSTANT_RTOL * max(1.0, float(np.max(np.abs(v))))


def corr(x: Sequence[float], y: Sequence[float], method: str) -> float:
    """One correlation; NaN for < 2 points or a constant side (equal up to rounding, see
    :data:`CONSTANT_RTOL`)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) < 2 or is_constant(x) or is_constant(y):
        return NAN
    if method == "pearson":
        r = stats.pearsonr(x, y)[0]
    elif method == "spearman":
        # Pearson of the average ranks: what scipy's spearmanr computes, without its p-value
        # (a third of its time, which the proposal's greedy search spends thousands of times)
        r = np.corrcoef(stats.rankdata(x), stats.rankdata(y))[0, 1]
    elif method == "kendall":
        r = stats.kendalltau(x, y, variant="b")[0]
    else:
        raise ValueError(f"unknown coefficient {method!r}")
    return float(r) if math.isfinite(r) else NAN


def complete_pairs(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of ``x`` and ``y`` where both are numbers (NaN on either side drops the
    pair), as two float arrays."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = ~(np.isnan(x) | np.isnan(y))
    return x[ok], y[ok]


def _clean(df: pd.DataFrame) -> pd.DataFrame:
    return df.dropna(subset=["metric", "human"])


def level_value(df: pd.DataFrame, level: str, method: str) -> tuple[float, int, int]:
    """``(value, n_used, n_skipped)``: n = groups (sample), items (dataset), systems (system)."""
    df = _clean(df)
    if level == "sample_level":
        vals, skipped = [], 0
        # the groups in order of appearance, each group's rows in frame order (as
        # ``groupby(sort=False)`` yields them), split with numpy: a pandas group costs more
        # than its correlation. A group with a constant side is skipped (corr says NaN).
        codes, uniq = pd.factorize(df["group"], sort=False)  # a missing group: -1, left out
        order = np.argsort(codes, kind="stable")
        order = order[codes[order] >= 0]
        bounds = np.searchsorted(codes[order], np.arange(1, len(uniq)))
        x, y = df["metric"].to_numpy(float)[order], df["human"].to_numpy(float)[order]
        for gx, gy in zip(np.split(x, bounds), np.split(y, bounds)) if len(uniq) else ():
            v = corr(gx, gy, method)
            if math.isnan(v):
                skipped += 1
            else:
                vals.append(v)
        return (float(np.mean(vals)) if vals else NAN), len(vals), skipped
    if level == "dataset_level":
        return corr(df["metric"], df["human"], method), len(df), 0
    if level == "system_level":
        m = df.groupby("system", sort=False)[["metric", "human"]].mean()
        return corr(m["metric"], m["human"], method), len(m), 0
    raise ValueError(f"unknown level {level!r}")


def group_correlations(part: pd.DataFrame, groups: list[Any], cols: Sequence[str] | str,
                       coef: str, human: str = "human") -> dict[str, np.ndarray] | np.ndarray:
    """Per group (in ``groups`` order) the correlation of each of ``cols`` with ``human``; NaN
    for a group with < 2 items, a constant side or no rows — exactly :func:`corr` per group.
    Given one column name, returns its array; given a list, ``{col: array}``.

    Spearman and Pearson are computed for all groups at once (Spearman = Pearson of the
    average ranks within the group), so hundreds of documents cost milliseconds; Kendall goes
    group by group."""
    one = isinstance(cols, str)
    names = [cols] if one else list(cols)
    if part.empty:
        out = {c: np.full(len(groups), NAN) for c in names}
    elif coef == "kendall":
        by = {g: p for g, p in part.groupby("group", sort=False)}
        out = {c: np.array([corr(by[g][c], by[g][human], coef) if g in by else NAN
                            for g in groups], dtype=float) for c in names}
    else:
        x = part[[*names, human]].astype(float)
        g = part["group"].to_numpy()  # an array key: a Series key costs a repr per groupby
        if coef == "spearman":
            x = x.groupby(g).rank()
        xc = x - x.groupby(g).transform("mean")
        prods = {}
        for k, c in enumerate(names):
            prods[f"xy{k}"], prods[f"xx{k}"] = xc[c] * xc[human], xc[c] ** 2
        prods["yy"] = xc[human] ** 2
        sums = pd.DataFrame(prods).groupby(g).sum()
        distinct = part.groupby(g)[[*names, human]].nunique()
        out = {}
        for k, c in enumerate(names):
            varies = distinct[[c, human]].min(axis=1) > 1
            with np.errstate(invalid="ignore", divide="ignore"):
                r = sums[f"xy{k}"] / np.sqrt(sums[f"xx{k}"] * sums["yy"])
            r = r.where(varies.reindex(r.index, fill_value=False)).clip(-1.0, 1.0)
            out[c] = r.reindex(groups).to_numpy(float)
    return out[names[0]] if one else out


class PooledLevel:
    """Dataset- or system-level correlation of a resample of groups: the drawn groups' items
    pooled (a group drawn twice counts twice) and the statistic recomputed. Built once per
    frame; call it on one resample row (group positions)."""

    def __init__(self, df: pd.DataFrame, groups: list[Any], level: str, method: str,
                 col: str = "metric", human: str = "human") -> None:
        rows_of = df.groupby("group", sort=False).indices
        x, y = df[col].to_numpy(float), df[human].to_numpy(float)
        empty = np.zeros(0, dtype=int)
        at = [rows_of.get(g, empty) for g in groups]
        self.xs = [x[i] for i in at]
        self.ys = [y[i] for i in at]
        codes, _ = pd.factorize(df["system"])
        self.sys = [codes[i] for i in at]
        self.n_sys = int(codes.max()) + 1 if len(codes) else 0
        self.level, self.method = level, method

    def __call__(self, pick: np.ndarray) -> float:
        x = np.concatenate([self.xs[i] for i in pick])
        y = np.concatenate([self.ys[i] for i in pick])
        if self.level == "system_level":
            c = np.concatenate([self.sys[i] for i in pick])
            cnt = np.bincount(c, minlength=self.n_sys)
            keep = cnt > 0
            x = np.bincount(c, x, self.n_sys)[keep] / cnt[keep]
            y = np.bincount(c, y, self.n_sys)[keep] / cnt[keep]
        return corr(x, y, self.method)


def level_statistic(df: pd.DataFrame, groups: list[Any], level: str, method: str,
                    col: str = "metric", human: str = "human") -> tuple[Any, bool]:
    """The resample statistic of one level over ``groups`` and whether it is vectorised:
    sample level averages the drawn groups' correlations (computed once; undefined ones
    skipped), dataset and system levels pool the drawn groups' items (:class:`PooledLevel`)."""
    if level == "sample_level":
        per = group_correlations(df, groups, col, method, human)
        return mean_of_groups(per), True
    return PooledLevel(df, groups, level, method, col, human), False


def bootstrap(df: pd.DataFrame, level: str, method: str, n_boot: int = 200,
              seed: int = 0) -> Boot:
    """The group bootstrap of one level's correlation (:func:`~checkeval_core.stats.
    bootstrap.group_bootstrap`; groups in order of appearance)."""
    df = _clean(df)
    groups = list(dict.fromkeys(df["group"].tolist()))
    stat, vec = level_statistic(df, groups, level, method)
    return group_bootstrap(len(groups), stat, n_boot, seed, vectorised=vec)


def bootstrap_ci(df: pd.DataFrame, level: str, method: str, n_boot: int = 200,
                 seed: int = 0, alpha: float = 0.05) -> tuple[float, float]:
    """Percentile CI from resampling groups with replacement (NaN, NaN below
    :data:`~checkeval_core.stats.bootstrap.MIN_GROUPS` groups: :func:`bootstrap` says why).

    Sample level: the per-group correlations are computed once and the resample averages
    the drawn groups' values (skipped groups stay skipped). Dataset and system levels pool
    the drawn groups' items (a group drawn twice counts twice) and recompute.
    """
    lo, hi = bootstrap(df, level, method, n_boot, seed).ci(alpha)
    return lo, hi


def paired_bootstrap(fa: pd.DataFrame, fb: pd.DataFrame, level: str, method: str,
                     n_boot: int, seed: int = 0) -> tuple[float, PairedBoot]:
    """``(Δ, paired resamples)``: Δ = the level's correlation of ``fb`` − of ``fa`` on the
    same items; each resample draws the shared groups once for both sides (groups in order of
    appearance in ``fa``)."""
    fa, fb = _clean(fa), _clean(fb)
    point = level_value(fb, level, method)[0] - level_value(fa, level, method)[0]
    groups = list(dict.fromkeys(fa["group"].tolist()))
    sa, vec = level_statistic(fa, groups, level, method)
    sb, _ = level_statistic(fb, groups, level, method)
    return point, paired_group_bootstrap(len(groups), sa, sb, n_boot, seed, vectorised=vec)


def correlations(df: pd.DataFrame, n_boot: int = 200, seed: int = 0,
                 levels: Sequence[str] = LEVELS) -> dict[str, dict[str, Any]]:
    """All levels × coefficients: ``{level: {coef: value, "n": n, "skipped": k,
    "ci": {coef: [lo, hi]}}}``."""
    out: dict[str, dict[str, Any]] = {}
    for level in levels:
        entry: dict[str, Any] = {"ci": {}}
        for m in COEFFICIENTS:
            v, n, skipped = level_value(df, level, m)
            entry[m] = v
            entry["n"] = n
            entry["skipped"] = skipped
            entry["ci"][m] = list(bootstrap_ci(df, level, m, n_boot, seed))
        out[level] = entry
    return out


def average_levels(per_dim: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, float]]:
    """Mean over dimensions of each level's coefficients (NaN dimensions ignored)."""
    out: dict[str, dict[str, float]] = {}
    for level in LEVELS:
        entry = {}
        for m in COEFFICIENTS:
            vals = [d[level][m] for d in per_dim.values() if level in d and
                    not math.isnan(d[level][m])]
            entry[m] = float(np.mean(vals)) if vals else NAN
        entry["n"] = len([d for d in per_dim.values() if level in d])
        out[level] = entry
    return out


def quality_split(df: pd.DataFrame, threshold: float = 3.0) -> dict[str, dict[str, Any]]:
    """CheckEval appendix C.1: items with human ≥ threshold vs < threshold — per subset the
    mean metric score, the number of items and the dataset-level Spearman."""
    df = _clean(df)
    out = {}
    for name, part in (("high", df[df["human"] >= threshold]), ("low", df[df["human"] <
                                                                           threshold])):
        out[name] = {"n": int(len(part)),
                     "mean_metric": float(part["metric"].mean()) if len(part) else NAN,
                     "spearman": corr(part["metric"], part["human"], "spearman")}
    return out
