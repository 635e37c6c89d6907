"""Human-calibrated estimates: a system's mean human-scale score from many judge scores and a
few human scores, with an interval that is valid however biased the judge is.

Prediction-powered inference with power tuning (PPI++, Angelopoulos, Duchi & Zrnic 2023, via
the ``ppi-python`` package): with ``n`` labelled items (human score ``Y``, judge score ``f``)
and ``N`` unlabelled items (judge score only),

    θ̂ = λ · mean(f_unlabelled) + mean(Y − λ f)_labelled,

unbiased for any λ; λ is tuned from the data to minimise the variance (clipped to [0, 1]:
λ = 0 is the humans' mean alone, λ = 1 plain PPI). The interval is the normal one with
variance λ² Var(f_u)/N + Var(Y − λ f)/n. Beside it, every entry carries the humans-alone
interval (the labelled items' mean, same normal form) and the judge alone — its scores mapped
onto the human scale, biased by whatever the judge gets wrong, with an interval that only
counts sampling noise.

Why map the judge onto the human scale first: λ is clipped to [0, 1], so a judge on another
scale (mean p(Yes) in [0, 1] against human scores 1–5) could not be weighted as much as it
deserves. The map matches the judge's spread to the labelled humans' spread per dimension
(``f' = mean(Y_L) + sd(Y_L) · (f − mean f) / sd f``); its intercept cancels out of θ̂ and its
slope only rescales λ, so the estimate stays unbiased.

Labelled items come from the task's dev groups only (where a split exists); every other item
the run scored is unlabelled — including held-out items that have human scores, which is how
the estimate is checked. Pure over the frame of :func:`checkeval_core.analysis.frames.run_frame`.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from checkeval_core.analysis.frames import run_frame
from checkeval_core.stats.draws import pick_without_replacement, sampling_rng
from checkeval_core.stats.intervals import t_critical
from checkeval_core.stats.values import fmt_ci
from checkeval_core.stats.variance import moderated_variance, pooled_variance
from checkeval_core.task_split import get_split, task_of_run

# ppi_py is imported inside the functions that use it: it takes about 1.4 s to import, paid
# only by a calibrated estimate.

NAN = float("nan")
ALPHA = 0.05
METHOD = "PPI++ (ppi-python: ppi_mean_pointestimate / ppi_mean_ci, power-tuned λ)"
#: The row label of items without a system id (a version's items as one population).
ALL_ITEMS = "(all items)"
MIN_LABELLED = 2
#: Below this many labelled items per system the normal / t intervals cover too little (on
#: SummEval with 3 labelled summaries per system, 68–84 % for a nominal 95 %): said beside them.
FEW_LABELLED = 10


def _z_ci(values: np.ndarray, alpha: float) -> list[float]:
    """Normal interval of a mean (the form ``ppi-python`` uses for PPI and its baseline)."""
    from ppi_py import classical_mean_ci

    lo, hi = classical_mean_ci(np.asarray(values, float), alpha=alpha)
    return [float(lo), float(hi)]


def ppi_mean(y: np.ndarray, f: np.ndarray, f_unlabelled: np.ndarray,
             alpha: float = ALPHA) -> dict[str, Any]:
    """PPI++ mean of ``y`` from labelled ``(y, f)`` and unlabelled ``f_unlabelled``:
    ``{"estimate", "ci", "lambda", "human_only", "ci_human_only", "reason"}``.

    Fewer than :data:`MIN_LABELLED` labelled items: no estimate (``reason`` says why). A
    constant judge (no variance in f): λ = 0, the humans' mean and interval."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    y, f, fu = (np.asarray(a, float) for a in (y, f, f_unlabelled))
    n = len(y)
    out: dict[str, Any] = {"estimate": NAN, "ci": [NAN, NAN], "lambda": NAN,
                           "human_only": NAN, "ci_human_only": [NAN, NAN], "reason": None}
    if n < MIN_LABELLED:
        out["reason"] = f"needs ≥ {MIN_LABELLED} labelled items (n={n})"
        return out
    out["human_only"] = float(y.mean())
    if np.ptp(y) == 0:  # a normal interval of width 0 would claim certainty from a tie
        out.update(estimate=float(y.mean()), reason=(
            f"the {n} labelled human scores are all {y[0]:g}: no interval — label more items"))
        return out
    out["ci_human_only"] = _z_ci(y, alpha)
    if len(fu) == 0:
        out.update(estimate=out["human_only"], ci=out["ci_human_only"], lam=0.0,
                   reason="no unlabelled item: the humans' mean alone")
        out["lambda"] = 0.0
        return out
    if np.var(np.concatenate([f, fu])) <= 1e-12:
        out.update(estimate=out["human_only"], ci=out["ci_human_only"], reason=(
            "the judge gave every item the same score: the humans' mean alone"))
        out["lambda"] = 0.0
        return out
    lam = _tuned_lambda(y, f, fu)
    est = ppi_mean_pointestimate(y, f, fu, lam=lam)
    lo, hi = ppi_mean_ci(y, f, fu, alpha=alpha, lam=lam)
    out.update(estimate=float(np.ravel(est)[0]), ci=[float(np.ravel(lo)[0]),
                                                     float(np.ravel(hi)[0])],
               **{"lambda": float(lam)})
    return out


def ppi_mean_unlabelled(y: np.ndarray, f: np.ndarray, f_unlabelled: np.ndarray,
                        alpha: float = ALPHA, pooled: dict[str, float] | None = None
                        ) -> dict[str, Any]:
    """The same estimator read as an estimate of the mean human score *of the unlabelled items
    themselves* (a finite population — e.g. a benchmark's held-out documents), not of the
    population they were drawn from: ``θ̂ − θ_U = mean_L(Y − λf) − mean_U(Y − λf)``, so

        Var = Var(Y − λ f) · (1/n + 1/N),   λ = Cov(Y, f) / Var(f)  (on the labelled items),

    against ``Var(Y) · (1/n + 1/N)`` for the humans' mean alone — a width ratio of
    √(1 − ρ²) at the optimal λ. Var(Y − λf) is read with n − 2 degrees of freedom (λ was
    fitted on the same items), Var(Y) with n − 1, each with Student's t quantile (with a few
    labelled items the normal one covers too little). Where that makes the calibrated interval
    wider than the humans' (a judge that explains less than the degree of freedom it costs),
    the entry is the humans' mean and interval, λ = 0, with the reason — never wider.

    ``pooled`` (``{"human": s₀², "residual": s₀²}``, the pooled variances of like samples —
    the other systems on the same dimension): both variances are moderated toward them
    (:func:`checkeval_core.stats.variance.moderated_variance`, twice the degrees of freedom),
    and labelled scores that are all equal get an interval from the pool instead of none.

    ``{"estimate", "ci", "lambda", "human_only", "ci_human_only", "reason", "var_human",
    "var_residual", "df", "df_residual", "moderated"}`` (the two variances are the sample's
    own, before any moderation, with their degrees of freedom); our own formulas (the point
    estimate is ``ppi_mean_pointestimate`` at that λ)."""
    return _unlabelled_interval(_unlabelled_fit(y, f, f_unlabelled), alpha, pooled)


@dataclass(frozen=True)
class _UnlabelledFit:
    """What :func:`ppi_mean_unlabelled` reads from the data before any interval (computed once
    per system, then read both for the dimension's pool and for the system's interval)."""

    out: dict[str, Any]  # the entry so far: estimate, λ, the two variances and their dfs
    n: int
    n_unlabelled: int
    tie: float | None  # the value of labelled scores that are all equal, else None


def _unlabelled_fit(y: np.ndarray, f: np.ndarray, f_unlabelled: np.ndarray) -> _UnlabelledFit:
    from ppi_py import ppi_mean_pointestimate

    y, f, fu = (np.asarray(a, float) for a in (y, f, f_unlabelled))
    n, big_n = len(y), len(fu)
    out: dict[str, Any] = {"estimate": NAN, "ci": [NAN, NAN], "lambda": NAN,
                           "human_only": NAN, "ci_human_only": [NAN, NAN], "reason": None,
                           "var_human": NAN, "var_residual": NAN, "df": max(n - 1, 0),
                           "df_residual": max(n - 1, 0), "moderated": False}
    if n < MIN_LABELLED or big_n == 0:
        out["reason"] = (f"needs ≥ {MIN_LABELLED} labelled items (n={n})" if n < MIN_LABELLED
                         else "no unlabelled item")
        return _UnlabelledFit(out, n, big_n, None)
    out["human_only"] = float(y.mean())
    vf = float(np.var(f, ddof=1))
    # λ fitted on the same n labelled items costs a degree of freedom: their residual spread
    # is read with n − 2 (with n − 1 it is optimistic by (n − 2)/(n − 1) — the interval came
    # out narrower than √(1 − ρ²) allows); on 2 items a fitted λ leaves no residual at all
    fitted = vf > 1e-12 and n >= 3
    lam = float(np.cov(y, f, ddof=1)[0, 1] / vf) if fitted else 0.0
    df_r = n - 2 if fitted else n - 1
    res = y - lam * f
    est = float(np.ravel(ppi_mean_pointestimate(y, f, fu, lam=lam))[0])
    out.update(estimate=est, var_human=float(np.var(y, ddof=1)), df_residual=df_r,
               var_residual=float(np.sum((res - res.mean()) ** 2) / df_r), **{"lambda": lam})
    return _UnlabelledFit(out, n, big_n, float(y[0]) if np.ptp(y) == 0 else None)


def _unlabelled_interval(fit: _UnlabelledFit, alpha: float,
                         pooled: dict[str, float] | None) -> dict[str, Any]:
    out, n = dict(fit.out), fit.n
    if n < MIN_LABELLED or fit.n_unlabelled == 0:
        return out
    if fit.tie is not None and pooled is None:
        out.update(estimate=out["human_only"], ci=[NAN, NAN], reason=(
            f"the {n} labelled human scores are all {fit.tie:g}: no interval — label more "
            "items"))
        return out
    k = math.sqrt(1 / n + 1 / fit.n_unlabelled)
    hws = {}
    for key, centre, var, df0, pool in (
            ("ci_human_only", out["human_only"], out["var_human"], n - 1, "human"),
            ("ci", out["estimate"], out["var_residual"], out["df_residual"], "residual")):
        v, df = moderated_variance(var, df0, None if pooled is None else pooled[pool])
        hws[key] = t_critical(alpha, df) * math.sqrt(v) * k
        out[key] = [centre - hws[key], centre + hws[key]]
    if pooled is not None:
        out["moderated"] = True
        if fit.tie is not None:
            out["reason"] = (f"the {n} labelled human scores are all {fit.tie:g}: the "
                             "interval's spread is the other systems' (pooled)")
    if hws["ci"] > hws["ci_human_only"]:
        # the judge's weight fitted on these few items does not narrow the interval (its
        # degree of freedom costs more than it explains): the humans' mean alone, λ = 0
        out.update(estimate=out["human_only"], ci=list(out["ci_human_only"]),
                   reason=out["reason"] or ("the judge does not narrow the interval on these "
                                            "labelled items: the humans' mean alone"),
                   **{"lambda": 0.0})
    return out


def _tuned_lambda(y: np.ndarray, f: np.ndarray, fu: np.ndarray) -> float:
    """The package's power-tuned λ (what ``lam=None`` computes inside ``ppi_mean_ci``), read
    once so the point estimate and the interval use the same value."""
    from ppi_py.ppi import _calc_lam_glm, ppi_mean_pointestimate

    y2, f2, fu2 = y.reshape(-1, 1), f.reshape(-1, 1), fu.reshape(-1, 1)
    theta = ppi_mean_pointestimate(y2, f2, fu2, lam=1)
    lam = _calc_lam_glm(y2 - theta, f2 - theta, fu2 - theta, np.eye(1), coord=None, clip=True)
    return float(lam)


def human_scale(judge: pd.Series, labelled_human: pd.Series) -> tuple[float, float] | None:
    """``(a, b)`` with ``f' = a + b · f`` on the human scale: the judge's mean and spread over
    every item matched to the labelled humans' (None when either has no spread)."""
    sf = float(judge.std(ddof=1)) if len(judge) > 1 else NAN
    sy = float(labelled_human.std(ddof=1)) if len(labelled_human) > 1 else NAN
    if not (sf > 1e-12 and sy > 1e-12):
        return None
    b = sy / sf
    return float(labelled_human.mean() - b * judge.mean()), b


def draw_labelled(df: pd.DataFrame, dev_groups: Collection[str] | None, n_per_system: int | None,
                  seed: int = 0) -> set[Any]:
    """The labelled items (``item_pk``): those with a human score on ``dev_groups`` (all groups
    when None), at most ``n_per_system`` per system drawn at random (seeded); None keeps all.
    An item is drawn once for all dimensions (a person scores a summary on every dimension)."""
    d = df.dropna(subset=["human", "metric"])
    if dev_groups is not None:
        d = d[d["group"].astype(str).isin({str(g) for g in dev_groups})]
    items = d.drop_duplicates("item_pk")[["item_pk", "system"]]
    if n_per_system is None:
        return set(items["item_pk"])
    rng = sampling_rng(seed)
    out: set[Any] = set()
    for _, part in items.sort_values("item_pk").groupby("system", sort=True):
        k = min(int(n_per_system), len(part))
        out.update(part["item_pk"].to_numpy()[pick_without_replacement(rng, len(part), k)])
    return out


def calibrated(df: pd.DataFrame, labelled: Collection[Any], alpha: float = ALPHA
               ) -> dict[str, dict[str, dict[str, Any]]]:
    """``{system: {dimension: entry}}`` for a :func:`run_frame`-shaped frame and the labelled
    ``item_pk`` set (:func:`draw_labelled`).

    entry: ``estimate``, ``ci``, ``n_labelled``, ``n_unlabelled``, ``ci_human_only``,
    ``human_only``, ``judge_only`` and ``ci_judge_only`` (the judge on the human scale: biased),
    ``raw_judge`` (the judge's own mean), ``lambda``, ``width_ratio`` (PPI++ width / humans'
    width), ``method``, ``reason`` (why a figure is missing or what it fell back to)."""
    lab = set(labelled)
    d = df.dropna(subset=["metric"]).copy()
    d["system"] = d["system"].fillna("").astype(str).replace("", ALL_ITEMS)
    d["is_lab"] = d["item_pk"].isin(lab) & d["human"].notna()
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for dim, part in d.groupby("dimension", sort=True):
        scale = human_scale(part["metric"], part.loc[part["is_lab"], "human"])
        labelled_h = part.loc[part["is_lab"], "human"]
        bounds = (float(labelled_h.min()), float(labelled_h.max())) if len(labelled_h) else None
        systems = [(str(s), sp[sp["is_lab"]], sp[~sp["is_lab"]], sp)
                   for s, sp in part.groupby("system", sort=True)]
        fits = {s: _unlabelled_fit(*m) for s, lp, up, _ in systems
                if (m := _mapped(lp, up, scale)) is not None}
        pooled = _pooled(fits)
        for s, lp, up, sp in systems:
            fin = (_unlabelled_interval(fits[s], alpha, pooled) if s in fits
                   else {"ci": [NAN, NAN], "ci_human_only": [NAN, NAN], "moderated": False})
            out.setdefault(s, {})[str(dim)] = _entry(lp, up, sp, scale, alpha, fin, bounds)
    return out


def _mapped(lp: pd.DataFrame, up: pd.DataFrame, scale: tuple[float, float] | None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(y, f, f_unlabelled)`` of one system with the judge on the human scale (None when
    there is no scale)."""
    if scale is None:
        return None
    a, b = scale
    return (lp["human"].to_numpy(float), a + b * lp["metric"].to_numpy(float),
            a + b * up["metric"].to_numpy(float))


def _pooled(fits: dict[str, _UnlabelledFit]) -> dict[str, float] | None:
    """The pooled human and residual variances of a dimension's systems (the like samples the
    held-out-mean interval borrows from); None for fewer than
    :data:`~checkeval_core.stats.variance.MIN_POOL` systems with ≥ 2 labelled items — e.g. a
    run without system ids."""
    own = [r.out for s, r in fits.items()
           if s != ALL_ITEMS and r.n >= MIN_LABELLED and r.n_unlabelled]
    ph = pooled_variance([r["var_human"] for r in own], [r["df"] for r in own])
    pr = pooled_variance([r["var_residual"] for r in own], [r["df_residual"] for r in own])
    return None if ph is None or pr is None else {"human": ph, "residual": pr}


def _entry(lp: pd.DataFrame, up: pd.DataFrame, sp: pd.DataFrame,
           scale: tuple[float, float] | None, alpha: float, fin: dict[str, Any],
           bounds: tuple[float, float] | None = None) -> dict[str, Any]:
    base = {"n_labelled": int(len(lp)), "n_unlabelled": int(len(up)),
            "raw_judge": float(sp["metric"].mean()), "method": METHOD}
    y = lp["human"].to_numpy(float)
    if scale is None:
        r = ppi_mean(y, np.zeros(len(y)), np.zeros(len(up)), alpha)
        r["reason"] = r["reason"] or ("no spread to map the judge onto the human scale (the "
                                      "judge or the labelled human scores are constant): "
                                      "the humans' mean alone")
        judge_only, ci_judge = NAN, [NAN, NAN]
    else:
        a, b = scale
        r = ppi_mean(y, a + b * lp["metric"].to_numpy(float),
                     a + b * up["metric"].to_numpy(float), alpha)
        mapped = a + b * sp["metric"].to_numpy(float)
        judge_only = float(mapped.mean())
        ci_judge = _z_ci(mapped, alpha) if len(mapped) >= 2 else [NAN, NAN]
    if bounds is not None and not math.isnan(judge_only) and not \
            bounds[0] <= judge_only <= bounds[1]:
        side, edge = ("above", "highest") if judge_only > bounds[1] else ("below", "lowest")
        off = (f"judge alone {judge_only:.2f} lies {side} the {edge} labelled human score "
               f"({bounds[1] if side == 'above' else bounds[0]:g}): the map onto the human "
               "scale (mean and spread matched over every system) extrapolates for a system "
               f"the judge rates {side} the others; read it as a rank, not a score")
        r["reason"] = f"{r['reason']}; {off}" if r["reason"] else off
    if r["reason"] is None and 0 < len(lp) < FEW_LABELLED:
        r["reason"] = (f"only {len(lp)} labelled items: the intervals (humans alone too) are "
                       f"approximate and tend to be too narrow below {FEW_LABELLED}")
    w, wh = _width(r["ci"]), _width(r["ci_human_only"])
    return {"estimate": r["estimate"], "ci": r["ci"], **base,
            "ci_human_only": r["ci_human_only"], "human_only": r["human_only"],
            "judge_only": judge_only, "ci_judge_only": ci_judge, "lambda": r["lambda"],
            "width_ratio": w / wh if wh > 0 else NAN, "reason": r["reason"],
            # the same data read as an estimate of the unlabelled items' own mean, its
            # variances moderated toward the other systems' (module doc of stats.variance)
            "ci_unlabelled_mean": fin["ci"],
            "ci_human_only_unlabelled_mean": fin["ci_human_only"],
            "unlabelled_mean_moderated": bool(fin["moderated"])}


def _width(ci: list[float]) -> float:
    lo, hi = ci
    return NAN if (math.isnan(lo) or math.isnan(hi)) else float(hi - lo)


def run_calibrated(db: Any, run_id: int, n_labelled: int | None = None, seed: int = 0,
                   aggregation: str | None = None, alpha: float = ALPHA) -> dict[str, Any]:
    """The calibrated estimates of one run: ``{"run", "judge", "method", "aggregation",
    "labelled_from", "n_labelled_per_system", "alpha", "systems": {system: {dim: entry}},
    "note"}``. Labelled items come from the task's dev groups (all groups when the task has no
    split, said in ``labelled_from``); ``n_labelled`` per system at most (None: every dev item
    with a human score)."""
    if n_labelled is not None and int(n_labelled) < MIN_LABELLED:
        raise ValueError(f"--labelled {n_labelled}: give ≥ {MIN_LABELLED} labelled items per "
                         "system")
    df, meta = run_frame(db, run_id, aggregation)
    split = get_split(db, task_of_run(db, run_id))
    dev = split["dev"] if split["defined"] else None
    labelled = draw_labelled(df, dev, n_labelled, seed)
    systems = calibrated(df, labelled, alpha) if df["human"].notna().any() else {}
    where = (f"dev groups ({len(dev)} of {split['n_groups']})" if dev is not None else
             f"all {split['n_groups']} groups (the task has no dev / held-out split)")
    note = None if systems else "no item of this run's task has a human score to calibrate with"
    return {"run": run_id, "judge": meta["judge"], "method": METHOD,
            "aggregation": meta["aggregation"], "labelled_from": where,
            "n_labelled_per_system": n_labelled, "seed": seed, "alpha": alpha,
            "systems": systems, "note": note}


def calibrated_view(rep: dict[str, Any]) -> dict[str, Any]:
    """What a page shows of :func:`run_calibrated`: one row per system and dimension (the raw
    judge mean, the judge alone on the human scale, humans alone, the calibrated estimate,
    each interval and its width, the items behind it) and a caption naming the method."""
    out_rows = []
    for system, dims in rep["systems"].items():
        for dim, e in dims.items():
            def w(ci: list[float]) -> float:
                return _width(ci)
            out_rows.append({
                "system": system, "dimension": dim, "raw judge": e["raw_judge"],
                "judge alone (biased)": e["judge_only"],
                "judge CI": fmt_ci(e["ci_judge_only"]), "judge width": w(e["ci_judge_only"]),
                "humans alone": e["human_only"], "humans CI": fmt_ci(e["ci_human_only"]),
                "humans width": w(e["ci_human_only"]), "calibrated": e["estimate"],
                "calibrated CI": fmt_ci(e["ci"]), "calibrated width": w(e["ci"]),
                "width vs humans": e["width_ratio"], "labelled": e["n_labelled"],
                "unlabelled": e["n_unlabelled"], "λ": e["lambda"],
                "why": e["reason"] or ""})
    per = rep["n_labelled_per_system"]
    caption = (f"{rep['method']}, 95 % intervals. Labelled: the human scores of "
               f"{'every item' if per is None else f'at most {per} items per system'} on the "
               f"{rep['labelled_from']}; unlabelled: every other item the run scored (their "
               "human scores, if any, are not used). The judge alone is mapped onto the human "
               "scale (mean and spread matched) and is biased by whatever it gets wrong; its "
               "interval counts sampling noise only.")
    return {"rows": out_rows, "caption": caption, "note": rep["note"],
            "summary": calibrated_summary(out_rows)}


#: The columns a page shows of :func:`calibrated_view`'s rows, the estimate and its width
#: against humans alone first (the others stay in the rows and the CSV).
SHOWN_COLUMNS = ["system", "dimension", "calibrated", "calibrated CI", "width vs humans",
                 "humans alone", "humans CI", "judge alone (biased)", "labelled", "why"]


def calibrated_summary(out_rows: list[dict[str, Any]]) -> str:
    """One line over :func:`calibrated_view`'s rows: how many intervals the judge narrowed
    (calibrated narrower than humans alone) and the median width ratio."""
    ratios = [r["width vs humans"] for r in out_rows if not _isnan(r["width vs humans"])]
    if not ratios:
        return (f"No interval to compare in {len(out_rows)} rows (system × dimension): see "
                "*why*.")
    narrowed = sum(x < 1 - 1e-9 for x in ratios)
    return (f"The judge narrowed {narrowed} of {len(ratios)} intervals (calibrated narrower "
            f"than humans alone); median width ratio {float(np.median(ratios)):.2f} (1.00 = no "
            "gain)" + (f"; {len(out_rows) - len(ratios)} of {len(out_rows)} rows without "
                       "one (see *why*)" if len(ratios) < len(out_rows) else "") + ".")


def _isnan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))
