"""A proposal's figures: the agreement of a question subset's scores with the evidence on one
part of the split (:func:`agreement_stat`), and that part's before → after with intervals
(:func:`part_figures`).

The statistic per evidence (:data:`STATISTIC`): ``human_scores`` — mean over dimensions of
the sample-level (per group) Spearman of the score with the human score; ``reference_ratings``
— Spearman of the systems' mean scores with their rating (Kendall beside it); ``preferences``
— pair accuracy against human pairwise votes (a judge tie is a miss).

Every figure carries its items, groups (and systems) and a 95 % percentile bootstrap interval
resampling groups; the change after − before has a paired interval (same resampled groups).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from checkeval_core.analysis.proposal.evidence import NAN, Evidence
from checkeval_core.stats.bootstrap import (
    interval_reason,
    paired_group_bootstrap,
    percentile_ci,
    verdict,
)
from checkeval_core.stats.correlation import complete_pairs, corr
from checkeval_core.stats.ranking import judge_outcome
from checkeval_core.stats.values import isnan

STATISTIC = {"human_scores": "Spearman with human scores (sample level, mean over dimensions)",
             "reference_ratings": "Spearman of system mean scores with the reference rating",
             "preferences": "pair accuracy against human pairwise votes"}


def _item_score(ev: Evidence, sc: dict[str, np.ndarray]) -> np.ndarray:
    """One score per item (mean over its dimensions) for rankings and preferences."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.column_stack(list(sc.values())), axis=1)


@dataclass
class Stat:
    """One part's agreement: the value, per-group pieces to resample, and its N."""

    value: float
    boot: Any            # callable(index array over groups) → value
    n_items: int
    n_groups: int
    n_systems: int
    reason: str | None
    kendall: float = NAN


def agreement_stat(ev: Evidence, sc: dict[str, np.ndarray], mask: np.ndarray) -> Stat:
    """The agreement of scores ``sc`` on the items of ``mask`` with the evidence."""
    items = ev.items
    # the resampling units: every group of the part, in one order for before and after
    groups = sorted(set(items["group"][mask]))
    if ev.kind == "human_scores":
        dims = [d for d in sc if d in ev.human]
        G = np.full((len(groups), len(dims)), NAN)
        used = np.zeros(len(items), bool)
        gcol = items["group"].to_numpy()
        for j, d in enumerate(dims):
            ok = mask & ~np.isnan(sc[d]) & ~np.isnan(ev.human[d])
            used |= ok
            for i, g in enumerate(groups):
                m = ok & (gcol == g)
                G[i, j] = corr(sc[d][m], ev.human[d][m], "spearman")  # m: both are numbers

        def agg(M: np.ndarray) -> float:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                per_dim = np.nanmean(M, axis=-2)
                return np.nanmean(per_dim, axis=-1)

        value = float(agg(G)) if G.size else NAN
        reason = None if not isnan(value) else (
            "no group with ≥ 2 scored items whose scores and human scores both vary")
        return Stat(value, lambda idx: agg(G[idx]), int(used.sum()),
                    len(set(gcol[used])), len(set(items["system"][used])), reason)
    score = _item_score(ev, sc)
    if ev.kind == "reference_ratings":
        sub = items[mask & ~np.isnan(score)].assign(score=score[mask & ~np.isnan(score)])
        table = sub.groupby(["group", "system"])["score"].mean().unstack("system")
        table = table.reindex(groups)
        systems = [s for s in table.columns if s in ev.ratings]
        T = table[systems].to_numpy(float)
        ref = np.array([ev.ratings[s] for s in systems])

        def rho(M: np.ndarray, kind: str = "spearman") -> float:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                means = np.nanmean(M, axis=0)
            if len(means) < 3 or np.isnan(means).any():
                return NAN
            if kind == "kendall":
                return corr(means, ref, "kendall")
            return corr(*complete_pairs(means, ref), "spearman")

        value = rho(T) if T.size else NAN
        st = Stat(value, lambda idx: rho(T[idx]), len(sub), sub["group"].nunique(),
                  len(systems),
                  None if not isnan(value) else
                  f"needs ≥ 3 systems with a rating and a score in this part (n={len(systems)})")
        st.kendall = rho(T, "kendall") if T.size else NAN
        return st
    pairs = ev.pairs if ev.pairs is not None else pd.DataFrame(columns=["a", "b", "winner",
                                                                        "group"])
    p = pairs[[bool(mask[a] and mask[b] and not np.isnan(score[a]) and not np.isnan(score[b]))
               for a, b in zip(pairs["a"], pairs["b"])]]
    hits = np.array([judge_outcome(score[a], score[b], ev.tie_margin) == w
                     for a, b, w in zip(p["a"], p["b"], p["winner"])], dtype=float)
    gi = {g: k for k, g in enumerate(groups)}
    gcol = items["group"].to_numpy()
    H = np.zeros((len(groups), 2))
    for h, a in zip(hits, p["a"]):
        H[gi[gcol[a]]] += (h, 1)

    def acc(M: np.ndarray) -> float:
        tot = M[..., 1].sum(-1)
        return np.where(tot > 0, M[..., 0].sum(-1) / np.where(tot > 0, tot, 1), NAN)

    value = float(acc(H)) if len(p) else NAN
    used = set(p["a"]) | set(p["b"])
    return Stat(value, lambda idx: acc(H[idx]), len(used), int((H[:, 1] > 0).sum()),
                len(set(items["system"].iloc[list(used)])) if used else 0,
                None if len(p) else "no decisive human preference between two scored answers "
                                    "in this part")


def part_figures(ev: Evidence, before: dict[str, np.ndarray], after: dict[str, np.ndarray],
                 mask: np.ndarray, n_boot: int, seed: int,
                 where: str = "held-out") -> dict[str, Any]:
    """``{before, after, delta, n_items, n_groups, n_systems, ci: {before, after, delta},
    ci_reason, reason, mde, verdict}`` of one part (the paired interval resamples the same
    groups; ``mde`` and ``verdict`` of Δ as
    :func:`~checkeval_core.stats.bootstrap.delta_fields`, ``where`` naming the part)."""
    b, a = agreement_stat(ev, before, mask), agreement_stat(ev, after, mask)
    n_groups = max(b.n_groups, a.n_groups)
    n_units = len(set(ev.items["group"][mask]))
    ci = {"before": [NAN, NAN], "after": [NAN, NAN], "delta": [NAN, NAN]}
    ci_reason = interval_reason(n_groups, n_boot)
    pb = None
    if ci_reason is None and not (isnan(a.value) and isnan(b.value)):
        # resample every group of the part (one order for before and after), not only the
        # groups with a value: the same draw as the other figures of this part
        pb = paired_group_bootstrap(n_units, b.boot, a.boot, n_boot, seed, vectorised=False)
        ci = {"before": percentile_ci(pb.a), "after": percentile_ci(pb.b),
              "delta": pb.ci()}
    if ci_reason is None and any(isnan(x) for x in ci["after"] + ci["before"]):
        ci_reason = ("no interval: " + (a.reason or b.reason) if a.reason or b.reason else
                     "no interval: fewer than 2 resamples had a value")
    delta = NAN if isnan(a.value) or isnan(b.value) else a.value - b.value
    m = pb.mde() if pb is not None and not isnan(ci["delta"][0]) else NAN
    out = {"before": b.value, "after": a.value,
           "delta": delta,
           "n_items": max(a.n_items, b.n_items), "n_groups": n_groups,
           "n_systems": max(a.n_systems, b.n_systems), "ci": ci, "ci_reason": ci_reason,
           "reason": a.reason or b.reason, "statistic": STATISTIC[ev.kind], "mde": m,
           "verdict": verdict(delta, ci["delta"], m, n_groups, where, ci_reason)}
    if ev.kind == "reference_ratings":
        out["kendall"] = {"before": b.kendall, "after": a.kendall}
    return out
