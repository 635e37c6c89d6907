"""Judge health: the signs that a run's scores cannot carry the chart drawn from them.

A judge that answers "Yes" to nearly everything, gives every output of a document the same
score, tracks output length, or leaves most matches tied makes correlations, rankings and Elo
numbers that look precise and mean little. This module measures those signs per run (and per
dimension) from the stored answers and scores, and turns the ones past a documented
threshold into warnings the pages show above the charts they undermine (and the CLI prints in
``analyze --json`` as ``health``).

Metrics (per run, and per dimension where it applies):

* **invalid share** — answers with no readable verdict / all answers (Likert answers too);
* **Yes share** — Yes among valid Yes/No answers (Likert answers are not Yes/No);
* **never-varying questions** — checklist questions with ≥ ``NEVER_VARY_MIN_ANSWERS`` valid
  answers that are all the same verdict: they cannot separate outputs;
* **spread within groups** — per group (document / context / query) with ≥ 2 scored items,
  the standard deviation of the scores; the mean over groups, and the number of groups whose
  scores are all equal (sample-level correlation skips those);
* **length correlation** — Spearman of the score with the output length in words, beside the
  Spearman of the score with the human score (both over items);
* **system spread** — the span (max − min) of the systems' mean scores, and of the strongest
  half of the systems beside their median standard error over groups (a span below
  :data:`STRONG_SPAN_SE_FACTOR` standard errors leaves their order to chance);
* **coin flips** — Yes/No answers whose p(Yes) lies within ``COIN_FLIP_BAND`` of 0.5: the
  same judge, version and items rerun on another llama.cpp build or CPU moved p(Yes) by up to
  0.044 and flipped such answers, so a figure resting on many of them is partly chance;
* **ties** (when groups hold ≥ 2 systems) — the share of per-group matches (every two systems'
  scores in one group, as the Elo fit and pair accuracy use them) that are ties at the margin
  used, and at the margin derived from the spread (:data:`TIE_MARGIN_IQR_FRACTION` × IQR of
  the item scores).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import sqlite_utils

from checkeval_core.analysis.frames import run_frame
from checkeval_core.runs.never_varying import NEVER_VARY_MIN_ANSWERS
from checkeval_core.runs.traces import COIN_FLIP_BAND
from checkeval_core.stats.bootstrap import enough_groups, minimum
from checkeval_core.stats.correlation import corr
from checkeval_core.stats.ranking import DEFAULT_TIE_MARGIN
from checkeval_core.stats.values import isnan, pct
from checkeval_core.store import rows

NAN = float("nan")

# -- thresholds (documented in docs/methods.md, "Judge health") ---------------------------------
#: Warn when more than this share of answers has no readable verdict.
INVALID_WARN_SHARE = 0.05
#: Warn when the Yes share of valid Yes/No answers is above this (or below 1 − this).
YES_WARN_SHARE = 0.9
#: Warn when more than this share of the run's questions never varies.
NEVER_VARY_WARN_SHARE = 0.25
#: Warn when, in a dimension, more than this share of groups has one score for every item.
CONSTANT_GROUP_WARN_SHARE = 0.5
#: Warn when |ρ(score, output length)| is at least this and larger than |ρ(score, human)|.
LENGTH_WARN_RHO = 0.5
#: Warn when more than this share of matches are ties at the margin used.
TIE_WARN_SHARE = 0.5
#: The spread-derived tie margin: this fraction of the IQR of the run's item scores.
#: RocketEval's 0.1 was set on scores that fill the 0–1 range (IQR about 0.5); 0.2 × IQR keeps
#: that ratio when a judge's scores crowd into a narrow band.
TIE_MARGIN_IQR_FRACTION = 0.2
#: Warn when more than this share of Yes/No answers are coin flips (``COIN_FLIP_BAND``).
COIN_FLIP_WARN_SHARE = 0.05
#: Minimum systems for the "strong systems" span (the top half of the systems by score).
STRONG_MIN_SYSTEMS = 4
#: Warn when the strong systems' span is below this many times their median standard error
#: (over groups): their order is then mostly chance.
STRONG_SPAN_SE_FACTOR = 2.0

THRESHOLDS = {"invalid_share": INVALID_WARN_SHARE, "yes_share": YES_WARN_SHARE,
              "never_vary_min_answers": NEVER_VARY_MIN_ANSWERS,
              "never_vary_share": NEVER_VARY_WARN_SHARE,
              "constant_group_share": CONSTANT_GROUP_WARN_SHARE,
              "length_rho": LENGTH_WARN_RHO, "tie_share": TIE_WARN_SHARE,
              "strong_span_se_factor": STRONG_SPAN_SE_FACTOR,
              "tie_margin_iqr_fraction": TIE_MARGIN_IQR_FRACTION,
              "coin_flip_band": COIN_FLIP_BAND, "coin_flip_share": COIN_FLIP_WARN_SHARE}
#: Which warnings matter for which view (the page shows only those), most undermining first.
CONTEXTS = {"analysis": ("yes_share", "invalid", "constant_groups", "length", "strong_span",
                         "never_varying", "coin_flips"),
            "rankings": ("ties", "strong_span", "yes_share", "invalid", "never_varying",
                         "coin_flips")}


def _answer_stats(db: sqlite_utils.Database, run_id: int
                  ) -> tuple[dict[str, dict[str, int]], dict[int, str], int]:
    """One scan of the run's answers: per dimension the answers, invalid, Yes/No and Yes
    counts; the never-varying questions ``{question_id: verdict}``; and the number of
    questions with ≥ ``NEVER_VARY_MIN_ANSWERS`` valid Yes/No answers."""
    dims: dict[str, dict[str, int]] = {}
    nv: dict[int, str] = {}
    n_questions = 0
    for qid, dim, n, inv, yn, yes in db.execute(
            "SELECT question_id, dimension, COUNT(*), SUM(verdict = 'invalid'), "
            "SUM(verdict IN ('yes', 'no') AND value IS NULL), "
            "SUM(verdict = 'yes' AND value IS NULL) FROM answer WHERE run_id = ? "
            "GROUP BY question_id, dimension", [run_id]):
        d = dims.setdefault(dim, {"n": 0, "invalid": 0, "yes_no": 0, "yes": 0})
        for k, v in (("n", n), ("invalid", inv), ("yes_no", yn), ("yes", yes)):
            d[k] += v or 0
        if qid and (yn or 0) >= NEVER_VARY_MIN_ANSWERS:
            n_questions += 1
            if yes in (0, yn):
                nv[qid] = "yes" if yes else "no"
    return dims, nv, n_questions


def _share(k: int, n: int) -> float:
    return k / n if n else NAN


def tie_stats(scores: pd.DataFrame, margin: float) -> dict[str, Any]:
    """Matches and ties at ``margin`` from per-item scores (columns group, system, score):
    in each group, every two systems' mean scores meet once (as the Elo fit pairs them)."""
    table = scores.groupby(["group", "system"])["score"].mean().unstack("system")
    n, ties = 0, 0
    for _, row in table.iterrows():
        v = row.dropna().to_numpy(float)
        if len(v) < 2:
            continue
        d = np.abs(v[:, None] - v[None, :])[np.triu_indices(len(v), 1)]
        n += len(d)
        ties += int((d < margin).sum())
    return {"n_matches": n, "n_ties": ties, "share": _share(ties, n)}


def derived_tie_margin(scores: pd.Series) -> tuple[float, float]:
    """``(margin, IQR)``: :data:`TIE_MARGIN_IQR_FRACTION` × IQR of the item scores."""
    v = scores.dropna().to_numpy(float)
    if len(v) < 2:
        return NAN, NAN
    iqr = float(np.quantile(v, 0.75) - np.quantile(v, 0.25))
    return TIE_MARGIN_IQR_FRACTION * iqr, iqr


def opening_tie_margin(db: sqlite_utils.Database, run_id: int,
                       aggregation: str | None = None) -> float:
    """The tie margin the Rankings page opens on: the one derived from the run's score spread
    (what the health box recommends), else RocketEval's
    :data:`DEFAULT_TIE_MARGIN`. RocketEval's 0.1 tied 88–99 % of the demo's matches of a
    judge whose scores crowd into a narrow band, while the box recommended 0.02."""
    df, _ = run_frame(db, run_id, aggregation)
    items = df.dropna(subset=["metric"]).groupby("item_pk")["metric"].mean()
    derived, _ = derived_tie_margin(items)
    return float(derived) if not isnan(derived) and derived > 0 else DEFAULT_TIE_MARGIN


def run_health(db: sqlite_utils.Database, run_id: int, aggregation: str | None = None,
               tie_margin: float | None = None) -> dict[str, Any]:
    """The health of one run: metrics per run and per dimension, tie shares, the
    thresholds, and ``warnings`` (``{"code", "dimension", "message"}``) past them.

    ``tie_margin``: the margin the caller uses for Elo / pair accuracy; ``None`` → the
    spread-derived one (the result says which is used in ``ties.margin_source``)."""
    df, meta = run_frame(db, run_id, aggregation)
    df = df.dropna(subset=["metric"])
    lengths = {r["id"]: len((r["output"] or "").split()) for r in rows(
        db, "SELECT i.id, i.output FROM item i WHERE i.id IN (SELECT DISTINCT item_id FROM "
            "score WHERE run_id = ?)", [run_id])}
    ans, nv, n_questions = _answer_stats(db, run_id)
    flips, n_p = db.execute(
        "SELECT COALESCE(SUM(ABS(p_yes - 0.5) < ?), 0), COUNT(*) FROM answer WHERE run_id = ? "
        "AND verdict IN ('yes', 'no') AND value IS NULL AND p_yes IS NOT NULL",
        [COIN_FLIP_BAND, run_id]).fetchone()
    qtext = {}
    if nv:
        qtext = {r["id"]: r for r in rows(
            db, f"SELECT q.id, q.text, d.name AS dimension FROM question q LEFT JOIN dimension "
                f"d ON d.id = q.dimension_id WHERE q.id IN ({','.join('?' * len(nv))})",
            list(nv))}
    tot = {k: sum(a[k] for a in ans.values()) for k in ("n", "invalid", "yes_no", "yes")}
    out: dict[str, Any] = {
        "run": run_id, "aggregation": meta["aggregation"], "judge": meta["judge"],
        "method": meta["method"], "n_answers": tot["n"],
        "n_items": int(df["item_pk"].nunique()), "n_groups": int(df["group"].nunique()),
        "n_systems": int(df["system"].nunique()),
        "invalid_share": _share(tot["invalid"], tot["n"]),
        "yes_share": _share(tot["yes"], tot["yes_no"]), "n_yes_no": tot["yes_no"],
        "never_varying": {
            "n": len(nv), "n_questions": n_questions, "share": _share(len(nv), n_questions),
            "min_answers": NEVER_VARY_MIN_ANSWERS,
            "questions": [{"question_id": q, "verdict": v,
                           "dimension": (qtext.get(q) or {}).get("dimension") or "",
                           "question": (qtext.get(q) or {}).get("text") or ""}
                          for q, v in sorted(nv.items())]},
        "coin_flips": {"n": int(flips), "n_with_p": int(n_p), "band": COIN_FLIP_BAND,
                       "share": _share(int(flips), int(n_p))},
        "dimensions": {}, "thresholds": THRESHOLDS}
    for dim in sorted(set(df["dimension"]) | set(ans)):
        part = df[df["dimension"] == dim]
        a = ans.get(dim, {"n": 0, "invalid": 0, "yes_no": 0, "yes": 0})
        out["dimensions"][dim] = {"n_items": int(part["item_pk"].nunique()),
                                  "n_groups": int(part["group"].nunique()),
                                  "invalid_share": _share(a["invalid"], a["n"]),
                                  "yes_share": _share(a["yes"], a["yes_no"]),
                                  **_spread(part), **_length(part, lengths)}
    out["systems"] = _systems(df)
    out["ties"] = _ties(df, tie_margin, DEFAULT_TIE_MARGIN)
    out["reasons"] = _reasons(out)
    out["warnings"] = warnings_for(out)
    out["warnings_withheld"] = withheld_reason(out["n_groups"])
    return out


def _reasons(h: dict[str, Any]) -> dict[str, str]:
    """Why each undefined run-level number is undefined (the JSON shows ``null``)."""
    s, why = h["systems"], {}
    if isnan(h["invalid_share"]):
        why["invalid_share"] = "the run has no answers yet"
    if isnan(h["yes_share"]):
        why["yes_share"] = ("no Yes/No answers (a Likert run, or none valid)" if h["n_answers"]
                            else "the run has no answers yet")
    if isnan(h["never_varying"]["share"]):
        why["never_varying"] = (f"no question has ≥ {NEVER_VARY_MIN_ANSWERS} valid Yes/No "
                                "answers")
    if isnan(s["span"]):
        why["span"] = f"needs ≥ 2 scored systems (n={s['n']})"
    if isnan(s["strong_span"]):
        why["strong_span"] = f"needs ≥ {STRONG_MIN_SYSTEMS} scored systems (n={s['n']})"
    elif isnan(s["strong_se"]):
        why["strong_se"] = "needs ≥ 2 groups per strong system for a standard error"
    return why


def _spread(part: pd.DataFrame) -> dict[str, Any]:
    v = part["metric"].to_numpy(float)
    sds, constant = [], 0
    for _, g in part.groupby("group"):
        if len(g) < 2:
            continue
        sds.append(float(np.std(g["metric"].to_numpy(float))))
        constant += int(g["metric"].nunique() == 1)
    return {"score_iqr": float(np.quantile(v, 0.75) - np.quantile(v, 0.25)) if len(v) else NAN,
            "score_range": float(v.max() - v.min()) if len(v) else NAN,
            "within_group_sd": float(np.mean(sds)) if sds else NAN,
            "n_multi_groups": len(sds), "constant_groups": constant,
            "spread_reason": None if sds else "no group has ≥ 2 scored items"}


def _length(part: pd.DataFrame, lengths: dict[int, int]) -> dict[str, Any]:
    ln = part["item_pk"].map(lengths).to_numpy(float)
    sc = part["metric"].to_numpy(float)
    rho_len = corr(sc, ln, "spearman")
    hum = part.dropna(subset=["human"])
    rho_h = corr(hum["metric"], hum["human"], "spearman")

    def why(x: np.ndarray, y: np.ndarray, what: str) -> str | None:
        if len(x) < 2:
            return f"needs ≥ 2 items with a score and {what} (n={len(x)})"
        if len(set(x.tolist())) <= 1:
            return "the judge gave every item the same score"
        if len(set(np.asarray(y, float).tolist())) <= 1:
            return f"every item has the same {what}"
        return None

    return {"length_corr": {"spearman": rho_len, "n": len(sc),
                            "reason": why(sc, ln, "output length") if isnan(rho_len) else None},
            "human_corr": {"spearman": rho_h, "n": len(hum),
                           "reason": (why(hum["metric"].to_numpy(float), hum["human"],
                                          "human score") or "undefined")
                           if isnan(rho_h) else None}}


def _systems(df: pd.DataFrame) -> dict[str, Any]:
    """Spread of the systems' mean scores (over groups), of the strongest half, and the
    strongest half's median standard error (sd over groups / √groups)."""
    per_group = df.groupby(["group", "system"])["metric"].mean()
    by_sys = per_group.groupby("system")
    means = by_sys.mean().sort_values(ascending=False)
    se = by_sys.std(ddof=1) / np.sqrt(by_sys.size())
    n = len(means)
    top = means.iloc[: max(2, n // 2)] if n >= STRONG_MIN_SYSTEMS else means.iloc[:0]
    top_se = se.reindex(top.index).dropna()
    return {"n": n, "span": float(means.max() - means.min()) if n >= 2 else NAN,
            "n_strong": len(top),
            "strong_span": float(top.max() - top.min()) if len(top) >= 2 else NAN,
            "strong_se": float(top_se.median()) if len(top_se) else NAN}


def _ties(df: pd.DataFrame, margin: float | None, default: float) -> dict[str, Any]:
    # one score per item as the ranking views use it: the mean over the item's dimensions
    items = df.groupby(["item_pk", "group", "system"], as_index=False)["metric"].mean()
    items = items.rename(columns={"metric": "score"})
    derived, iqr = derived_tie_margin(items["score"])
    used = derived if margin is None else float(margin)
    source = "derived" if margin is None else "given"
    base = {"margin": used, "margin_source": source, "default_margin": default,
            "derived_margin": derived, "score_iqr": iqr,
            "rule": f"derived margin = {TIE_MARGIN_IQR_FRACTION:g} × IQR of the item scores"}
    if not (items.groupby("group")["system"].nunique() >= 2).any():
        return {**base, "n_matches": 0, "n_ties": 0, "share": NAN, "share_at_derived": NAN,
                "reason": "no group holds answers of ≥ 2 systems: no matches"}
    if isnan(used):
        return {**base, "n_matches": 0, "n_ties": 0, "share": NAN, "share_at_derived": NAN,
                "reason": "needs ≥ 2 scored items to derive a margin"}
    at = tie_stats(items, used)
    at_d = tie_stats(items, derived) if not isnan(derived) else {"share": NAN}
    return {**base, **at, "share_at_derived": at_d["share"], "reason": None}


#: Warnings raised whatever the number of groups: a count of the run's own unreadable answers
#: is a fact about those answers, not an estimate about the judge.
ALWAYS = ("invalid", "coin_flips")


def withheld_reason(n_groups: int) -> str | None:
    """Why the judge-health warnings that estimate something about the judge are not raised
    (fewer groups than the floor's :data:`~checkeval_core.stats.bootstrap.MIN_GROUPS`)."""
    if enough_groups(n_groups):
        return None
    return (f"no judge-health warning raised: the run scored {n_groups} groups (documents / "
            f"contexts / queries), fewer than the {minimum()} a warning needs")


def warnings_for(h: dict[str, Any]) -> list[dict[str, Any]]:
    """The health findings past a threshold, each ``{"code", "dimension", "message"}``. On
    fewer than :data:`~checkeval_core.stats.bootstrap.MIN_GROUPS` groups (of the run, or of a
    dimension for its own warnings) only :data:`ALWAYS` warnings are raised."""
    out: list[dict[str, Any]] = []
    few = not enough_groups(h["n_groups"])

    def warn(code: str, message: str, dim: str | None = None) -> None:
        n = h["dimensions"][dim]["n_groups"] if dim else h["n_groups"]
        if code in ALWAYS or (not few and enough_groups(n)):
            out.append({"code": code, "dimension": dim, "message": message})

    if not isnan(h["invalid_share"]) and h["invalid_share"] > INVALID_WARN_SHARE:
        warn("invalid", f"{pct(h['invalid_share'])} of {h['n_answers']} answers are invalid "
                        "(no readable verdict): scores rest on fewer answers than the checklist "
                        f"has (threshold {pct(INVALID_WARN_SHARE)})")
    ys = h["yes_share"]
    if not isnan(ys) and (ys > YES_WARN_SHARE or ys < 1 - YES_WARN_SHARE):
        s = h["systems"]
        ranges = [d["score_range"] for d in h["dimensions"].values()
                  if not isnan(d["score_range"])]
        span = (f"; scores of the strong systems span {s['strong_span']:.2f} "
                f"({s['n_strong']} of {s['n']} systems)" if not isnan(s["strong_span"]) else
                f"; its {h['n_items']} items' scores span {max(ranges, default=0):.2f}")
        word = "Yes" if ys > YES_WARN_SHARE else "No"
        share = ys if word == "Yes" else 1 - ys
        warn("yes_share", f"this judge says {word} to {pct(share)} of questions "
                          f"({h['n_yes_no']} answers){span} — its scores barely separate "
                          f"outputs (threshold {pct(YES_WARN_SHARE)})")
    s = h["systems"]
    if (not isnan(s["strong_span"]) and not isnan(s["strong_se"])
            and s["strong_span"] < STRONG_SPAN_SE_FACTOR * s["strong_se"]):
        warn("strong_span", f"scores of the strong systems span {s['strong_span']:.3f} ({s['n_strong']} "
                            f"of {s['n']} systems), less than {STRONG_SPAN_SE_FACTOR:g} × their "
                            f"standard error over groups ({s['strong_se']:.3f}): their order is "
                            "mostly chance")
    nv = h["never_varying"]
    if not isnan(nv["share"]) and nv["share"] > NEVER_VARY_WARN_SHARE:
        warn("never_varying", f"{nv['n']} of {nv['n_questions']} questions get the same answer "
                              f"on every item (≥ {nv['min_answers']} answers each): they cannot "
                              "separate outputs — Traces lists them under 'never-varying "
                              "questions'")
    for dim, d in h["dimensions"].items():
        g = d["n_multi_groups"]
        if g and d["constant_groups"] / g > CONSTANT_GROUP_WARN_SHARE:
            warn("constant_groups", f"{dim}: in {d['constant_groups']} of {g} groups every item "
                                    "gets the same score — sample-level correlation skips "
                                    "those groups", dim)
        lc, hc = d["length_corr"], d["human_corr"]
        if not isnan(lc["spearman"]) and abs(lc["spearman"]) >= LENGTH_WARN_RHO and (
                isnan(hc["spearman"]) or abs(lc["spearman"]) > abs(hc["spearman"])):
            hum = ("no human correlation" if isnan(hc["spearman"]) else
                   f"ρ = {hc['spearman']:.2f} with the human scores")
            warn("length", f"{dim}: the score follows output length (ρ = {lc['spearman']:.2f}, "
                           f"n = {lc['n']} items) more than the humans ({hum})", dim)
    cf = h.get("coin_flips") or {"share": NAN}
    if not isnan(cf["share"]) and cf["share"] > COIN_FLIP_WARN_SHARE:
        warn("coin_flips", f"{cf['n']} of {cf['n_with_p']} Yes/No answers "
                           f"({pct(cf['share'])}) have p(Yes) within {cf['band']:g} of 0.5: "
                           "a rerun on another build or CPU can flip them (Traces marks them "
                           f"≈); the figures below rest on them (threshold "
                           f"{pct(COIN_FLIP_WARN_SHARE)})")
    t = h["ties"]
    if not isnan(t["share"]) and t["share"] > TIE_WARN_SHARE:
        alt = (f"; the margin derived from the score spread ({t['rule']}, "
               f"{t['derived_margin']:.3g}) gives {pct(t['share_at_derived'])} ties"
               if t["margin_source"] == "given" and not isnan(t["share_at_derived"]) else "")
        warn("ties", f"{t['n_ties']} of {t['n_matches']} matches ({pct(t['share'])}) are ties "
                     f"at the {t['margin_source']} margin {t['margin']:.3g} (item scores' IQR "
                     f"{t['score_iqr']:.3g}): Elo and pair accuracy rest on the few decisive "
                     f"matches{alt}")
    return out


def health_warnings(health: dict[str, dict[str, Any]], context: str,
                    labels: dict[str, str] | None = None) -> list[str]:
    """The warning sentences of several runs' health for one view (``analysis`` or
    ``rankings``), the kinds that undermine that view most first (:data:`CONTEXTS`), each
    prefixed with its run's label when there are several runs."""
    if context not in CONTEXTS:
        raise ValueError(f"context must be one of {', '.join(CONTEXTS)}")
    order = CONTEXTS[context]
    found = []
    for k, (rid, h) in enumerate(health.items()):
        label = (labels or {}).get(str(rid)) or f"run #{rid}"
        for w in h.get("warnings", []):
            if w["code"] in order:
                found.append((order.index(w["code"]), k, f"{label}: {w['message']}"
                              if len(health) > 1 else w["message"]))
    return [m for _, _, m in sorted(found, key=lambda f: f[:2])]


def runs_health(db: sqlite_utils.Database, run_ids: list[int], aggregation: str | None = None,
                tie_margin: float | None = None) -> dict[str, dict[str, Any]]:
    """:func:`run_health` of each run, keyed by the run id as a string (the JSON shape)."""
    return {str(r): run_health(db, r, aggregation, tie_margin) for r in run_ids}

