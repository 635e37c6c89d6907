"""Weights of a proposal's kept questions (optional), fitted on dev items only.

Non-negative ridge per dimension on dev items — NNLS on the within-group centred answers
stacked over ``sqrt(λ)·I`` (λ = :data:`RIDGE` × items), target the human score or the system's
rating centred within its group; from pairwise votes, NNLS of the vote (±1) on the two
answers' difference per question over dev pairs. In the ranking setting per-query questions get
weights per query, fitted on the dev systems' answers to that query (RocketEval's per-query
supervised predictor, labels: the systems' ratings). Otherwise weights need questions shared by
the groups (a held-out query has no dev answer to fit its own on) and human scores or ratings;
without them, null with the reason.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from checkeval_core.analysis.proposal.evidence import NAN, Evidence, question_unit

RIDGE = 0.1


def fit_weights(ev: Evidence, keep: np.ndarray, penalty: float = RIDGE
                ) -> tuple[np.ndarray | None, str | None]:
    """Non-negative ridge weights of the kept questions on dev items (see the module doc):
    per dimension, and per query for per-query questions in the ranking setting (RocketEval's
    per-query predictor: the dev systems' answers to that query, labelled with their rating)."""
    per_query = any(q["group_id"] for q in ev.questions)
    if per_query and not ev.ranking:
        return None, ("no weights: per-query questions are each answered on one query only, "
                      "so a held-out query has no dev answer to fit its weights on")
    if ev.kind == "preferences":
        return _pair_weights(ev, keep, penalty)
    dev = ev.items["dev"].to_numpy(bool)
    groups = ev.items["group"].to_numpy()
    w = np.zeros(len(ev.questions))
    for dim, gid in dict.fromkeys(question_unit(q) for q in ev.questions):
        cols = np.where(keep & np.array([question_unit(q) == (dim, gid) for q in ev.questions]))[0]
        if ev.kind == "human_scores":
            y = ev.human.get(dim, np.full(len(dev), NAN))
        else:
            y = ev.items["system"].map(ev.ratings).to_numpy(float)
        ok = dev & ~np.isnan(y) & ((groups == gid) if gid else True)
        if ok.sum() < 3 or not len(cols):
            w[cols] = 1.0
            continue
        X = ev.V[np.ix_(ok, cols)]
        with warnings.catch_warnings():  # an all-invalid column is expected: it becomes 0.5
            warnings.simplefilter("ignore", RuntimeWarning)
            col = np.nan_to_num(np.nanmean(X, axis=0), nan=0.5)
        X = np.where(np.isnan(X), col, X)
        yy, g = y[ok].copy(), groups[ok]
        for gv in set(g):
            m = g == gv
            X[m] -= X[m].mean(0)
            yy[m] -= yy[m].mean()
        lam = penalty * len(yy)
        A = np.vstack([X, math.sqrt(lam) * np.eye(len(cols))])
        b = np.concatenate([yy, np.zeros(len(cols))])
        coef, _ = nnls(A, b)
        w[cols] = coef if coef.sum() > 0 else 1.0
    return w, None


def _pair_weights(ev: Evidence, keep: np.ndarray, penalty: float
                  ) -> tuple[np.ndarray | None, str | None]:
    """Weights from pairwise votes: NNLS of the vote (+1: the first answer won, −1: the
    second) on the difference of the two answers' values per kept question, over the dev
    pairs, stacked over ``sqrt(λ)·I`` (λ = ``penalty`` × pairs); a missing value counts as no
    difference. All zero: equal weights."""
    pairs = ev.pairs if ev.pairs is not None else pd.DataFrame(columns=["a", "b", "winner"])
    dev = ev.items["dev"].to_numpy(bool)
    p = pairs[[bool(dev[a] and dev[b]) for a, b in zip(pairs["a"], pairs["b"])]]
    cols = np.where(keep)[0]
    if len(p) < 3:
        return None, f"no weights: {len(p)} decisive dev pair(s), fewer than 3 to fit on"
    V = ev.V[:, cols]
    X = np.nan_to_num(V[p["a"].to_numpy(int)] - V[p["b"].to_numpy(int)])
    y = np.where(p["winner"].to_numpy() == "a", 1.0, -1.0)
    lam = penalty * len(y)
    coef, _ = nnls(np.vstack([X, math.sqrt(lam) * np.eye(len(cols))]),
                   np.concatenate([y, np.zeros(len(cols))]))
    w = np.zeros(len(ev.questions))
    w[cols] = coef if coef.sum() > 0 else 1.0
    return w, None
