"""Correlation of metric scores with human scores at three levels, with bootstrap CIs.

Input: a table of rows ``group`` (source document / context), ``system``, ``metric``,
``human`` (one row per item; rows with a missing value are dropped).

* **sample level** — per group, the correlation over its items; a group where either side
  is constant (``len(set(x)) <= 1``) is skipped and counted; the mean over the remaining
  groups. This is the number CheckEval reports for SummEval (per-document average).
* **dataset level** (turn level for dialogue) — one correlation over all items.
* **system level** — per-system means, then one correlation over systems.

Coefficients: Pearson, Spearman, Kendall tau-b (scipy.stats). A correlation over fewer than
2 points or a constant vector is NaN. Bootstrap CIs resample *groups* with replacement
(seeded; percentile interval) and recompute the level's statistic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

COEFFICIENTS = ("spearman", "kendall", "pearson")
LEVELS = ("sample_level", "dataset_level", "system_level")
NAN = float("nan")


def corr(x: Sequence[float], y: Sequence[float], method: str) -> float:
    """One correlation; NaN for < 2 points or a constant side."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) < 2 or len(set(x.tolist())) <= 1 or len(set(y.tolist())) <= 1:
        return NAN
    if method == "pearson":
        r = stats.pearsonr(x, y)[0]
    elif method == "spearman":
        r = stats.spearmanr(x, y)[0]
    elif method == "kendall":
        r = stats.kendalltau(x, y, variant="b")[0]
    else:
        raise ValueError(f"unknown coefficient {method!r}")
    return float(r) if math.isfinite(r) else NAN


def _clean(df: pd.DataFrame) -> pd.DataFrame:
    return df.dropna(subset=["metric", "human"])


def level_value(df: pd.DataFrame, level: str, method: str) -> tuple[float, int, int]:
    """``(value, n_used, n_skipped)``: n = groups (sample), items (dataset), systems (system)."""
    df = _clean(df)
    if level == "sample_level":
        vals, skipped = [], 0
        for _, g in df.groupby("group", sort=False):
            if g["metric"].nunique() <= 1 or g["human"].nunique() <= 1:
                skipped += 1
                continue
            v = corr(g["metric"], g["human"], method)
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


def bootstrap_ci(df: pd.DataFrame, level: str, method: str, n_boot: int = 200,
                 seed: int = 0, alpha: float = 0.05) -> tuple[float, float]:
    """Percentile CI from resampling groups with replacement (NaN, NaN if < 2 groups).

    Sample level: the per-group correlations are computed once and the resample averages
    the drawn groups' values (skipped groups stay skipped). Dataset and system levels pool
    the drawn groups' items (a group drawn twice counts twice) and recompute.
    """
    df = _clean(df)
    groups = list(dict.fromkeys(df["group"].tolist()))
    if len(groups) < 2 or n_boot <= 0:
        return NAN, NAN
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(groups), (n_boot, len(groups)))
    vals: list[float] = []
    # one pass over the frame (not a comparison of every row per group): the same parts
    rows_of = df.groupby("group", sort=False).indices
    if level == "sample_level":
        per = []
        for g in groups:
            part = df.iloc[rows_of[g]]
            per.append(corr(part["metric"], part["human"], method))
        per_a = np.array(per)
        for pick in picks:
            v = per_a[pick]
            v = v[~np.isnan(v)]
            if len(v):
                vals.append(float(v.mean()))
    else:
        metric, human = df["metric"].to_numpy(float), df["human"].to_numpy(float)
        xs = [metric[rows_of[g]] for g in groups]
        ys = [human[rows_of[g]] for g in groups]
        codes, _ = pd.factorize(df["system"])
        sys_by = [codes[rows_of[g]] for g in groups]
        n_sys = int(codes.max()) + 1 if len(codes) else 0
        for pick in picks:
            x = np.concatenate([xs[i] for i in pick])
            y = np.concatenate([ys[i] for i in pick])
            if level == "system_level":
                c = np.concatenate([sys_by[i] for i in pick])
                cnt = np.bincount(c, minlength=n_sys)
                keep = cnt > 0
                x = (np.bincount(c, x, n_sys)[keep] / cnt[keep])
                y = (np.bincount(c, y, n_sys)[keep] / cnt[keep])
            v = corr(x, y, method)
            if not math.isnan(v):
                vals.append(v)
    if len(vals) < 2:
        return NAN, NAN
    return float(np.quantile(vals, alpha / 2)), float(np.quantile(vals, 1 - alpha / 2))


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
