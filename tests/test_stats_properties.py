"""Every statistic of the floor (``checkeval_core/stats/``) in one table with the properties it
declares, checked for all of them at once, in the manner of scikit-learn's
``metrics/tests/test_common.py`` (``SYMMETRIC_METRICS``, ``METRIC_UNDEFINED_BINARY`` …).

A row (:class:`Row`) calls one statistic on two paired samples ``x``, ``y`` (a judge's and
people's values, two raters, gold and predicted outcomes) of units, each unit named
``"group|system"``, and declares:

* ``symmetric`` — the same value with ``x`` and ``y`` swapped (None: one sample only);
* ``nan_on_constant`` — undefined (NaN) when a side is constant;
* ``order_invariant`` — the same value with the units (and so the groups) in another order;
* ``bounds`` — every defined value lies in ``[lo, hi]``.

Each property is checked on seeded random samples and on edge cases (2 or 3 units, ties, a
constant side, both constant, perfect (anti-)agreement). A property declared absent is checked
too: some case must show it absent, so the table says exactly what holds. Every public function
of the floor is a row's statistic or is named in :data:`NOT_A_STATISTIC` with what it is
instead: a statistic added to ``stats/`` without a row fails
:func:`test_every_function_of_the_floor_has_a_row`.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
import pkgutil
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest

import checkeval_core.stats as floor
from checkeval_core.stats import (
    agreement,
    bootstrap,
    correlation,
    draws,
    escalation,
    intervals,
    ranking,
    significance,
    values,
    variance,
)

NAN = float("nan")
TOL = 1e-9


@dataclass(frozen=True)
class Row:
    name: str
    covers: tuple[Callable[..., Any], ...]   # the floor functions this row checks
    kind: str                                # "scores" | "labels" (yes/no) | "outcomes" (a/b/tie)
    value: Callable[[np.ndarray, np.ndarray, np.ndarray], float]   # (x, y, groups) → value
    symmetric: bool | None
    nan_on_constant: bool
    order_invariant: bool
    bounds: tuple[float, float] | None


# -- adapters: paired samples → the statistic's own input ---------------------------------------
def _f(v: Any) -> float:
    v = float(np.asarray(v, dtype=float).reshape(-1)[0]) if np.ndim(v) else v
    return NAN if v is None else float(v)


def _yes(labels: np.ndarray) -> np.ndarray:
    return (np.asarray(labels) == "yes").astype(int)


def _counts(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Confusion counts ``[yy, yn, ny, nn]`` of x (the judge) against y (people)."""
    a, b = _yes(x), _yes(y)
    return np.array([np.sum(a & b), np.sum(a & (1 - b)), np.sum((1 - a) & b),
                     np.sum((1 - a) & (1 - b))], float)


def _group(g: np.ndarray) -> list[str]:
    """The group of each unit (a unit is ``"group|system"``)."""
    return [u.split("|")[0] for u in g]


def _frame(x: np.ndarray, y: np.ndarray, g: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"group": _group(g), "system": [u.split("|")[1] for u in g],
                         "metric": x, "human": y})


def _level(level: str) -> Callable[[np.ndarray, np.ndarray, np.ndarray], float]:
    return lambda x, y, g: correlation.level_value(_frame(x, y, g), level, "spearman")[0]


def _per_unit_yes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Units × (yes, no) counts of two raters."""
    yes = _yes(x) + _yes(y)
    return np.column_stack([yes, 2 - yes]).astype(float)


def _group_mean(x: np.ndarray, y: np.ndarray, g: np.ndarray) -> float:
    groups = list(dict.fromkeys(_group(g)))
    per = correlation.group_correlations(_frame(x, y, g), groups, "metric", "spearman")
    per = per[~np.isnan(per)]
    return float(np.mean(per)) if len(per) else NAN


def _ordered_share(x: np.ndarray, y: np.ndarray, g: np.ndarray) -> float:
    """Share of pairs (of differing y) that x orders as y does, a tie counting one half."""
    _, per = ranking.pairs_ordered(_group(g), y, x)
    ordered, _, tied, pairs = per.sum(axis=0)
    return (ordered + tied / 2) / pairs if pairs else NAN


def _binary_alpha(x: np.ndarray, y: np.ndarray, g: np.ndarray) -> float:
    yes = _yes(x) + _yes(y)
    return agreement.binary_alpha(
        agreement.binary_group_sums(yes, np.full(len(yes), 2), _group(g)).sum(axis=0))


def _majority(x: np.ndarray, y: np.ndarray, g: np.ndarray) -> float:
    return {"yes": 1.0, "no": 0.0, None: NAN}[escalation.majority(list(x))]


FLOOR: list[Row] = [
    # correlations
    *[Row(f"corr {m}", (correlation.corr,), "scores",
          lambda x, y, g, m=m: correlation.corr(x, y, m), True, True, True, (-1, 1))
      for m in correlation.COEFFICIENTS],
    Row("corr of complete pairs", (correlation.complete_pairs,), "scores",
        lambda x, y, g: correlation.corr(*correlation.complete_pairs(x, y), "spearman"),
        True, True, True, (-1, 1)),
    *[Row(f"level_value {lv}", (correlation.level_value,), "scores", _level(lv),
          True, True, True, (-1, 1)) for lv in correlation.LEVELS],
    Row("group_correlations (mean of the defined groups)", (correlation.group_correlations,),
        "scores", _group_mean, True, True, True, (-1, 1)),
    Row("rank_correlation spearman", (ranking.rank_correlation,), "scores",
        lambda x, y, g: ranking.rank_correlation(x, y)["spearman"], True, True, True, (-1, 1)),
    Row("rank_correlation kendall", (ranking.rank_correlation,), "scores",
        lambda x, y, g: ranking.rank_correlation(x, y)["kendall"], True, True, True, (-1, 1)),
    Row("batch_rank_correlation spearman", (ranking.batch_rank_correlation,), "scores",
        lambda x, y, g: ranking.batch_rank_correlation(x[None, :], y)["spearman"][0],
        True, True, True, (-1, 1)),
    Row("batch_rank_correlation kendall", (ranking.batch_rank_correlation,), "scores",
        lambda x, y, g: ranking.batch_rank_correlation(x[None, :], y)["kendall"][0],
        True, True, True, (-1, 1)),
    Row("pairs_ordered (share ordered, ties one half)", (ranking.pairs_ordered,), "scores",
        _ordered_share, False, False, True, (0, 1)),
    # agreement of two raters
    Row("krippendorff_alpha nominal", (agreement.krippendorff_alpha,), "labels",
        lambda x, y, g: agreement.krippendorff_alpha([_yes(x), _yes(y)]),
        True, False, True, (-1, 1)),
    Row("krippendorff_alpha interval", (agreement.krippendorff_alpha,), "scores",
        lambda x, y, g: agreement.krippendorff_alpha([x, y], "interval"),
        True, False, True, (-1, 1)),
    Row("interval_alpha of summed interval_stats",
        (agreement.interval_stats, agreement.interval_alpha), "scores",
        lambda x, y, g: agreement.interval_alpha(
            agreement.interval_stats(np.vstack([x, y])).sum(axis=0)),
        True, False, True, (-1, 1)),
    Row("binary_alpha of binary_group_sums", (agreement.binary_alpha, agreement.binary_group_sums),
        "labels", _binary_alpha, True, False, True, (-1, 1)),
    Row("cohen_kappa", (agreement.cohen_kappa,), "labels",
        lambda x, y, g: agreement.cohen_kappa(list(x), list(y)), True, True, True, (-1, 1)),
    Row("fleiss_kappa", (agreement.fleiss_kappa,), "labels",
        lambda x, y, g: agreement.fleiss_kappa(_per_unit_yes(x, y)), True, False, True, (-1, 1)),
    Row("fleiss_from_counts", (agreement.fleiss_from_counts,), "labels",
        lambda x, y, g: agreement.fleiss_from_counts(_per_unit_yes(x, y))[0],
        True, False, True, (-1, 1)),
    Row("fleiss_from_labels", (agreement.fleiss_from_labels,), "labels",
        lambda x, y, g: agreement.fleiss_from_labels([[a, b] for a, b in zip(x, y)])[0],
        True, False, True, (-1, 1)),
    Row("percent_agreement", (agreement.percent_agreement,), "labels",
        lambda x, y, g: agreement.percent_agreement([[a, b] for a, b in zip(x, y)]),
        True, False, True, (0, 1)),
    # a judge's Yes/No against people's, from confusion counts
    Row("kappa_from_counts", (agreement.kappa_from_counts,), "labels",
        lambda x, y, g: _f(agreement.kappa_from_counts(_counts(x, y))), True, True, True, (-1, 1)),
    Row("agreement_from_counts", (agreement.agreement_from_counts,), "labels",
        lambda x, y, g: _f(agreement.agreement_from_counts(_counts(x, y))),
        True, False, True, (0, 1)),
    Row("phi_from_counts", (agreement.phi_from_counts,), "labels",
        lambda x, y, g: _f(agreement.phi_from_counts(_counts(x, y))), True, True, True, (-1, 1)),
    Row("fpr_from_counts", (agreement.fpr_from_counts,), "labels",
        lambda x, y, g: _f(agreement.fpr_from_counts(_counts(x, y))), False, False, True, (0, 1)),
    Row("fnr_from_counts", (agreement.fnr_from_counts,), "labels",
        lambda x, y, g: _f(agreement.fnr_from_counts(_counts(x, y))), False, False, True, (0, 1)),
    Row("kappa_phi_gap", (agreement.kappa_phi_gap,), "labels",
        lambda x, y, g: _f(agreement.kappa_phi_gap(_counts(x, y))), True, True, True, None),
    # pairwise outcomes
    Row("pair_agreement accuracy (gold x, judge y)", (ranking.pair_agreement,), "outcomes",
        lambda x, y, g: ranking.pair_agreement(list(x), list(y))["accuracy"],
        False, False, True, (0, 1)),
    Row("pair_agreement three_way", (ranking.pair_agreement,), "outcomes",
        lambda x, y, g: ranking.pair_agreement(list(x), list(y))["three_way"],
        False, False, True, (0, 1)),
    # tests of significance (their p-values)
    Row("spearman_test p", (significance.spearman_test,), "scores",
        lambda x, y, g: significance.spearman_test(x, y)[1], True, True, True, (0, 1)),
    Row("wilcoxon_test p", (significance.wilcoxon_test,), "scores",
        lambda x, y, g: significance.wilcoxon_test(x, y)[1], True, False, True, (0, 1)),
    Row("fisher_exact_p (Yes/No counts of x and of y)", (significance.fisher_exact_p,), "labels",
        lambda x, y, g: significance.fisher_exact_p(
            [[_yes(x).sum(), len(x) - _yes(x).sum()], [_yes(y).sum(), len(y) - _yes(y).sum()]]),
        True, False, True, (0, 1)),
    # one sample
    Row("binomial_pvalue (No answers of x, target 0.8)", (escalation.binomial_pvalue,), "labels",
        lambda x, y, g: escalation.binomial_pvalue(int(len(x) - _yes(x).sum()), len(x), 0.8),
        None, False, True, (0, 1)),
    Row("majority (yes 1, no 0)", (escalation.majority,), "labels", _majority,
        None, False, True, (0, 1)),
    Row("pooled_variance (x² with one degree of freedom each)", (variance.pooled_variance,),
        "scores", lambda x, y, g: _f(variance.pooled_variance(x * x, [1] * len(x))),
        None, False, True, (0, math.inf)),
]

#: The floor's public functions that are not a statistic of samples, and what each is instead.
NOT_A_STATISTIC: dict[Callable[..., Any], str] = {
    # intervals and resampling (their own tests: test_stats_floor, test_stats_draws)
    **dict.fromkeys((bootstrap.percentile_ci, bootstrap.wilson_ci, bootstrap.share_ci,
                     agreement.alpha_binary_ci, agreement.binary_alpha_ci,
                     agreement.confusion_figures, intervals.fisher_z_interval,
                     intervals.t_interval, intervals.t_critical, escalation.percentile_ci,
                     ranking.separation, ranking.list_level), "interval"),
    **dict.fromkeys((bootstrap.resample_index, bootstrap.resample_counts,
                     bootstrap.group_bootstrap, bootstrap.paired_group_bootstraps,
                     bootstrap.paired_group_bootstrap, bootstrap.mean_of_paired,
                     bootstrap.mean_of_groups, bootstrap.ratio_of_sums, bootstrap.weighted_sums,
                     bootstrap.nanmean_rows, correlation.level_statistic, correlation.bootstrap,
                     correlation.bootstrap_ci, correlation.paired_bootstrap,
                     escalation.resample_groups), "resampling"),
    **dict.fromkeys((draws.sampling_rng, draws.shuffled, draws.pick_without_replacement),
                    "seeded draw"),
    # rules, fits, transforms
    **dict.fromkeys((bootstrap.minimum, bootstrap.too_few, bootstrap.enough_groups,
                     bootstrap.interval_reason, bootstrap.mde, bootstrap.verdict,
                     correlation.is_constant, escalation.check_target, escalation.check_delta,
                     escalation.min_kept, escalation.cascade_outcome, ranking.judge_outcome,
                     ranking.strongly_connected, escalation.median_direction), "rule"),
    **dict.fromkeys((escalation.platt_fit, escalation.fit_threshold, ranking.fit_bt,
                     ranking.bradley_terry, ranking.elo_fit, variance.moderated_variance),
                    "fit or estimator"),
    **dict.fromkeys((escalation.confidence, escalation.platt_apply, ranking.outcome_value,
                     ranking.to_elo, ranking.rank_of, ranking.win_matrix, ranking.score_matches),
                    "transform or tally"),
    # several statistics put together, or their text
    **dict.fromkeys((correlation.correlations, correlation.average_levels,
                     correlation.quality_split, escalation.curve, bootstrap.delta_fields,
                     significance.bh_adjust, significance.wilcoxon_bh), "report of rows above"),
    **dict.fromkeys((values.isnan, values.nan_to_none, values.ci_list, values.fmt, values.fmt_ci,
                     values.pct),
                    "format"),
}


# -- the samples --------------------------------------------------------------------------------
ALPHABET = {"labels": np.array(["yes", "no"]), "outcomes": np.array(["a", "b", "tie"])}


def _draw(kind: str, rng: np.random.Generator, n: int, ties: bool) -> np.ndarray:
    if kind == "scores":
        return rng.integers(1, 6, n).astype(float) if ties else rng.normal(size=n)
    return rng.choice(ALPHABET[kind], n)


def _constant(kind: str, n: int) -> np.ndarray:
    return np.full(n, 3.0) if kind == "scores" else np.full(n, ALPHABET[kind][0])


@functools.cache
def cases(kind: str) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """``(name, x, y, groups)``: seeded random samples and edge cases."""
    out = []
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n, k = int(rng.integers(6, 25)), int(rng.integers(2, 7))
        x, y = _draw(kind, rng, n, seed % 2 == 0), _draw(kind, rng, n, seed % 3 == 0)
        if kind == "scores" and seed % 4 == 1:
            y = x + rng.normal(scale=0.5, size=n)       # related sides
        out.append((f"random {seed}", x, y, np.array([f"g{i % k}|s{i % 3}" for i in range(n)])))
    rng = np.random.default_rng(99)
    for n in (2, 3, 12):
        g = np.array([f"g{i // 4}|s{i % 3}" for i in range(n)])
        x, y = _draw(kind, rng, n, False), _draw(kind, rng, n, True)
        out += [(f"n={n}", x, y, g),
                (f"n={n} constant x", _constant(kind, n), y, g),
                (f"n={n} constant y", x, _constant(kind, n), g),
                (f"n={n} both constant", _constant(kind, n), _constant(kind, n), g),
                (f"n={n} the same", x, x.copy(), g)]
        if kind == "scores":
            out.append((f"n={n} reversed", x, -x, g))
    return out


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=1e-12)


def _constant_cases(row: Row) -> list[tuple[str, float]]:
    sides = ("constant x",) if row.symmetric is None else ("constant x", "constant y")
    return [(name, row.value(x, y, g)) for name, x, y, g in cases(row.kind)
            if name.endswith(sides)]


def _rows(keep=lambda row: True):
    """Parametrize over the rows a property applies to (no test is collected only to be
    skipped: a one-sample statistic has no symmetry, an unbounded one no bounds)."""
    rows = [r for r in FLOOR if keep(r)]
    return pytest.mark.parametrize("row", rows, ids=[r.name for r in rows])


ROWS = _rows()


@_rows(lambda r: r.symmetric is not None)
def test_symmetric(row):
    differ = [name for name, x, y, g in cases(row.kind)
              if not _same(row.value(x, y, g), row.value(y, x, g))]
    if row.symmetric:
        assert differ == [], f"{row.name} changes when its two sides swap: {differ}"
    else:
        assert differ, f"{row.name} is declared not symmetric but no case shows it"


@ROWS
def test_undefined_on_a_constant_side(row):
    found = _constant_cases(row)
    defined = [name for name, v in found if not math.isnan(v)]
    if row.nan_on_constant:
        assert defined == [], f"{row.name} has a value with a constant side: {defined}"
    else:
        assert defined, f"{row.name} is declared defined on a constant side but never is"


@ROWS
def test_invariant_to_the_order_of_units_and_groups(row):
    changed = []
    for name, x, y, g in cases(row.kind):
        before = row.value(x, y, g)
        for seed in (1, 2):
            p = np.random.default_rng(seed).permutation(len(x))
            if not _same(before, row.value(x[p], y[p], g[p])):
                changed.append(f"{name} (permutation {seed})")
    assert (changed == []) == row.order_invariant, (
        f"{row.name}: order invariance declared {row.order_invariant}, changed on {changed}")


@_rows(lambda r: r.bounds is not None)
def test_within_bounds(row):
    lo, hi = row.bounds
    out = [(name, v) for name, x, y, g in cases(row.kind)
           if not math.isnan(v := row.value(x, y, g)) and not lo - TOL <= v <= hi + TOL]
    assert out == [], f"{row.name} outside [{lo}, {hi}]: {out}"


@ROWS
def test_every_row_has_a_defined_value_somewhere(row):
    # a statistic that is NaN on every case would pass the other tests vacuously
    assert any(not math.isnan(row.value(x, y, g)) for _, x, y, g in cases(row.kind))


# -- every function of the floor is in the table ------------------------------------------------
def public_functions(modules: list[types.ModuleType]) -> dict[str, Callable[..., Any]]:
    """``{"module.name": function}`` of the functions each module defines and does not prefix
    with ``_``."""
    return {f"{m.__name__.rsplit('.', 1)[-1]}.{name}": f for m in modules
            for name, f in inspect.getmembers(m, inspect.isfunction)
            if not name.startswith("_") and f.__module__ == m.__name__}


def without_a_row(modules: list[types.ModuleType]) -> list[str]:
    covered = {f for r in FLOOR for f in r.covers} | set(NOT_A_STATISTIC)
    return sorted(n for n, f in public_functions(modules).items() if f not in covered)


def floor_modules() -> list[types.ModuleType]:
    return [importlib.import_module(f"{floor.__name__}.{m.name}")
            for m in pkgutil.iter_modules(floor.__path__)]


def test_every_function_of_the_floor_has_a_row():
    assert without_a_row(floor_modules()) == [], (
        "a public function of checkeval_core/stats/ is neither a row of FLOOR (a statistic with "
        "its properties) nor named in NOT_A_STATISTIC (what it is instead)")


def test_a_new_statistic_without_a_row_is_seen():
    new = types.ModuleType("checkeval_core.stats.novel")
    exec("def brier(x, y):\n    return sum((a - b) ** 2 for a, b in zip(x, y)) / len(x)\n"
         "def _helper():\n    pass\n", new.__dict__)
    assert without_a_row([*floor_modules(), new]) == ["novel.brier"]


def test_the_table_names_only_functions_of_the_floor():
    mods = floor_modules()
    known = set(public_functions(mods).values())
    assert [f.__qualname__ for r in FLOOR for f in r.covers if f not in known] == []
    assert [f.__qualname__ for f in NOT_A_STATISTIC if f not in known] == []
    assert not {f for r in FLOOR for f in r.covers} & set(NOT_A_STATISTIC)
    assert {m.__name__.rsplit(".", 1)[-1] for m in mods} >= {
        "agreement", "bootstrap", "correlation", "intervals", "ranking", "significance"}
