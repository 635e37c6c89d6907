"""Ranking models with a checklist judge, against human preferences (RocketEval's setting).

List level (many systems answer the same queries):

* **system score** = mean over queries (groups) of the system's answer scores in that query,
  for one aggregation of the run (an item's score is its ``overall`` dimension score, or the
  mean over its dimensions when the checklist has several);
* **rank** 1 = best (ties share the smallest rank);
* **Kendall τ-b and Spearman ρ** (``scipy.stats``) between system scores and a reference
  rating (e.g. Chatbot Arena Elo), with a percentile bootstrap interval that resamples
  *queries* with replacement;
* **RocketEval's Elo**: per query, every two systems' answer scores become a match (tie when
  ``|Δ| < tie_margin``, default 0.1); a Bradley–Terry model is fitted by maximum likelihood
  (ties = half a win for each side) and expressed on the Elo scale:
  ``rating = 1000 + 400/ln 10 · (θ − mean θ)`` — the mean rating is 1000 and 400 points are a
  10:1 odds ratio (Chatbot Arena's convention). When the match graph is not strongly connected
  (a system that never wins or never loses) the MLE is infinite; a weak Gaussian prior
  (``REG_FALLBACK`` on θ) keeps the ratings finite and the result says ``regularised``.
  Intervals: bootstrap over queries. The same fit runs on human pairwise preferences.

Instance level (human votes between two answers to one query): the judge prefers the higher
score (tie when ``|Δ| < tie_margin``); **accuracy** over pairs whose gold is not a tie, counting
a judge tie as a miss; **tie rate** = share of all judged pairs the judge calls a tie;
**three-way agreement** (a/b/tie) when the gold has ties; the 3×3 confusion table.

Edge cases (every undefined number is ``NaN`` with a ``reason``): no reference ratings, fewer
than 3 systems with both a score and a reference, constant scores or constant references,
fewer than 2 queries (no interval), no preferences, gold without ties (no three-way number).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import sqlite_utils

from checkeval_core.annotation.position_bias import position_bias
from checkeval_core.annotation.preferences import rating_sources, ratings, repeated_votes
from checkeval_core.people import people_votes
from checkeval_core.runs.registry import primary_aggregation
from checkeval_core.stats.bootstrap import (
    percentile_ci,
)
from checkeval_core.stats.ranking import (
    DEFAULT_TIE_MARGIN,
    NAN,
    batch_rank_correlation,
    elo_fit,
    judge_outcome,
    list_level,
    pair_agreement,
    rank_correlation,
    rank_of,
    score_matches,
)
from checkeval_core.stats.values import Figure
from checkeval_core.store import NotFound, loads, rows
from checkeval_core.task_split import filter_frame, in_part, part_members, split_note

#: Human votes a system needs before its human Elo is shown: below it the Bradley–Terry
#: rating mostly reflects the weak prior (20 votes over 12 systems gave 220 … 2,015).
MIN_SYSTEM_VOTES = 5

# -- from the store ------------------------------------------------------------------------------
def _run(db: sqlite_utils.Database, run_id: int) -> dict[str, Any]:
    r = rows(db, "SELECT r.id, r.task_id, t.name AS task, r.judge_spec, r.method, r.params, "
                 "r.status FROM run r JOIN task t ON t.id = r.task_id WHERE r.id = ?", [run_id])
    if not r:
        raise NotFound(f"no run {run_id}")
    run = r[0]
    run["params"] = loads(run["params"], {})
    return run


def item_scores(db: sqlite_utils.Database, run_id: int) -> pd.DataFrame:
    """One row per (item, aggregation): item_pk, item_id, group, system, aggregation, score."""
    df = pd.DataFrame(rows(db, "SELECT s.item_id AS item_pk, i.item_id, i.group_id AS "
                               '"group", i.system_id AS system, s.dimension, s.aggregation, '
                               "s.value FROM score s JOIN item i ON i.id = s.item_id WHERE "
                               "s.run_id = ? AND s.value IS NOT NULL", [run_id]),
                      columns=["item_pk", "item_id", "group", "system", "dimension",
                               "aggregation", "value"])
    cols = ["item_pk", "item_id", "group", "system", "aggregation", "score"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    has_overall = df.assign(o=df["dimension"] == "overall").groupby(
        ["item_pk", "aggregation"])["o"].transform("any")
    df = df[~has_overall | (df["dimension"] == "overall")]
    out = df.groupby(["item_pk", "item_id", "group", "system", "aggregation"],
                     as_index=False)["value"].mean()
    return out.rename(columns={"value": "score"})[cols]


def _aggregation(run: dict[str, Any], scores: pd.DataFrame, aggregation: str | None) -> str:
    available = sorted(scores["aggregation"].unique().tolist())
    if not available:
        raise ValueError(f"run {run['id']} has no scores yet (status {run['status']})")
    agg = aggregation or primary_aggregation(run)
    if agg not in available:
        if aggregation:
            raise ValueError(f"run {run['id']} has no aggregation {aggregation!r}; it has "
                             f"{', '.join(available)}")
        agg = "mean_p_yes" if "mean_p_yes" in available else available[0]
    return agg


def score_table(scores: pd.DataFrame, aggregation: str) -> pd.DataFrame:
    """Queries × systems: mean score of the system's answer(s) in each query."""
    part = scores[scores["aggregation"] == aggregation]
    return part.groupby(["group", "system"])["score"].mean().unstack("system").sort_index()


def system_scores(db: sqlite_utils.Database, run_id: int, aggregation: str | None = None
                  ) -> pd.DataFrame:
    """Per aggregation (all of the run's, or one) and system: score = mean over queries, rank,
    n_queries, n_items."""
    sc = item_scores(db, run_id)
    if aggregation is not None:
        sc = sc[sc["aggregation"] == aggregation]
    out = []
    for agg, part in sc.groupby("aggregation"):
        t = score_table(part, agg)
        df = pd.DataFrame({"aggregation": agg, "system": t.columns,
                           "score": t.mean(axis=0).to_numpy(),
                           "n_queries": t.notna().sum(axis=0).to_numpy()})
        df["n_items"] = df["system"].map(part.groupby("system").size())
        df["rank"] = rank_of(df["score"])
        out.append(df.sort_values(["rank", "system"]))
    cols = ["aggregation", "system", "score", "rank", "n_queries", "n_items"]
    return pd.concat(out, ignore_index=True)[cols] if out else pd.DataFrame(columns=cols)


def _list_coef(f: Figure, no_ref: str | None) -> dict[str, Any]:
    """A list-level coefficient in the report's JSON shape ``{"value", "ci", "n", "reason"}``."""
    b = f.brief()
    return {**b, "n": f.n_systems, "reason": no_ref or b["reason"]}


def _reference(db: sqlite_utils.Database, run: dict[str, Any], source: str | None
               ) -> tuple[str | None, dict[str, dict[str, Any]]]:
    srcs = rating_sources(db, run["task"])
    if source is None:
        if not srcs:
            return None, {}
        source = srcs[0]
    elif source not in srcs:
        raise ValueError(f"task {run['task']!r} has no reference ratings {source!r}"
                         + (f"; it has {', '.join(srcs)}" if srcs else ""))
    return source, {r["system_id"]: r for r in ratings(db, run["task"], source)}


def _human_matches(db: sqlite_utils.Database, task_id: int, systems: set[str] | None = None,
                   exclude_annotators: Sequence[str] = ()
                   ) -> dict[str, list[tuple[str, str, str]]]:
    """Per query, the people's votes between two systems as matches ``(system a, system b,
    winner)`` (:func:`checkeval_core.people.people_votes`: every vote is a match, a ``tie``
    vote a draw), without the excluded annotators' votes."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for v in people_votes(db, task_id):
        if not v.system_a or not v.system_b or v.system_a == v.system_b \
                or v.annotator in exclude_annotators:
            continue
        if systems is not None and (v.system_a not in systems or v.system_b not in systems):
            continue
        out.setdefault(v.group, []).append((v.system_a, v.system_b, v.winner))
    return out


def _coef(value: float, ci: list[float], n: int, reason: str | None) -> dict[str, Any]:
    return {"value": value, "ci": ci, "n": n, "reason": reason}


def _elo_block(fit: dict[str, Any], ref_values: dict[str, float], no_ref: str | None
               ) -> dict[str, Any]:
    names = sorted(fit["ratings"], key=lambda p: -fit["ratings"][p])
    ranks = rank_of(pd.Series(fit["ratings"], dtype=float))
    systems = [{"system": p, "rating": fit["ratings"][p], "ci": fit["ci"][p],
                "rank": int(ranks[p])} for p in names]
    rc = rank_correlation([fit["ratings"][p] for p in names],
                          [ref_values.get(p, NAN) for p in names])
    reason = no_ref or rc["reason"]
    ci = {"spearman": [NAN, NAN], "kendall": [NAN, NAN]}
    if reason is None and fit["boot"]:
        bc = batch_rank_correlation(np.column_stack([fit["boot"][p] for p in names]),
                                    [ref_values.get(p, NAN) for p in names])
        ci = {c: percentile_ci(bc[c]) for c in ci}
    return {"systems": systems, "n_matches": fit["n_matches"], "n_ties": fit["n_ties"],
            "n_queries": fit["n_queries"], "regularised": fit["regularised"],
            "reason": fit["reason"],
            "spearman": _coef(rc["spearman"], ci["spearman"], rc["n"], reason),
            "kendall": _coef(rc["kendall"], ci["kendall"], rc["n"], reason)}


def rankings_report(db: sqlite_utils.Database, run_id: int, aggregation: str | None = None,
                    tie_margin: float = DEFAULT_TIE_MARGIN, n_boot: int = 1000, seed: int = 0,
                    reference_source: str | None = None, split: str = "all",
                    exclude_annotators: Sequence[str] = ()) -> dict[str, Any]:
    """The list-level report of one run (the ``analyze --rankings --json`` output);
    ``split``: only the queries and systems of the task's ``dev`` or ``heldout`` part;
    ``exclude_annotators``: human votes of these annotators are left out of the human Elo."""
    if tie_margin < 0:
        raise ValueError("--tie-margin must be ≥ 0")
    run = _run(db, run_id)
    sc = filter_frame(db, run["task"], item_scores(db, run_id), split)
    if sc.empty and split != "all":
        raise ValueError(f"run {run_id} scored no answer of the {split} part of the split")
    agg = _aggregation(run, sc, aggregation)
    table = score_table(sc, agg)
    source, ref = _reference(db, run, reference_source)
    ref_values = {s: float(r["rating"]) for s, r in ref.items()}
    no_ref = None if ref else ("no reference ratings for this task (import them with "
                               "`checkeval ratings import FILE --task NAME`)")
    if ref and not set(ref) & set(table.columns):
        no_ref = "no system of this run has a reference rating (check the system ids)"
    ll = list_level(table, ref_values, n_boot=n_boot, seed=seed)
    group_m = {str(g): score_matches(table.loc[[g]], tie_margin) for g in table.index}
    fit = elo_fit(group_m, list(table.columns), n_boot=n_boot, seed=seed)
    elo = {**_elo_block(fit, ref_values, no_ref), "tie_margin": tie_margin}
    human = _human_matches(db, run["task_id"], None if split == "all" else set(table.columns),
                           exclude_annotators)
    if split != "all":
        human = {g: m for g, m in human.items() if g in set(map(str, table.index))}
    if human:
        hfit = elo_fit(human, n_boot=n_boot, seed=seed)
        human_elo = _elo_block(hfit, ref_values, no_ref)
        judge = [ll["systems"].set_index("system")["score"].get(s["system"], NAN)
                 for s in human_elo["systems"]]
        rc = rank_correlation(judge, [s["rating"] for s in human_elo["systems"]])
        human_elo["judge_vs_human"] = {"spearman": rc["spearman"], "kendall": rc["kendall"],
                                       "n": rc["n"], "reason": rc["reason"]}
        votes: dict[str, int] = {}
        for a, b, _ in (m for ms in human.values() for m in ms):
            votes[a], votes[b] = votes.get(a, 0) + 1, votes.get(b, 0) + 1
        for s_ in human_elo["systems"]:
            n = s_["n_votes"] = votes.get(s_["system"], 0)
            s_["reason"] = (f"too few votes: {n} (a rating needs ≥ {MIN_SYSTEM_VOTES})"
                            if n < MIN_SYSTEM_VOTES else None)
    else:
        human_elo = {"systems": [], "n_matches": 0,
                     "reason": "no human pairwise preferences between systems for this task "
                               "(import them with `checkeval preferences import FILE --task "
                               "NAME`)"}
    systems = []
    for r in ll["systems"].sort_values(["rank", "system"]).to_dict("records"):
        s = r["system"]
        rf = ref.get(s, {})
        systems.append({
            "system": s, "score": r["score"], "rank": None if math.isnan(r["rank"]) else
            int(r["rank"]), "ci": [r["ci_low"], r["ci_high"]], "n_queries": int(r["n_queries"]),
            "reference": rf.get("rating", NAN) if rf else NAN,
            "reference_lower": rf.get("lower") if rf else None,
            "reference_upper": rf.get("upper") if rf else None,
            "elo": fit["ratings"].get(s, NAN), "elo_ci": fit["ci"].get(s, [NAN, NAN])})
    ref_ranks = rank_of(pd.Series({s["system"]: s["reference"] for s in systems}, dtype=float))
    for s in systems:
        v = ref_ranks.get(s["system"], NAN)
        s["reference_rank"] = None if math.isnan(v) else int(v)
    per_agg = {}
    for a in sorted(sc["aggregation"].unique()):
        t = score_table(sc, a)
        rc = rank_correlation(t.mean(axis=0).to_numpy(),
                              [ref_values.get(s, NAN) for s in t.columns])
        per_agg[a] = {"spearman": rc["spearman"], "kendall": rc["kendall"], "n": rc["n"],
                      "reason": no_ref or rc["reason"]}
    return {"run": run_id, "task": run["task"], "judge": run["judge_spec"],
            "method": run["method"], "aggregation": agg, "tie_margin": tie_margin,
            "n_boot": n_boot, "seed": seed, "reference_source": source,
            "n_queries": int(len(table)), "n_systems": int(len(table.columns)),
            "systems": systems,
            **{c: _list_coef(ll[c], no_ref) for c in ("spearman", "kendall")},
            "elo": elo, "human_elo": {**human_elo,
                                      "excluded_annotators": sorted(exclude_annotators)},
            "aggregations": per_agg,
            "split": split_note(db, run["task"], split)}


def biased_annotators(pb: dict[str, Any]) -> list[str]:
    """The annotators whose votes follow position (:func:`position_bias`'s
    ``follows_position``), by name."""
    return [a["annotator"] for a in pb["annotators"] if a["follows_position"]]


def pairs_report(db: sqlite_utils.Database, run_id: int, aggregation: str | None = None,
                 tie_margin: float = DEFAULT_TIE_MARGIN, split: str = "all",
                 exclude_annotators: Sequence[str] = ()) -> dict[str, Any]:
    """Instance-level agreement of a run with the task's human pairwise preferences (the
    ``analyze --pairs --json`` output); ``pairs`` lists every judged pair. ``split``: only
    the pairs whose two answers are both in the task's ``dev`` or ``heldout`` part.
    ``position_bias``: how often the answer shown on the left won, per annotator and overall,
    over every vote of the task (of the split part), whether or not the run scored its
    answers (:func:`checkeval_core.annotation.position_bias.position_bias`)."""
    if tie_margin < 0:
        raise ValueError("--tie-margin must be ≥ 0")
    run = _run(db, run_id)
    members = part_members(db, run["task"], split)
    sc = item_scores(db, run_id)
    agg = _aggregation(run, sc, aggregation)
    score = sc[sc["aggregation"] == agg].set_index("item_pk")["score"].to_dict()
    prefs = rows(db, "SELECT p.id, p.group_id, p.item_a, p.item_b, ia.item_id AS item_a_id, "
                     "ib.item_id AS item_b_id, ia.system_id AS system_a, ib.system_id AS "
                     "system_b, p.winner, p.source, p.annotator, p.shown_first FROM preference "
                     "p JOIN item ia ON ia.id = p.item_a JOIN item ib ON ib.id = p.item_b "
                     "WHERE p.task_id = ? ORDER BY p.id", [run["task_id"]])
    if members is not None:
        prefs = [p for p in prefs if all(in_part(p["group_id"], p[f"system_{s}"], split, *members)
                                         for s in "ab")]
    bias = position_bias(prefs)  # over every vote: it says whose votes to leave out
    n_all = len(prefs)
    prefs = [p for p in prefs if (p["annotator"] or "") not in exclude_annotators]
    pairs, skipped = [], 0
    for p in prefs:
        a, b = score.get(p["item_a"]), score.get(p["item_b"])
        if a is None or b is None:
            skipped += 1
            continue
        pred = judge_outcome(a, b, tie_margin)
        pairs.append({**p, "score_a": a, "score_b": b, "delta": a - b, "judge": pred,
                      "gold": p["winner"], "correct": pred == p["winner"]})
    ag = pair_agreement([p["gold"] for p in pairs], [p["judge"] for p in pairs])
    if not prefs:
        msg = (f"every one of the {n_all} votes is left out (annotators excluded: "
               f"{', '.join(sorted(exclude_annotators))})" if n_all else
               "no human pairwise preferences for this task (import them with `checkeval "
               "preferences import FILE --task NAME`)")
        ag["reasons"] = {k: msg for k in ("accuracy", "tie_rate", "three_way")}
    elif not pairs:
        msg = "the run scored none of the preference pairs' answers"
        ag["reasons"] = {k: msg for k in ("accuracy", "tie_rate", "three_way")}
    return {"run": run_id, "task": run["task"], "judge": run["judge_spec"],
            "method": run["method"], "aggregation": agg, "tie_margin": tie_margin,
            "n_preferences": len(prefs), "n_skipped": skipped, **ag, "pairs": pairs,
            "split": split_note(db, run["task"], split), "position_bias": bias,
            "repeated_votes": repeated_votes(prefs),
            "excluded_annotators": sorted(exclude_annotators),
            "n_excluded": n_all - len(prefs)}


def _item(db: sqlite_utils.Database, task_id: int, ref: int | str) -> dict[str, Any]:
    if isinstance(ref, int) or (isinstance(ref, str) and ref.isdigit() and not rows(
            db, "SELECT 1 FROM item WHERE task_id = ? AND item_id = ?", [task_id, ref])):
        r = rows(db, "SELECT * FROM item WHERE task_id = ? AND id = ?", [task_id, int(ref)])
    else:
        r = rows(db, "SELECT * FROM item WHERE task_id = ? AND item_id = ?", [task_id, ref])
    if not r:
        raise NotFound(f"the run's task has no item {ref!r}")
    return r[0]


def pair_detail(db: sqlite_utils.Database, run_id: int, item_a: int | str, item_b: int | str,
                aggregation: str | None = None) -> dict[str, Any]:
    """Two answers of one run side by side: each checklist question's verdict and p(Yes) for
    A and for B, and which questions differ (the ones that decided the comparison).

    ``item_a``/``item_b``: internal ids (int) or the user's item ids (str)."""
    run = _run(db, run_id)
    a, b = _item(db, run["task_id"], item_a), _item(db, run["task_id"], item_b)
    sc = item_scores(db, run_id)
    agg = _aggregation(run, sc, aggregation) if not sc.empty else aggregation
    sc_agg = sc[sc["aggregation"] == agg].set_index("item_pk")["score"].to_dict()
    ans = rows(db, "SELECT a.item_id, a.question_id, a.unit, a.dimension, a.verdict, a.p_yes, "
                   "q.text, q.position FROM answer a LEFT JOIN question q ON q.id = "
                   "a.question_id WHERE a.run_id = ? AND a.item_id IN (?, ?) ORDER BY "
                   "q.position, a.question_id, a.unit", [run_id, a["id"], b["id"]])
    qs: dict[tuple[int, str], dict[str, Any]] = {}
    for r in ans:
        key = (r["question_id"], r["unit"])
        q = qs.setdefault(key, {"question_id": r["question_id"], "unit": r["unit"],
                                "dimension": r["dimension"], "text": r["text"] or "",
                                "verdict_a": None, "p_yes_a": None, "verdict_b": None,
                                "p_yes_b": None})
        side = "a" if r["item_id"] == a["id"] else "b"
        q[f"verdict_{side}"], q[f"p_yes_{side}"] = r["verdict"], r["p_yes"]
    questions = list(qs.values())
    for q in questions:
        q["differs"] = (q["verdict_a"] is not None and q["verdict_b"] is not None
                        and q["verdict_a"] != q["verdict_b"])
        pa, pb = q["p_yes_a"], q["p_yes_b"]
        q["p_yes_delta"] = (pa - pb) if pa is not None and pb is not None else None

    def side(it: dict[str, Any]) -> dict[str, Any]:
        return {"item_pk": it["id"], "item_id": it["item_id"], "group_id": it["group_id"],
                "system": it["system_id"], "output": it["output"],
                "score": sc_agg.get(it["id"])}

    pref = rows(db, "SELECT winner, source, annotator, item_a FROM preference WHERE task_id = ? "
                    "AND ((item_a = ? AND item_b = ?) OR (item_a = ? AND item_b = ?))",
                [run["task_id"], a["id"], b["id"], b["id"], a["id"]])
    human = []
    for p in pref:
        w = p["winner"]
        if p["item_a"] != a["id"] and w != "tie":
            w = "b" if w == "a" else "a"
        human.append({"winner": w, "source": p["source"], "annotator": p["annotator"]})
    return {"run": run_id, "aggregation": agg, "query": a["source"],
            "same_query": a["group_id"] == b["group_id"], "a": side(a), "b": side(b),
            "questions": questions, "n_differ": sum(q["differs"] for q in questions),
            "human": human}


def query_answers(db: sqlite_utils.Database, run_id: int, aggregation: str | None = None
                  ) -> pd.DataFrame:
    """Every scored answer of the run: item_pk, item_id, group, query (the item's source
    text), system, score (one aggregation), sorted by query then score — for picking a query
    and two systems."""
    run = _run(db, run_id)
    sc = item_scores(db, run_id)
    if sc.empty:
        return pd.DataFrame(columns=["item_pk", "item_id", "group", "query", "system", "score"])
    agg = _aggregation(run, sc, aggregation)
    part = sc[sc["aggregation"] == agg].drop(columns=["aggregation"])
    src = {r[0]: r[1] for r in db.execute("SELECT id, source FROM item WHERE task_id = ?",
                                          [run["task_id"]])}
    part = part.assign(query=part["item_pk"].map(src).fillna(""))
    part = part[["item_pk", "item_id", "group", "query", "system", "score"]]
    return part.sort_values(["group", "score"], ascending=[True, False]).reset_index(drop=True)
