"""Reference implementations the statistics floor is checked against (tests only).

:func:`paired_bootstrap` is the slow, obvious paired group bootstrap: it rebuilds each
resample as a frame (a group drawn twice becomes two groups) and recomputes the level's
statistic with :func:`~checkeval_core.stats.correlation.level_value`, drawing groups with the
floor's draw rule, one row at a time."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from checkeval_core.stats.correlation import level_value


def paired_bootstrap(df_a: pd.DataFrame, df_b: pd.DataFrame, level: str = "sample_level",
                     coef: str = "spearman", n_boot: int = 500, seed: int = 0) -> dict[str, Any]:
    """Difference of one dimension's correlation between two runs on the same items (a − b),
    with a group-resampled CI and the share of resamples where the sign flips."""
    groups = sorted(set(df_a["group"]) & set(df_b["group"]))
    diff = level_value(df_a, level, coef)[0] - level_value(df_b, level, coef)[0]
    rng = np.random.default_rng(seed)
    ba, bb = dict(tuple(df_a.groupby("group"))), dict(tuple(df_b.groupby("group")))
    ds = []
    for _ in range(n_boot):
        pick = [groups[i] for i in rng.integers(0, len(groups), len(groups))]
        a = pd.concat([ba[g].assign(group=f"{g}#{k}") for k, g in enumerate(pick)])
        b = pd.concat([bb[g].assign(group=f"{g}#{k}") for k, g in enumerate(pick)])
        d = level_value(a, level, coef)[0] - level_value(b, level, coef)[0]
        if not math.isnan(d):
            ds.append(d)
    if not ds:
        return {"difference": diff, "ci": [math.nan, math.nan], "p": math.nan}
    p = 2 * min(np.mean(np.array(ds) <= 0), np.mean(np.array(ds) >= 0))
    return {"difference": diff, "ci": [float(np.quantile(ds, 0.025)),
                                       float(np.quantile(ds, 0.975))], "p": float(min(1.0, p))}
