"""A small sample's variance borrowed in part from like samples (moderated variance).

Why: a mean interval from ten 1–5 scores that are mostly 5 is as wide as the sample's spread
says — and a sample that happened to draw no low score says "almost no spread" while its mean
is too high. That is why t intervals of such means cover too little (SummEval fluency: 81 % for
a nominal 95 %, *Calibration* in ``docs/benchmarks.md``). When many like samples are measured at
once — the systems of one run on one dimension — each sample's variance is moderated toward
their pooled variance, as in the moderated t of empirical-Bayes analyses (Smyth 2004):

    s̃² = (d₀ · s₀² + d · s²) / (d₀ + d),   with d + d₀ degrees of freedom,

``s₀²`` the pooled variance ``Σ dᵢ sᵢ² / Σ dᵢ`` of the like samples and ``d₀ = d`` (the pool
weighs as much as the sample's own spread). Smyth's estimate of ``d₀`` from the spread of the
log variances is not used: with scores on a few levels many samples have ``s² = 0`` (it must
drop them) and on SummEval it gives ``d₀ ≈ 1–2`` and worse coverage than the plain t.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Fewest like samples (each with ≥ 2 values) from which a pooled variance is borrowed.
MIN_POOL = 3


def pooled_variance(variances: Sequence[float], dfs: Sequence[int]) -> float | None:
    """``Σ dᵢ sᵢ² / Σ dᵢ`` over samples with ``dᵢ ≥ 1``; None with fewer than :data:`MIN_POOL`
    such samples (nothing to borrow from)."""
    pairs = [(float(v), int(d)) for v, d in zip(variances, dfs) if d >= 1 and v == v]
    if len(pairs) < MIN_POOL:
        return None
    return sum(v * d for v, d in pairs) / sum(d for _, d in pairs)


def moderated_variance(s2: float, df: int, pooled: float | None) -> tuple[float, int]:
    """``(s̃², degrees of freedom)``: the sample's own ``(s², df)`` when ``pooled`` is None,
    else ``((s₀² + s²) / 2, 2 · df)`` — the module's formula with ``d₀ = df``."""
    if pooled is None:
        return float(s2), int(df)
    return (float(pooled) + float(s2)) / 2, 2 * int(df)
