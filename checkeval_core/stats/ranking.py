"""Ranking statistics as pure functions (RocketEval's setting): Bradley–Terry / Elo fits,
rank correlations of system scores with a reference rating, list-level bootstrap over queries,
agreement of judge outcomes with human pairwise preferences, and how well one Yes/No answer
orders the pairs people ranked (:func:`pairs_ordered`, :func:`separation`). The store-reading
reports built on
them are :mod:`checkeval_core.analysis.rankings` (whose docstring states the definitions).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from checkeval_core.stats.bootstrap import (
    interval_reason,
    nanmean_rows,
    percentile_ci,
    resample_index,
    share_ci,
)
from checkeval_core.stats.correlation import is_constant
from checkeval_core.stats.values import Figure

NAN = float("nan")
ELO_SCALE = 400.0 / math.log(10.0)
ELO_MEAN = 1000.0
REG_FALLBACK = 0.01
DEFAULT_TIE_MARGIN = 0.1
OUTCOMES = ("a", "b", "tie")


def outcome_value(w: str | float) -> float:
    """``a`` → 1, ``b`` → 0, ``tie`` → 0.5 (numbers in [0, 1] pass through)."""
    if isinstance(w, str):
        try:
            return {"a": 1.0, "b": 0.0, "tie": 0.5}[w]
        except KeyError:
            raise ValueError(f"unknown match outcome {w!r}; use a, b or tie") from None
    x = float(w)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"match outcome {w!r} is not in [0, 1]")
    return x


def judge_outcome(score_a: float, score_b: float, tie_margin: float = DEFAULT_TIE_MARGIN) -> str:
    """``a`` / ``b`` / ``tie`` from two scores (tie when ``|Δ| < tie_margin``)."""
    d = score_a - score_b
    if abs(d) < tie_margin:
        return "tie"
    return "a" if d > 0 else "b"


def win_matrix(matches: Iterable[tuple[str, str, str | float]],
               players: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]:
    """``W[i, j]`` = wins of i over j, ties counting half for each side."""
    ms = [(a, b, outcome_value(w)) for a, b, w in matches]
    names = list(players) if players is not None else sorted({p for a, b, _ in ms for p in (a, b)})
    index = {p: i for i, p in enumerate(names)}
    w = np.zeros((len(names), len(names)))
    for a, b, s in ms:
        if a == b:
            continue
        w[index[a], index[b]] += s
        w[index[b], index[a]] += 1.0 - s
    return names, w


def strongly_connected(w: np.ndarray) -> bool:
    """Whether every player beat (or tied) someone who beat them, transitively: the
    condition for a finite Bradley–Terry MLE (Zermelo / Ford)."""
    if len(w) <= 1:
        return True
    n, _ = connected_components(csr_matrix(w > 0), directed=True, connection="strong")
    return n == 1


def _objective(w: np.ndarray, theta: np.ndarray, reg: float) -> float:
    d = theta[:, None] - theta[None, :]
    return float(-(w * np.logaddexp(0.0, -d)).sum() - 0.5 * reg * theta @ theta)


def fit_bt(w: np.ndarray, reg: float = 0.0, max_iter: int = 200) -> tuple[np.ndarray, bool]:
    """Bradley–Terry log-strengths θ (centred) by maximum likelihood; ``reg`` = L2 prior on θ.

    Newton's method on the concave log-likelihood (its Hessian is a weighted graph
    Laplacian; the constant direction is pinned by centring) with step halving. With
    ``reg == 0`` and a match graph that is not strongly connected, the MLE does not exist;
    ``REG_FALLBACK`` is used instead. Returns ``(θ, regularised)``."""
    n = len(w)
    if n == 0:
        return np.zeros(0), False
    regularised = reg > 0
    if reg == 0 and not strongly_connected(w):
        reg, regularised = REG_FALLBACK, True
    games = w + w.T
    theta = np.zeros(n)
    f = _objective(w, theta, reg)
    ones = np.full((n, n), 1.0 / n)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        grad = (w - games * p).sum(axis=1) - reg * theta
        c = games * p * (1.0 - p)
        hess = np.diag(c.sum(axis=1)) - c + reg * np.eye(n) + ones  # −Hessian, + pin
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while True:
            cand = theta + t * step
            fc = _objective(w, cand, reg)
            if fc >= f - 1e-12:
                break
            t /= 2
            if t < 1e-8:  # no ascent left: at the optimum up to rounding
                return theta, regularised
        theta, f = cand - cand.mean(), fc
        if np.max(np.abs(t * step)) < 1e-10:
            break
    return theta, regularised


def to_elo(theta: np.ndarray) -> np.ndarray:
    """Log-strengths → Elo scale (mean 1000, 400 points per factor 10 in odds), rounded to
    1e-6 so systems with identical records tie exactly instead of by rounding noise."""
    return np.round(ELO_MEAN + ELO_SCALE * (np.asarray(theta) - np.mean(theta)), 6)


def bradley_terry(matches: Iterable[tuple[str, str, str | float]], reg: float = 0.0
                  ) -> dict[str, float]:
    """Elo-scale Bradley–Terry ratings from matches ``(player_a, player_b, outcome)``
    (outcome ``a``/``b``/``tie`` or a number: 1 = a wins, 0.5 = tie)."""
    names, w = win_matrix(matches)
    if not names:
        return {}
    theta, _ = fit_bt(w, reg)
    return dict(zip(names, to_elo(theta).tolist()))


def score_matches(table: pd.DataFrame, tie_margin: float = DEFAULT_TIE_MARGIN
                  ) -> list[tuple[str, str, str]]:
    """Matches from a queries × systems score table: in each query, every two systems with a
    score meet once (RocketEval's match simulator)."""
    out = []
    cols = list(table.columns)
    for _, row in table.iterrows():
        for i in range(len(cols)):
            for j in range(i + 1, len(cols)):
                a, b = row.iloc[i], row.iloc[j]
                if pd.notna(a) and pd.notna(b):
                    out.append((cols[i], cols[j], judge_outcome(float(a), float(b), tie_margin)))
    return out


def rank_of(scores: pd.Series) -> pd.Series:
    """1 = highest; equal scores share the smallest rank; NaN stays NaN."""
    return scores.rank(ascending=False, method="min")


def rank_correlation(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """Spearman ρ and Kendall τ-b of two aligned vectors, with a reason when undefined."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    n = int(len(x))
    reason = None
    if n < 3:
        reason = f"needs ≥ 3 systems with both a score and a reference rating (have {n})"
    elif is_constant(x):
        reason = "the judge gives every system the same score"
    elif is_constant(y):
        reason = "the reference rating is the same for every system"
    if reason:
        return {"spearman": NAN, "kendall": NAN, "n": n, "reason": reason}
    return {"spearman": float(stats.spearmanr(x, y)[0]),
            "kendall": float(stats.kendalltau(x, y, variant="b")[0]), "n": n, "reason": None}


def batch_rank_correlation(x: np.ndarray, y: Sequence[float]) -> dict[str, np.ndarray]:
    """:func:`rank_correlation` for every row of ``x`` against ``y`` at once (bootstrap
    resamples): Spearman as the Pearson correlation of average ranks, Kendall τ-b from the
    signs of all pairwise differences. Rows with a missing value use :func:`rank_correlation`;
    undefined values are NaN."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    y = np.asarray(y, dtype=float)
    keep = ~np.isnan(y)
    x, y = x[:, keep], y[keep]
    b, k = x.shape
    rho, tau = np.full(b, NAN), np.full(b, NAN)
    if k < 3 or is_constant(y):
        return {"spearman": rho, "kendall": tau}
    full = ~np.isnan(x).any(axis=1)
    for r in np.flatnonzero(~full):
        rc = rank_correlation(x[r], y)
        rho[r], tau[r] = rc["spearman"], rc["kendall"]
    xs = x[full]
    rx = stats.rankdata(xs, axis=1)
    ry = stats.rankdata(y)
    rx_c = rx - rx.mean(axis=1, keepdims=True)
    ry_c = ry - ry.mean()
    den = np.sqrt((rx_c ** 2).sum(axis=1) * (ry_c ** 2).sum())
    i, j = np.triu_indices(k, 1)
    dx = np.sign(xs[:, i] - xs[:, j])
    dy = np.sign(y[i] - y[j])
    n0 = len(i)
    tden = np.sqrt((n0 - (dx == 0).sum(axis=1)) * (n0 - (dy == 0).sum()))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho[full] = np.where(den > 0, (rx_c * ry_c).sum(axis=1) / den, NAN)
        tau[full] = np.where(tden > 0, (dx * dy).sum(axis=1) / tden, NAN)
    return {"spearman": rho, "kendall": tau}


def list_level(table: pd.DataFrame, reference: dict[str, float], n_boot: int = 1000,
               seed: int = 0) -> dict[str, Any]:
    """System scores (mean over queries), ranks and their agreement with ``reference``.

    ``table``: queries × systems, one score per cell (NaN = no answer). Returns
    ``{"systems": DataFrame(system, score, ci_low, ci_high, rank, n_queries),
    "spearman": Figure, "kendall": Figure}`` where each coefficient is a
    :class:`~checkeval_core.stats.values.Figure` (interval: bootstrap over queries;
    ``n_systems`` = the systems with both a score and a reference, ``n_groups`` = queries)."""
    vals = table.to_numpy(dtype=float)
    systems = list(table.columns)
    score = nanmean_rows(vals, 0) if len(vals) else np.full(len(systems), NAN)
    ref = np.array([reference.get(s, NAN) for s in systems], dtype=float)
    point = rank_correlation(score, ref)
    ci_reason = interval_reason(len(table), n_boot, "queries")
    if ci_reason:
        boot_scores = np.full((0, len(systems)), NAN)
    else:
        idx = resample_index(len(table), n_boot, seed)
        boot_scores = nanmean_rows(vals[idx], 1)
    sys_ci = [percentile_ci(boot_scores[:, k]) for k in range(len(systems))]
    coefs: dict[str, Figure] = {}
    boots = batch_rank_correlation(boot_scores, ref) if point["reason"] is None else {}
    for c in ("spearman", "kendall"):
        ci = percentile_ci(boots[c]) if boots else [NAN, NAN]
        coefs[c] = Figure(point[c], ci, reason=point["reason"],
                          ci_reason=point["reason"] or (ci_reason if math.isnan(ci[0]) else None),
                          n_systems=point["n"], n_groups=len(table))
    df = pd.DataFrame({"system": systems, "score": score,
                       "ci_low": [c[0] for c in sys_ci], "ci_high": [c[1] for c in sys_ci],
                       "n_queries": table.notna().sum(axis=0).to_numpy()})
    df["rank"] = rank_of(df["score"])
    return {"systems": df, **coefs}


def elo_fit(group_matches: dict[str, list[tuple[str, str, str | float]]],
            players: Sequence[str] | None = None, n_boot: int = 1000, seed: int = 0
            ) -> dict[str, Any]:
    """Bradley–Terry Elo from matches grouped by query, with bootstrap CIs over queries.

    Returns ``{"ratings": {p: r}, "ci": {p: [lo, hi]}, "n_matches", "n_ties",
    "regularised", "reason", "boot": {p: resampled ratings}}``."""
    all_m = [m for ms in group_matches.values() for m in ms]
    names = list(players) if players is not None else sorted(
        {p for a, b, _ in all_m for p in (a, b)})
    n_ties = sum(1 for _, _, w in all_m if outcome_value(w) == 0.5)
    base = {"n_matches": len(all_m), "n_ties": n_ties, "n_queries": len(group_matches)}
    if len(names) < 2 or not all_m:
        return {**base, "ratings": {}, "ci": {}, "regularised": False, "boot": {},
                "reason": "needs matches between ≥ 2 systems"}
    per_group = np.stack([win_matrix(ms, names)[1] for ms in group_matches.values()])
    theta, regularised = fit_bt(per_group.sum(axis=0))
    elo = to_elo(theta)
    ci: dict[str, list[float]] = {p: [NAN, NAN] for p in names}
    boots: dict[str, np.ndarray] = {}
    reason = interval_reason(len(per_group), n_boot, "queries")
    if reason is None:
        idx = resample_index(len(per_group), n_boot, seed)
        boot = np.array([to_elo(fit_bt(per_group[i].sum(axis=0))[0]) for i in idx])
        ci = {p: percentile_ci(boot[:, k]) for k, p in enumerate(names)}
        boots = {p: boot[:, k] for k, p in enumerate(names)}
    return {**base, "ratings": dict(zip(names, elo.tolist())), "ci": ci,
            "regularised": regularised, "reason": reason, "boot": boots}


def pair_agreement(gold: Sequence[str], pred: Sequence[str]) -> dict[str, Any]:
    """Agreement of judge outcomes with gold outcomes (each ``a``/``b``/``tie``).

    ``accuracy``: over pairs whose gold is ``a``/``b``, share the judge got right (a judge tie
    is a miss); ``tie_rate``: share of all pairs the judge calls a tie; ``three_way``: share of
    all pairs with the same outcome, only when the gold has ties; ``confusion[gold][pred]``."""
    if len(gold) != len(pred):
        raise ValueError("gold and pred differ in length")
    conf = {g: {p: 0 for p in OUTCOMES} for g in OUTCOMES}
    for g, p in zip(gold, pred):
        conf[g][p] += 1
    n = len(gold)
    decisive = [(g, p) for g, p in zip(gold, pred) if g != "tie"]
    gold_ties = n - len(decisive)
    out: dict[str, Any] = {"n_pairs": n, "n_decisive": len(decisive), "n_gold_ties": gold_ties,
                           "confusion": conf, "reasons": {}}
    if decisive:
        out["accuracy"] = sum(g == p for g, p in decisive) / len(decisive)
    else:
        out["accuracy"] = NAN
        out["reasons"]["accuracy"] = ("no pairs" if n == 0 else
                                      "every gold label is a tie")
    out["tie_rate"] = (sum(p == "tie" for p in pred) / n) if n else NAN
    if n == 0:
        out["reasons"]["tie_rate"] = "no pairs"
    if gold_ties:
        out["three_way"] = sum(g == p for g, p in zip(gold, pred)) / n
    else:
        out["three_way"] = NAN
        out["reasons"]["three_way"] = ("no pairs" if n == 0 else
                                       "the gold has no ties (two-way accuracy applies)")
    return out


# -- how well one question's answers order the outputs people ranked -------------------------------
def pairs_ordered(groups: Sequence[Any], human: Sequence[float], answer: Sequence[float]
                  ) -> tuple[list[Any], np.ndarray]:
    """Per group (in order of first appearance), over the pairs of its items whose human scores
    differ, ``[ordered, reversed, tied, pairs]``: ``ordered`` when the item people scored
    higher has the higher answer (Yes = 1, No = 0, or a p(Yes)), ``reversed`` when the lower
    one has, ``tied`` when both answers are equal. Items whose answer is NaN (invalid) are left
    out. Pairs are formed within a group only: two outputs on the same source."""
    by: dict[Any, list[tuple[float, float]]] = {}
    for g, h, a in zip(groups, human, answer):
        if not (math.isnan(float(h)) or math.isnan(float(a))):
            by.setdefault(g, []).append((float(h), float(a)))
        else:
            by.setdefault(g, [])
    keys = list(by)
    out = np.zeros((len(keys), 4))
    for k, g in enumerate(keys):
        its = by[g]
        for i in range(len(its)):
            for j in range(i + 1, len(its)):
                (h1, a1), (h2, a2) = its[i], its[j]
                if h1 == h2:
                    continue
                hi, lo = (a1, a2) if h1 > h2 else (a2, a1)
                out[k, 0 if hi > lo else 1 if hi < lo else 2] += 1
                out[k, 3] += 1
    return keys, out


def separation(per_group: np.ndarray, n_boot: int, seed: int = 0) -> dict[str, Any]:
    """The share of pairs ordered (a within-group AUC: ties count one half; 0.5 = the answer
    says nothing about which output people preferred, 1 = it always picks the one people
    scored higher, below 0.5 = it picks the worse one) from :func:`pairs_ordered`'s sums, with
    the floor's group-resampled interval (:func:`~checkeval_core.stats.bootstrap.share_ci`;
    none below ``MIN_GROUPS`` groups with pairs). ``{"value", "ci", "reason", "n_groups",
    "n_pairs", "ordered", "reversed", "tied"}``."""
    c = np.asarray(per_group, float).reshape(-1, 4)
    c = c[c[:, 3] > 0]  # a group without a ranked pair says nothing
    tot = c.sum(0)
    base = {"n_groups": int(len(c)), "n_pairs": int(tot[3]), "ordered": int(tot[0]),
            "reversed": int(tot[1]), "tied": int(tot[2])}
    if not len(c):
        return {**base, "value": NAN, "ci": [NAN, NAN],
                "reason": "no pair of outputs on one source that people scored differently"}
    sh = share_ci(c[:, 0] + 0.5 * c[:, 2], c[:, 3], n_boot, seed,
                  unit="groups with a pair people scored differently")
    return {**base, **sh.brief()}
