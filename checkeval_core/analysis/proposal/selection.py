"""Which questions of a proposal stay, chosen on dev answers only, in this order:

1. *mostly invalid*: more than :data:`INVALID_SHARE` of its dev answers are invalid;
2. *never varies*: one verdict on every dev answer and p(Yes) spanning less than
   :data:`VARY_EPS`;
3. *near-copy*: character-sequence similarity ≥ :data:`SIMILARITY`
   (:func:`checkeval_core.checklists.filtering.similar_pairs`) to another question of the same
   dimension (per-query: of the same query); the one whose own dev agreement is lower goes;
4. *lowers dev agreement*: greedy backward elimination — remove the question whose removal
   raises dev agreement most, while that raise exceeds :data:`EPSILON`; every dimension (and
   query) keeps at least one question.

Nothing is dropped when the answered dev items come from fewer groups than the floor's
minimum (:func:`too_few_dev`).
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from typing import Any

import numpy as np

from checkeval_core.analysis.proposal.evidence import (
    NAN,
    Evidence,
    question_ref,
    question_unit,
    subset_scores,
)
from checkeval_core.analysis.proposal.figures import agreement_stat
from checkeval_core.checklists.filtering import similar_pairs
from checkeval_core.stats.bootstrap import enough_groups, minimum
from checkeval_core.stats.correlation import complete_pairs, corr
from checkeval_core.stats.values import isnan, pct

INVALID_SHARE = 0.5
VARY_EPS = 0.05
SIMILARITY = 0.75
EPSILON = 0.005


def _fmt(x: float) -> str:
    return "undefined" if isnan(x) else f"{x:.3f}"


def too_few_dev(ev: Evidence) -> str | None:
    """Why no proposal (no drop, no weights) may be made: the answered dev items come from
    fewer groups than the floor's :data:`~checkeval_core.stats.bootstrap.MIN_GROUPS`."""
    answered_dev = ev.items["dev"].to_numpy(bool) & (ev.answered.sum(1) > 0)
    n = int(ev.items["group"][answered_dev].nunique())
    if enough_groups(n):
        return None
    return (f"no proposal: the dev answers come from {n} groups (documents / contexts / "
            f"queries), fewer than the {minimum()} a proposal needs — every question is kept")


def select(ev: Evidence, epsilon: float = EPSILON, similarity: float = SIMILARITY,
           invalid_share: float = INVALID_SHARE, vary_eps: float = VARY_EPS
           ) -> tuple[np.ndarray, list[dict[str, Any]], list[str]]:
    """``(keep mask, dropped [{question, reason, rule}], notes)`` from dev answers only.

    Nothing is dropped when the answered dev items come from fewer than the floor's
    :data:`~checkeval_core.stats.bootstrap.MIN_GROUPS` groups (the small-sample rule: no
    proposal from a handful of documents); ``notes`` says so."""
    dev = ev.items["dev"].to_numpy(bool)
    nq = len(ev.questions)
    keep = np.ones(nq, bool)
    dropped: list[dict[str, Any]] = []
    notes: list[str] = []
    few = too_few_dev(ev)
    if few:
        notes.append(few)
        return keep, dropped, notes
    dev_answers = ev.answered[dev].sum(0)
    no_dev = [k for k in range(nq) if dev_answers[k] == 0]
    if no_dev:
        notes.append(f"{len(no_dev)} question(s) have no dev answer (per-query questions of "
                     "held-out queries): kept as they are, nothing on dev can judge them")
    active = np.array([dev_answers[k] > 0 for k in range(nq)])
    units: dict[tuple[str, str], list[int]] = defaultdict(list)
    for k, q in enumerate(ev.questions):
        units[question_unit(q)].append(k)

    def drop(k: int, rule: str, reason: str) -> None:
        keep[k] = False
        dropped.append({"question": question_ref(ev, k), "rule": rule, "reason": reason})

    def last_in_unit(k: int) -> bool:
        return sum(keep[j] for j in units[question_unit(ev.questions[k])]) <= 1

    dev_rows = np.where(dev)[0]
    for k in np.where(active)[0]:
        inv = ev.invalid[dev, k].sum() / dev_answers[k]
        if inv > invalid_share and not last_in_unit(k):
            drop(k, "mostly invalid", f"{pct(inv)} of its {int(dev_answers[k])} dev answers are "
                                      f"invalid (> {pct(invalid_share)})")
    for k in np.where(active & keep)[0]:
        vs = set().union(*[ev.verdicts.get((r, k), set()) for r in dev_rows])
        vals = ev.V[dev, k]
        vals = vals[~np.isnan(vals)]
        spread = float(np.ptp(vals)) if len(vals) else 0.0
        if len(vs) <= 1 and spread < vary_eps and not last_in_unit(k):
            what = next(iter(vs)) if vs else "no valid answer"
            drop(k, "never varies", f"answered {what!r} on all {len(vals)} valid dev answers "
                                    f"(p(Yes) spread {spread:.3f} < {vary_eps})")

    def own(k: int) -> float:
        one = np.zeros(nq, bool)
        one[k] = True
        return agreement_stat(ev, subset_scores(ev, one), dev).value

    for members_ in units.values():
        ks = [k for k in members_ if keep[k] and active[k]]
        for i, j, sim in similar_pairs([ev.questions[k]["text"] for k in ks], similarity):
            a, b = ks[i], ks[j]
            if not (keep[a] and keep[b]):
                continue
            va, vb = own(a), own(b)
            ra, rb = (-math.inf if isnan(va) else va), (-math.inf if isnan(vb) else vb)
            loser, winner = (b, a) if (ra, -a) >= (rb, -b) else (a, b)
            vl, vw = (vb, va) if loser == b else (va, vb)
            drop(loser, "near-copy",
                 f"near-copy (similarity {sim:.2f} ≥ {similarity}) of #{ev.questions[winner]['id']}"
                 f" {ev.questions[winner]['text']!r}, whose own dev agreement is higher or equal "
                 f"({_fmt(vw)} vs {_fmt(vl)})")

    fast = _FastHuman(ev, dev) if ev.kind == "human_scores" else None

    def value(trial: np.ndarray, k: int | None = None) -> float:
        if fast is not None:
            return fast.value(trial) if k is None else fast.without(k)
        if k is not None:
            trial = trial.copy()
            trial[k] = False
        return agreement_stat(ev, subset_scores(ev, trial), dev).value

    current = value(keep)
    while True:
        best, best_v = None, current
        for k in np.where(keep & active)[0]:
            if last_in_unit(k):
                continue
            v = value(keep, k)
            if isnan(v):
                continue
            if v > best_v:
                best, best_v = k, v
        # an undefined dev agreement gives nothing to compare a drop with: stop there
        if best is None or isnan(current) or best_v - current <= epsilon:
            break
        drop(best, "lowers dev agreement",
             f"dropping it raises dev agreement from {_fmt(current)} to {_fmt(best_v)} "
             f"(> ε {epsilon})")
        current = value(keep)
    return keep, dropped, notes


class _FastHuman:
    """Dev agreement with human scores as
    :func:`~checkeval_core.analysis.proposal.figures.agreement_stat` computes it, for the
    greedy search: dropping one question only changes its own dimension, so only that one is
    recomputed."""

    def __init__(self, ev: Evidence, mask: np.ndarray) -> None:
        gcol = ev.items["group"].to_numpy()
        self.human = ev.human
        self.rows = [np.where(mask & (gcol == g))[0] for g in sorted(set(gcol[mask]))]
        self.col_dim = np.array([q["dimension"] for q in ev.questions])
        self.dims = [d for d in dict.fromkeys(self.col_dim.tolist()) if d in ev.human]
        self.Vz, self.valid = np.nan_to_num(ev.V), (~np.isnan(ev.V)).astype(float)
        self.keep = np.ones(len(ev.questions), bool)
        self.per: dict[str, np.ndarray] = {}

    def _dim(self, d: str, cols: np.ndarray) -> np.ndarray:
        num, den = self.Vz[:, cols].sum(1), self.valid[:, cols].sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.where(den > 0, num / np.where(den > 0, den, 1), NAN)
        return np.array([corr(*complete_pairs(s[r], self.human[d][r]), "spearman")
                         for r in self.rows])

    @staticmethod
    def _agg(per: dict[str, np.ndarray]) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            v = np.nanmean([np.nanmean(x) if len(x) else NAN for x in per.values()]) \
                if per else NAN
        return float(v)

    def value(self, keep: np.ndarray) -> float:
        self.keep = keep.copy()
        self.per = {d: self._dim(d, keep & (self.col_dim == d)) for d in self.dims}
        return self._agg(self.per)

    def without(self, k: int) -> float:
        d = self.col_dim[k]
        if d not in self.per:
            return self._agg(self.per)
        cols = self.keep & (self.col_dim == d)
        cols[k] = False
        return self._agg({**self.per, d: self._dim(d, cols)})
