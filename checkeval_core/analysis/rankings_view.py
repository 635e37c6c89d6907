"""What the Rankings page shows, as plain rows and sentences (no Streamlit here).

The page reads its widgets, calls :func:`rankings_page` (and :func:`pair_view` for the two
answers side by side) and renders the result; the CLI's ``analyze --rankings|--pairs`` uses
the same reports underneath (:mod:`checkeval_core.analysis.rankings`). Every agreement
number comes with what it rests on (pairs, queries, systems) and its interval or the reason
it has none.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.analysis.ranking_charts import correlation_title
from checkeval_core.analysis.rankings import (
    MIN_SYSTEM_VOTES,
    biased_annotators,
    pair_detail,
    pairs_report,
    query_answers,
    rankings_report,
)
from checkeval_core.stats.bootstrap import share_ci
from checkeval_core.stats.values import Figure, nan_to_none, pct

#: Resamples of the queries for the interval of the pairwise accuracy.
PAIR_BOOT = 1000


_v = nan_to_none  # a table cell shows an undefined number blank, never "nan"


def _pct(x: Any) -> str:
    return pct(_v(x), 1)


def group_bootstrap_share(groups: list[str], hits: list[bool], n_boot: int = PAIR_BOOT,
                          seed: int = 0) -> dict[str, Any]:
    """Share of ``hits`` with a percentile interval resampling *groups* (queries): the pairs
    of one query share its answers, so the query is what is drawn
    (:func:`~checkeval_core.stats.bootstrap.share_ci`). ``{"value", "ci", "reason"}``."""
    if not hits:
        return {"value": None, "ci": [None, None], "reason": "no pairs"}
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for g, h in zip(groups, hits):
        per[g][0] += int(h)
        per[g][1] += 1
    sums = np.array(list(per.values()), dtype=float)
    r = share_ci(sums[:, 0], sums[:, 1], n_boot, seed, unit="queries")
    d = r.to_dict()
    return {"value": d["value"], "ci": d["ci"], "reason": r.brief()["reason"]}


def _leaderboard(rep: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"rank": s["rank"], "system": s["system"], "score": _v(s["score"]),
             "CI low": _v(s["ci"][0]), "CI high": _v(s["ci"][1]),
             "reference": _v(s["reference"]), "reference rank": s["reference_rank"],
             "judge Elo": _v(s["elo"]), "queries": s["n_queries"]} for s in rep["systems"]]


def _aggregation_line(rep: dict[str, Any]) -> str | None:
    """ρ / τ of the run's *other* aggregations (the selected one is printed once, above)."""
    others = {a: v for a, v in rep["aggregations"].items() if a != rep["aggregation"]}
    if not others:
        return None
    return "Other aggregations of this run (point estimates, n systems): " + " · ".join(
        f"{a}: ρ {v['spearman']:.2f}, τ {v['kendall']:.2f} (n={v['n']})"
        if _v(v["spearman"]) is not None else f"{a}: {v['reason']}"
        for a, v in others.items())


def _human_cells(s: dict[str, Any] | None, hum: dict[str, Any]) -> dict[str, Any]:
    """A system's human Elo with its interval (queries resampled), or a dash and why."""
    if s is None:
        return {"human Elo": None, "human CI low": None, "human CI high": None,
                "human votes": 0, "human note": "no human vote on this system"}
    why = s.get("reason") or (hum.get("reason") if _v(s["ci"][0]) is None else None)
    shown = s.get("reason") is None
    return {"human Elo": s["rating"] if shown else None,
            "human CI low": _v(s["ci"][0]) if shown else None,
            "human CI high": _v(s["ci"][1]) if shown else None,
            "human votes": s.get("n_votes"), "human note": why or ""}


def _elo(rep: dict[str, Any]) -> dict[str, Any]:
    el, hum = rep["elo"], rep["human_elo"]
    h = {s["system"]: s for s in hum["systems"]}
    table = [{"rank": s["rank"], "system": s["system"], "judge Elo": s["rating"],
              "CI low": _v(s["ci"][0]), "CI high": _v(s["ci"][1]),
              **(_human_cells(h.get(s["system"]), hum) if h else {})} for s in el["systems"]]
    caption = (f"Judge: {el['n_matches']} matches over {el['n_queries']} queries, "
               f"{len(el['systems'])} systems, {el['n_ties']} ties (|Δ| < {rep['tie_margin']});"
               " 1000 = mean, +400 = 10:1 odds."
               + (" A weak prior keeps ratings finite (some system never won or never lost)."
                  if el["regularised"] else ""))
    if h:
        jh = hum["judge_vs_human"]
        rho = f"{jh['spearman']:.2f}" if _v(jh["spearman"]) is not None else "undefined"
        few = sum(bool(s.get("reason")) for s in hum["systems"])
        human = (f"Human: {hum['n_matches']} votes between {len(h)} systems over "
                 f"{hum['n_queries']} queries; each human Elo with its 95% interval (queries "
                 f"resampled), shown only for a system with ≥ {MIN_SYSTEM_VOTES} votes"
                 + (f" ({few} system(s) have too few)" if few else "")
                 + (f"; votes of {', '.join(hum['excluded_annotators'])} left out"
                    if hum.get("excluded_annotators") else "")
                 + (f". Judge score vs human Elo: no ρ — every human Elo above is hidden "
                    f"(no system has ≥ {MIN_SYSTEM_VOTES} votes), and a ρ over them would "
                    "rest on the ratings judged too uncertain to show." if few == len(h) else
                    f". Judge score vs human Elo ρ = {rho} (n = {jh['n']} systems; no "
                    "interval: a point estimate" + (f"; {few} of them with too few votes for "
                                                   "their Elo to be shown" if few else "")
                    + ")" + (f" — {jh['reason']}" if jh.get("reason") else "") + "."))
    else:
        human = hum["reason"]
    return {"rows": table, "caption": caption, "human_caption": human}


def _pairwise(prs: dict[str, Any]) -> dict[str, Any]:
    pairs = prs["pairs"]
    if prs["n_pairs"] == 0:
        return {"n_pairs": 0, "reason": prs["reasons"].get("accuracy")
                or "No human pairwise preferences for this task."}
    decisive = [p for p in pairs if p["gold"] != "tie"]
    acc = group_bootstrap_share([p["group_id"] for p in decisive],
                                [p["correct"] for p in decisive])
    groups = {p["group_id"] for p in decisive}
    systems = {s for p in decisive for s in (p["system_a"], p["system_b"])}
    fig = Figure.from_dict(acc)
    ci = fig.ci_text(1, percent=True, label="95% CI ") + ("" if fig.weak else
                                                          " (queries resampled)")
    conf = prs["confusion"]
    return {
        "n_pairs": prs["n_pairs"],
        "metrics": [("Accuracy (judge ties = misses)", _pct(prs["accuracy"]),
                     prs["reasons"].get("accuracy")),
                    ("Judge tie rate", _pct(prs["tie_rate"]), prs["reasons"].get("tie_rate")),
                    ("Three-way agreement", _pct(prs["three_way"]),
                     prs["reasons"].get("three_way")),
                    ("Pairs", str(prs["n_pairs"]), None)],
        "support": {"n_pairs": prs["n_pairs"], "n_decisive": len(decisive),
                    "n_groups": len(groups), "n_systems": len(systems), "accuracy_ci": acc},
        "support_line": (f"Accuracy over {len(decisive)} decisive pairs (human tie votes "
                         f"left out) on {len(groups)} queries and {len(systems)} systems; "
                         f"{ci}." + (f" {prs['repeated_votes']['note']}."
                                     if prs.get("repeated_votes", {}).get("note") else "")),
        "confusion": {f"human: {g}": {f"judge: {p}": conf[g][p] for p in ("a", "b", "tie")}
                      for g in ("a", "b", "tie")},
        "rows": [{"group": p["group_id"], "A": p["item_a_id"], "B": p["item_b_id"],
                  "system A": p["system_a"], "system B": p["system_b"],
                  "score A": p["score_a"], "score B": p["score_b"], "judge": p["judge"],
                  "human": p["gold"], "agree": "✓" if p["correct"] else "✗",
                  "source": p["source"], "_a": p["item_a"], "_b": p["item_b"]}
                 for p in pairs]}


def _bias_row(s: dict[str, Any]) -> dict[str, Any]:
    return {"annotator": "all annotators" if s["annotator"] is None
            else (s["annotator"] or "(no name)"),
            "votes with order": s["n_ordered"], "ties": s["n_ties"],
            "left chosen": s["n_left"], "non-tie": s["n_decisive"], "left share": s["share"],
            "CI low": s["ci"][0], "CI high": s["ci"][1],
            "note": ("follows position" if s["follows_position"] else "")
            if s["reason"] is None else s["reason"]}


def position_bias_view(pb: dict[str, Any]) -> dict[str, Any]:
    """The position-bias block above the human-vote figures: ``{"warnings", "rows",
    "caption"}`` — the warning sentences, one row per annotator whose votes recorded the
    shown order plus the "all annotators" row (when there are two or more such annotators;
    no rows when no vote recorded the order), and a caption saying what is counted, or why
    nothing is (None when the task has no votes)."""
    overall = pb["overall"]
    if overall["n_votes"] == 0:
        return {"warnings": [], "rows": [], "caption": None}
    if overall["n_ordered"] == 0:
        return {"warnings": [], "rows": [],
                "caption": f"Position bias of the {overall['n_votes']} votes: undefined — "
                           f"{overall['reason']}."}
    shown = [s for s in pb["annotators"] if s["n_ordered"]]
    unordered = overall["n_votes"] - overall["n_ordered"]
    caption = ("Position bias: how often the answer shown on the left (A) was chosen, among "
               "the non-tie votes whose display order was recorded (the page places A at "
               "random, so about 50% is expected); 95% Wilson interval. An interval that "
               "excludes 50% means the votes follow position rather than the answers."
               + (f" {unordered} votes without a recorded order (imported) are not counted."
                  if unordered else ""))
    # one annotator: the overall row would repeat theirs
    every = shown if len(shown) == 1 else [*shown, overall]
    return {"warnings": [s["warning"] for s in every if s["warning"]],
            "rows": [_bias_row(s) for s in every], "caption": caption}


def deciding_pair(db: sqlite_utils.Database, run_id: int, answers: list[dict[str, Any]]
                  ) -> dict[str, Any] | None:
    """A default pair worth opening: the first query (in order) with two systems whose
    answers differ on at least one checklist question — preferring the query's best-scored
    answer against the closest one that differs. ``{"group", "system_a", "system_b",
    "n_differ"}``, or None when no two answers of a query differ anywhere."""
    verdicts: dict[int, dict[tuple[int, str], str]] = defaultdict(dict)
    for r in db.execute("SELECT item_id, question_id, unit, verdict FROM answer WHERE "
                        "run_id = ? AND verdict IN ('yes', 'no')", [run_id]):
        verdicts[r[0]][(r[1], r[2])] = r[3]
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for a in answers:
        by_group[a["group"]].append(a)
    for group, items in by_group.items():
        items = sorted(items, key=lambda a: -(a["score"] if _v(a["score"]) is not None
                                             else -math.inf))
        for i, a in enumerate(items):
            va = verdicts.get(a["item_pk"], {})
            for b in items[i + 1:]:
                vb = verdicts.get(b["item_pk"], {})
                n = sum(1 for k, v in va.items() if k in vb and vb[k] != v)
                if n:
                    return {"group": group, "system_a": a["system"], "system_b": b["system"],
                            "n_differ": n}
    return None


def rankings_page(db: sqlite_utils.Database, run_id: int, aggregation: str,
                  tie_margin: float, reference_source: str | None,
                  n_boot: int = 200, drop_biased: bool = False) -> dict[str, Any]:
    """Everything the Rankings page renders for one run: the leaderboard rows and caption,
    the ρ/τ line (once), Elo tables, pairwise agreement with its support and interval, the
    position bias of the human votes, the answers to pick from and a default pair that
    decides something."""
    prs = pairs_report(db, run_id, aggregation, tie_margin=tie_margin)
    biased = biased_annotators(prs["position_bias"])
    dropped = biased if drop_biased else []
    if dropped:  # the votes of annotators whose votes follow position, left out on request
        prs = pairs_report(db, run_id, aggregation, tie_margin=tie_margin,
                           exclude_annotators=dropped)
    rep = rankings_report(db, run_id, aggregation, tie_margin=tie_margin, n_boot=n_boot,
                          reference_source=reference_source, exclude_annotators=dropped)
    answers = query_answers(db, run_id, aggregation).to_dict("records")
    return {
        "report": rep,
        "leaderboard": _leaderboard(rep),
        "board_caption": (f"{rep['n_systems']} systems × {rep['n_queries']} queries · score = "
                          "mean over queries of the system's answer scores "
                          f"({rep['aggregation']}); 95% interval from resampling queries. "
                          "Select a row to open that system's answers below."),
        "correlation_line": correlation_title(rep) if rep["reference_source"] else None,
        "aggregation_line": _aggregation_line(rep) if rep["reference_source"] else None,
        "elo": _elo(rep),
        "pairwise": _pairwise(prs),
        "position_bias": {**position_bias_view(prs["position_bias"]), "biased": biased,
                          "dropped": dropped, "n_dropped": prs["n_excluded"]},
        "answers": answers,
        "queries": {a["group"]: a["query"] for a in answers},
        "default_pair": deciding_pair(db, run_id, answers),
    }


def systems_of(view: dict[str, Any], group: str) -> dict[str, int]:
    """``{system: item pk}`` of one query's scored answers (best score first)."""
    return {a["system"]: int(a["item_pk"]) for a in view["answers"] if a["group"] == group}


def pair_view(db: sqlite_utils.Database, run_id: int, item_a: int, item_b: int,
              aggregation: str | None) -> dict[str, Any]:
    """Two answers side by side: :func:`~checkeval_core.analysis.rankings.pair_detail` plus
    the rows of its question table (deciding questions first) and a summary line."""
    d = pair_detail(db, run_id, item_a, item_b, aggregation)
    qs = d["questions"]
    d["rows"] = [{"decided": "◆" if q["differs"] else "", "question": q["text"],
                  "A": q["verdict_a"], "p(Yes) A": q["p_yes_a"], "B": q["verdict_b"],
                  "p(Yes) B": q["p_yes_b"], "Δ p(Yes)": q["p_yes_delta"]} for q in qs]
    d["summary"] = (f"{d['n_differ']} of {len(d['questions'])} checklist questions got "
                    "different answers (◆): those decided between A and B.")
    if not d["n_differ"]:
        d["summary"] += (" These two answers got the same Yes/No everywhere: their scores "
                         "differ only by p(Yes), so the checklist does not separate them.")
    return d
