"""The group bootstrap: one draw rule, one interval, one small-sample rule, one verdict.

Every interval in the app resamples *groups* (documents, contexts, queries — the unit whose
items share a source and are not independent) with replacement and reads the 2.5 % and
97.5 % quantiles of the recomputed statistic (a percentile interval).

**Draw rule.** One generator ``numpy.random.default_rng(seed)`` makes one call
``integers(0, n_groups, size=(n_boot, n_groups))``: row ``b`` is resample ``b`` and its
columns are the drawn groups' positions, in the order the caller lists its groups. A
statistic that needs weights (how often each group was drawn) counts that same matrix
(:func:`resample_counts`), so two statistics of the same groups, seed and number of
resamples always see the same resamples — the basis of a *paired* interval, and the reason
two views of one figure show one interval.

**Small-sample rule.** Below :data:`MIN_GROUPS` groups no interval is given (the reason
says how many there were), because the percentile interval of a handful of groups is far
narrower than the truth: 3 documents have 10 distinct resamples. Figures without an interval
are drawn hollow and raise no flag, warning or proposal (callers ask :func:`enough_groups`).

**Δ, its smallest detectable change, its verdict.** A difference of two runs on the same
groups is resampled *paired* (:func:`paired_group_bootstrap`: the same rows for both sides,
so what both share cancels). Beside its interval it carries the *minimum detectable effect*
(:func:`mde`): ``(z_{1−α/2} + z_{power}) × SE`` with SE the standard deviation of the paired
resampled differences, α = 0.05 and power 0.8 (≈ 2.80 × SE): the true change a test at this
level would detect four times in five with these groups. :func:`verdict` turns Δ into one
sentence.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as _st

from checkeval_core.stats.values import NAN, Figure, isnan

#: Fewer groups than this give no interval, no Δ verdict and no flag (see the module doc).
MIN_GROUPS = 6
#: Two-sided level of every interval.
ALPHA = 0.05
#: Power at which :func:`mde` is the smallest detectable change.
POWER = 0.8
#: What a group is, for the reasons.
GROUP_WORDS = "groups (documents / contexts / queries)"


def minimum(min_groups: int | None = None) -> int:
    """``min_groups``, or :data:`MIN_GROUPS` read when called (so one setting governs every
    caller)."""
    return MIN_GROUPS if min_groups is None else min_groups


def resample_index(n_groups: int, n_boot: int, seed: int = 0) -> np.ndarray:
    """The draw rule: ``(n_boot, n_groups)`` group positions, row ``b`` = resample ``b``."""
    return np.random.default_rng(seed).integers(0, n_groups, size=(n_boot, n_groups))


def resample_counts(idx: np.ndarray, n_groups: int) -> np.ndarray:
    """How often each group was drawn in each row of :func:`resample_index` (``(n_boot,
    n_groups)``), for statistics that are weighted sums over groups."""
    n_boot = len(idx)
    flat = (idx + (np.arange(n_boot) * n_groups)[:, None]).ravel()
    return np.bincount(flat, minlength=n_boot * n_groups).reshape(n_boot, n_groups)


def percentile_ci(values: Sequence[float] | np.ndarray, alpha: float = ALPHA) -> list[float]:
    """``[lo, hi]``: the ``alpha/2`` and ``1 − alpha/2`` quantiles (numpy's linear rule) of
    the defined values; ``[NaN, NaN]`` with fewer than 2."""
    v = np.asarray([x for x in np.asarray(values, dtype=float).ravel().tolist()
                    if not isnan(x)], dtype=float)
    if len(v) < 2:
        return [NAN, NAN]
    return [float(np.quantile(v, alpha / 2)), float(np.quantile(v, 1 - alpha / 2))]


def too_few(n_groups: int, unit: str = GROUP_WORDS, min_groups: int | None = None) -> str:
    """The reason a figure on ``n_groups`` groups has no interval (and raises no flag)."""
    min_groups = minimum(min_groups)
    return f"no interval: needs ≥ {min_groups} {unit} (n={n_groups})"


def enough_groups(n_groups: int, min_groups: int | None = None) -> bool:
    """Whether a figure on ``n_groups`` groups may carry an interval, a flag or a proposal."""
    return n_groups >= minimum(min_groups)


def interval_reason(n_groups: int, n_boot: int, unit: str = GROUP_WORDS,
                    min_groups: int | None = None) -> str | None:
    """Why no interval can be drawn before any resampling, or None."""
    if n_boot <= 0:
        return "no interval: bootstrap switched off (0 resamples)"
    if not enough_groups(n_groups, min_groups):
        return too_few(n_groups, unit, min_groups)
    return None


@dataclass
class Boot:
    """Resampled values of one statistic (undefined resamples dropped), or why none."""

    values: np.ndarray
    n_groups: int
    n_boot: int
    reason: str | None = None

    def ci(self, alpha: float = ALPHA) -> list[float]:
        return [NAN, NAN] if self.reason else percentile_ci(self.values, alpha)

    @property
    def ci_reason(self) -> str | None:
        if self.reason:
            return self.reason
        if len(self.values) < 2:
            return "no interval: fewer than 2 resamples had a value"
        return None

    @property
    def se(self) -> float:
        """Bootstrap standard error (SD of the resampled values, ddof 1)."""
        if self.reason or len(self.values) < 2:
            return NAN
        return float(np.std(self.values, ddof=1))


def _as_values(out: Any, n_boot: int) -> np.ndarray:
    v = np.asarray(out, dtype=float).reshape(n_boot)
    return v[~np.isnan(v)]


def group_bootstrap(n_groups: int, statistic: Callable[[np.ndarray], Any], n_boot: int,
                    seed: int = 0, vectorised: bool = True, unit: str = GROUP_WORDS,
                    min_groups: int | None = None) -> Boot:
    """Resample ``n_groups`` groups ``n_boot`` times (:func:`resample_index`) and evaluate
    ``statistic``: on the whole index matrix (``vectorised``: returns ``n_boot`` values) or
    on each row (one value). NaN values are dropped. Below ``min_groups`` groups, or with no
    resample, nothing is drawn and :attr:`Boot.reason` says why."""
    why = interval_reason(n_groups, n_boot, unit, min_groups)
    if why:
        return Boot(np.zeros(0), n_groups, n_boot, why)
    idx = resample_index(n_groups, n_boot, seed)
    out = statistic(idx) if vectorised else [statistic(row) for row in idx]
    return Boot(_as_values(out, n_boot), n_groups, n_boot)


@dataclass
class PairedBoot:
    """Paired resampled differences ``b − a`` (rows where both sides are defined)."""

    a: np.ndarray
    b: np.ndarray
    n_groups: int
    n_boot: int
    reason: str | None = None

    @property
    def deltas(self) -> np.ndarray:
        ok = ~(np.isnan(self.a) | np.isnan(self.b))
        return self.b[ok] - self.a[ok]

    def ci(self, alpha: float = ALPHA) -> list[float]:
        return [NAN, NAN] if self.reason else percentile_ci(self.deltas, alpha)

    @property
    def ci_reason(self) -> str | None:
        if self.reason:
            return self.reason
        if len(self.deltas) < 2:
            return "no interval: fewer than 2 resamples had a value for both runs"
        return None

    @property
    def se(self) -> float:
        d = self.deltas
        return NAN if self.reason or len(d) < 2 else float(np.std(d, ddof=1))

    def mde(self, alpha: float = ALPHA, power: float = POWER) -> float:
        return mde(self.se, alpha, power)


def paired_group_bootstraps(n_groups: int,
                            pairs: Sequence[tuple[Callable[[np.ndarray], Any],
                                                  Callable[[np.ndarray], Any]]],
                            n_boot: int, seed: int = 0, vectorised: bool = True,
                            unit: str = GROUP_WORDS,
                            min_groups: int | None = None) -> list[PairedBoot]:
    """Several paired statistics (``(stat_a, stat_b)`` each) on one draw of the shared
    groups (:func:`resample_index`): every side of every pair sees the same resamples."""
    why = interval_reason(n_groups, n_boot, unit, min_groups)
    if why:
        return [PairedBoot(np.zeros(0), np.zeros(0), n_groups, n_boot, why) for _ in pairs]
    idx = resample_index(n_groups, n_boot, seed)

    def run(f: Callable[[np.ndarray], Any]) -> np.ndarray:
        out = f(idx) if vectorised else [f(row) for row in idx]
        return np.asarray(out, dtype=float).reshape(n_boot)

    return [PairedBoot(run(fa), run(fb), n_groups, n_boot) for fa, fb in pairs]


def paired_group_bootstrap(n_groups: int, stat_a: Callable[[np.ndarray], Any],
                           stat_b: Callable[[np.ndarray], Any], n_boot: int, seed: int = 0,
                           vectorised: bool = True, unit: str = GROUP_WORDS,
                           min_groups: int | None = None) -> PairedBoot:
    """Both sides' statistic on the *same* resamples of the shared groups (one draw,
    :func:`resample_index`); the interval is of ``b − a`` over resamples where both are
    defined."""
    return paired_group_bootstraps(n_groups, [(stat_a, stat_b)], n_boot, seed, vectorised,
                                   unit, min_groups)[0]


def mean_of_paired(boots: Sequence[PairedBoot]) -> PairedBoot:
    """Per resample, the mean over several paired statistics drawn together (e.g. over
    dimensions), each side's undefined values skipped."""
    first = boots[0]
    if first.reason:
        return PairedBoot(np.zeros(0), np.zeros(0), first.n_groups, first.n_boot, first.reason)
    return PairedBoot(nanmean_rows(np.stack([b.a for b in boots]), 0),
                      nanmean_rows(np.stack([b.b for b in boots]), 0),
                      first.n_groups, first.n_boot)


# -- common statistics of a resample --------------------------------------------------------
def nanmean_rows(a: np.ndarray, axis: int = 1) -> np.ndarray:
    """Mean ignoring NaN; an all-NaN row is NaN (no warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        return np.nanmean(a, axis=axis)


def mean_of_groups(per_group: Sequence[float] | np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Vectorised statistic: the mean of the drawn groups' values, groups whose value is
    undefined skipped (the sample-level correlation: a mean of per-document values)."""
    per = np.asarray(per_group, dtype=float)
    return lambda idx: nanmean_rows(per[idx], 1)


def ratio_of_sums(num: Sequence[float] | np.ndarray, den: Sequence[float] | np.ndarray
                  ) -> Callable[[np.ndarray], np.ndarray]:
    """Vectorised statistic: Σ num / Σ den over the drawn groups (a share of hits whose
    groups hold different numbers of decisions)."""
    n, d = np.asarray(num, dtype=float), np.asarray(den, dtype=float)

    def f(idx: np.ndarray) -> np.ndarray:
        s, c = n[idx].sum(1), d[idx].sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(c > 0, s / np.where(c > 0, c, 1), NAN)
    return f


def weighted_sums(sums: np.ndarray, finish: Callable[[np.ndarray], float]
                  ) -> Callable[[np.ndarray], np.ndarray]:
    """Vectorised statistic for sufficient statistics: each resample's draw counts times the
    groups' summed rows (``sums``: groups × k), then ``finish`` on the k totals."""
    s = np.asarray(sums, dtype=float)

    def f(idx: np.ndarray) -> np.ndarray:
        totals = resample_counts(idx, len(s)) @ s
        return np.array([finish(t) for t in totals], dtype=float)
    return f


def share_ci(hits: Sequence[float] | np.ndarray, counts: Sequence[float] | np.ndarray,
             n_boot: int, seed: int = 0, unit: str = GROUP_WORDS,
             min_groups: int | None = None) -> Figure:
    """Share of hits with a group-resampled percentile interval (a group's decisions stay
    together). ``hits``/``counts``: per group. A :class:`~checkeval_core.stats.values.Figure`
    (``n_items`` = the decisions, ``n_groups``); no value without any decision."""
    h, c = np.asarray(hits, dtype=float), np.asarray(counts, dtype=float)
    if c.sum() <= 0:
        return Figure.undefined("no decision", n_items=0, n_groups=0)
    boot = group_bootstrap(len(c), ratio_of_sums(h, c), n_boot, seed, unit=unit,
                           min_groups=min_groups)
    return Figure(float(h.sum() / c.sum()), boot.ci(), ci_reason=boot.ci_reason,
                  n_items=int(c.sum()), n_groups=int(len(c)))


def wilson_ci(k: int, n: int, alpha: float = ALPHA) -> list[float] | None:
    """Wilson score interval of a binomial share ``k / n`` (statsmodels); None for n = 0."""
    if n == 0:
        return None
    # statsmodels is slow to import and this module loads with the CLI: paid on first use
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=alpha, method="wilson")
    return [float(lo), float(hi)]


# -- Δ: smallest detectable change and verdict ----------------------------------------------
def mde(se: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """Minimum detectable effect: ``(z_{1−α/2} + z_{power}) × se`` (≈ 2.80 × se at the
    defaults); NaN when ``se`` is."""
    if isnan(se):
        return NAN
    return float((_st.norm.ppf(1 - alpha / 2) + _st.norm.ppf(power)) * se)


def verdict(delta: float, ci: Sequence[float], mde_value: float, n_groups: int,
            where: str = "held-out", ci_reason: str | None = None,
            min_groups: int | None = None) -> str:
    """One sentence for a Δ = B − A of agreement (higher is better) on ``where``:
    ``better on held-out`` / ``worse on held-out`` when the paired interval excludes 0,
    ``no detectable change (could have detected ≥ x)`` when it covers 0 (``no change`` when
    every resample gives Δ = 0: the two runs agree on every group), ``too few groups
    (n = k < 8): no verdict`` below the minimum, else ``no verdict: <why>``."""
    min_groups = minimum(min_groups)
    if n_groups < min_groups:
        return f"too few groups (n = {n_groups} < {min_groups}): no verdict"
    if isnan(delta):
        return "no verdict: Δ is undefined"
    if not ci or isnan(ci[0]) or isnan(ci[1]):
        why = (ci_reason or "no interval").removeprefix("no interval: ")
        return f"no verdict: {why}"
    if ci[0] == ci[1] == 0 and delta == 0:
        return "no change (Δ = 0 on every resample)"
    if ci[0] > 0:
        return f"better on {where}"
    if ci[1] < 0:
        return f"worse on {where}"
    if isnan(mde_value):
        return "no detectable change"
    return f"no detectable change (could have detected ≥ {mde_value:.3f})"


#: How a verdict names the part of a split it was read on.
PART_WORDS = {"heldout": "held-out", "dev": "dev", "all": "all groups"}


def delta_fields(delta: float, boot: PairedBoot, where: str = "held-out") -> dict[str, Any]:
    """``{"delta", "ci", "ci_reason", "mde", "verdict"}`` of one paired Δ."""
    ci = boot.ci()
    m = boot.mde() if not math.isnan(ci[0]) else NAN
    return {"delta": delta, "ci": ci, "ci_reason": boot.ci_reason, "mde": m,
            "verdict": verdict(delta, ci, m, boot.n_groups, where, boot.ci_reason)}
