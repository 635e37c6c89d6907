"""Agreement among human annotators and between humans and each judge run.

A *unit* is one (item, question) answered Yes/No (``unsure`` is excluded). The answers are
read by :func:`checkeval_core.people.people_answers`, as every view reads them. Among humans:
Krippendorff's α (nominal) and Fleiss' κ (units with the most common number of annotators).
Humans vs a judge: the human side of a unit is the people's label (a coordinator's settled
answer, else the majority of its annotators; an unsettled tie is left out); Cohen's κ and α
between that and the run's verdicts. Only answers to questions on the item's own checklist
count (on a per-query checklist, another query's questions are not the item's).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.people import PeopleAnswer, people_answers
from checkeval_core.stats.agreement import (
    AGREEMENT_BOOT,
    alpha_binary_ci,
    cohen_kappa,
    fleiss_from_labels,
    krippendorff_alpha,
)
from checkeval_core.stats.bootstrap import group_bootstrap, minimum
from checkeval_core.stats.correlation import corr
from checkeval_core.stats.values import NAN, Figure, pct
from checkeval_core.store import task_id
from checkeval_core.tasks import item_groups


def _own_answers(db: sqlite_utils.Database, tid: int,
                 people: dict[tuple[int, int], PeopleAnswer]) -> list[dict[str, Any]]:
    """The task's human Yes/No answers (one per annotator, questions on their item's own
    checklist, :func:`~checkeval_core.people.people_answers`), each with its dimension."""
    dim = {r[0]: r[1] for r in db.execute("SELECT q.id, d.name FROM question q JOIN dimension d "
                                          "ON d.id = q.dimension_id WHERE q.task_id = ?", [tid])}
    return [{"annotator": a, "item_pk": pk, "question_id": qid, "dimension": dim[qid],
             "value": v} for (pk, qid), p in people.items() if qid in dim
            for a, v in p.answers.items()]


def _human_note(human: dict[tuple[int, int], dict[str, str]],
                multi: list[tuple[int, int]]) -> str:
    """Why α/κ among annotators are undefined ('' when they are defined)."""
    if not multi:
        n_ans = sum(len(v) for v in human.values())
        return ("no (item, question) has Yes/No answers from two or more annotators yet "
                f"({n_ans} answers so far): α and κ need items shared by annotators (overlap ≥ 2)")
    values = {x for u in multi for x in human[u].values()}
    if len(values) == 1:
        return (f"every answer on the {len(multi)} shared units is {next(iter(values))!r}: "
                "chance agreement is 1, so α and κ are undefined")
    return ""


def _pair_note(human: list[str], judge: list[str]) -> str:
    """Why humans-vs-judge κ/α are undefined ('' when they are not)."""
    if not human:
        return "no shared unit: annotate items this run answered"
    agree = f"raw agreement {sum(a == b for a, b in zip(human, judge))}/{len(human)}"
    hs, js = set(human), set(judge)
    if len(hs | js) == 1:
        return f"all answers {next(iter(hs))!r}: undefined (chance agreement is 1); {agree}"
    if len(js) == 1 or len(hs) == 1:
        who = "the judge" if len(js) == 1 else "the humans"
        val = next(iter(js if len(js) == 1 else hs))
        return (f"{who} always {val!r}: κ undefined (it would be 0 whatever the other side "
                f"said); {agree}")
    return ""


def group_interval(units: list[Any], group_of: dict[Any, Any], stat: Any,
                   n_boot: int = AGREEMENT_BOOT, seed: int = 0) -> dict[str, Any]:
    """95% percentile interval of ``stat(units)`` resampling *groups* (documents / contexts /
    queries) through the statistics floor: the (item, question) units of one document are
    not independent, so the document is what is drawn. Below the floor's minimum number of
    groups there is no interval. ``{"ci": [lo, hi], "reason": why there is none or None}``."""
    by_group: dict[Any, list[Any]] = defaultdict(list)
    for u in units:
        by_group[group_of.get(u[0])].append(u)
    groups = list(by_group.values())
    boot = group_bootstrap(len(groups), lambda pick: stat([u for i in pick for u in groups[i]]),
                           n_boot, seed, vectorised=False)
    if boot.reason:
        return {"ci": [math.nan, math.nan],
                "reason": f"no interval: too few units ({len(units)} on {len(groups)} group(s); "
                          f"needs ≥ {minimum()} groups — documents / contexts / queries)"}
    if len(boot.values) < max(2, n_boot // 2):
        return {"ci": [math.nan, math.nan],
                "reason": "no interval: undefined in most resamples (the answers barely vary)"}
    return {"ci": boot.ci(), "reason": None}


def agreement_report(db: sqlite_utils.Database, task: str,
                     run_ids: list[int] | None = None) -> dict[str, Any]:
    tid = task_id(db, task)
    people = people_answers(db, tid)
    human = {u: dict(p.answers) for u, p in people.items() if p.answers}
    answers = _own_answers(db, tid, people)
    annotators = sorted({a for v in human.values() for a in v})
    multi = [u for u, v in human.items() if len(v) >= 2]
    code = {"yes": 1.0, "no": 0.0}
    mat = [[code[human[u][a]] if a in human[u] else np.nan for u in multi] for a in annotators]
    group_of = {pk: g for pk, (g, _) in item_groups(db, {u[0] for u in human}).items()}

    def fleiss(units: list[tuple[int, int]]) -> float:
        return fleiss_from_labels([list(human[u].values()) for u in units])[0]

    alpha_ci = alpha_binary_ci({u: human[u] for u in multi}, {u: group_of[u[0]] for u in multi})
    kappa_ci = group_interval(multi, group_of, fleiss)
    hh = {"krippendorff_alpha": krippendorff_alpha(mat) if multi else math.nan,
          "fleiss_kappa": fleiss(multi), "n_units": len(multi), **_support(db, multi),
          "ci": {"krippendorff_alpha": alpha_ci["ci"], "fleiss_kappa": kappa_ci["ci"]},
          "ci_reasons": {"krippendorff_alpha": alpha_ci["reason"],
                         "fleiss_kappa": kappa_ci["reason"]}}
    # the people's label: a coordinator's settled answer, else the majority (a tie: none)
    majority = {u: p.label for u, p in people.items() if p.label is not None}
    hj: dict[str, Any] = {}
    runs = run_ids
    if runs is None:
        runs = [r[0] for r in db.execute("SELECT id FROM run WHERE task_id = ? AND status = "
                                         "'completed' ORDER BY id", [tid])]
    specs, methods = {}, {}
    if runs:
        for r in db.execute(f"SELECT id, judge_spec, method FROM run WHERE id IN "
                            f"({','.join('?' * len(runs))})", runs):
            specs[r[0]], methods[r[0]] = r[1], r[2]
    dup = {s for s in specs.values() if list(specs.values()).count(s) > 1}
    for rid in runs:
        judge = {(r[0], r[1]): r[2] for r in db.execute(
            "SELECT item_id, question_id, verdict FROM answer WHERE run_id = ? AND unit = '' "
            "AND verdict IN ('yes', 'no')", [rid])}
        common = [u for u in majority if u in judge]
        h = [majority[u] for u in common]
        j = [judge[u] for u in common]
        key = specs.get(rid, str(rid))
        if key in dup:
            key = f"run {rid}: {key}"
        pair = dict(zip(common, zip(h, j)))
        note = _pair_note(h, j)
        kappa_ci = ({"ci": [math.nan, math.nan], "reason": "no interval: " + note.split(";")[0]}
                    if note else group_interval(common, group_of, lambda us, p=pair: cohen_kappa(
                        [p[u][0] for u in us], [p[u][1] for u in us])))
        hj[key] = {"run": rid, "method": methods.get(rid, ""), "cohen_kappa": cohen_kappa(h, j),
                   "cohen_kappa_ci": kappa_ci["ci"], "cohen_kappa_ci_reason": kappa_ci["reason"],
                   "krippendorff_alpha": krippendorff_alpha([[code[x] for x in h],
                                                             [code[x] for x in j]])
                   if common else math.nan, "n_units": len(common), "note": note,
                   **_support(db, common)}
    per_question = []
    by_q: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for u in multi:
        by_q[u[1]].append(u)
    texts = {r[0]: r[1] for r in db.execute("SELECT id, text FROM question WHERE task_id = ?",
                                            [tid])}
    for qid, units in sorted(by_q.items()):
        ci = group_interval(units, group_of, fleiss)
        per_question.append({"question_id": qid, "question": texts.get(qid, ""),
                             "n_units": len(units),
                             "n_groups": len({group_of.get(u[0]) for u in units}),
                             "percent_agreement": float(np.mean([len(set(human[u].values()))
                                                                 == 1 for u in units])),
                             "fleiss_kappa": fleiss(units), "ci": ci["ci"],
                             "ci_reason": ci["reason"]})
    return {"human_human": hh, "human_note": _human_note(human, multi),
            "human_judge": hj, "annotators": annotators,
            "per_question": per_question, "likert": human_vs_likert(db, tid, answers)}


def _support(db: sqlite_utils.Database, units: list[tuple[int, int]]) -> dict[str, Any]:
    """What an agreement figure rests on: the items, groups (documents / contexts / queries)
    and systems of its (item, question) units (no interval is computed for these)."""
    where = item_groups(db, {u[0] for u in units})
    return {"n_items": len(where), "n_groups": len({g for g, _ in where.values()}),
            "n_systems": len({s for _, s in where.values()})}


def human_vs_likert(db: sqlite_utils.Database, tid: int,
                    answers: list[dict[str, Any]]) -> dict[str, Any]:
    """CheckEval Table 5: per dimension, the human *checklist* score of an item (share of Yes
    over all its annotators' Yes/No answers) against the benchmark's Likert human score;
    dataset-level Spearman and Pearson over the annotated items. ``answers``: the task's own
    human Yes/No answers (:func:`_own_answers`)."""
    share: dict[tuple[int, str], list[int]] = defaultdict(list)
    for r in answers:
        share[(r["item_pk"], r["dimension"])].append(r["value"] == "yes")
    likert = {(r[0], r[1]): r[2] for r in db.execute(
        "SELECT hs.item_id, hs.dimension, hs.value FROM human_score hs JOIN item i ON "
        "i.id = hs.item_id WHERE i.task_id = ? AND hs.annotator = ''", [tid])}
    out: dict[str, Any] = {}
    for dim in sorted({d for _, d in share}):
        keys = [k for k in share if k[1] == dim and k in likert]
        x = [float(np.mean(share[k])) for k in keys]
        y = [likert[k] for k in keys]
        out[dim] = {"spearman": corr(x, y, "spearman"), "pearson": corr(x, y, "pearson"),
                    "n": len(keys)}
    return out


def stat_text(value: float | None) -> str:
    """A κ/α/ρ for display: three decimals, or ``undefined`` (the row's note says why)."""
    return "undefined" if value is None or math.isnan(value) else f"{value:.3f}"


def ci_text(ci: list[float], reason: str | None) -> str:
    """``[0.12, 0.58]`` (95%, groups resampled), or why there is no interval."""
    return Figure(NAN, None if reason else ci, ci_reason=reason).ci_text(2)


def _with_ci(value: float, ci: list[float], reason: str | None) -> str:
    """A κ/α in a sentence with its interval or the reason it has none."""
    if value is None or math.isnan(value):
        return "undefined"
    return f"{value:.3f} " + (f"(95% CI {ci_text(ci, None)}, groups resampled)"
                              if not reason else f"({reason})")


def _question_row(r: dict[str, Any]) -> dict[str, Any]:
    """A per-question row: κ with its interval, or a dash and why there is none (a κ on one
    unit of one document — e.g. −1.000 — says nothing)."""
    k, reason = r["fleiss_kappa"], r["ci_reason"]
    if math.isnan(k):
        note = ("all answers the same: undefined" if r["percent_agreement"] == 1 else
                "needs equally many annotators per unit")
    else:
        note = reason or ""
    return {"question": r["question"], "units": r["n_units"], "groups": r["n_groups"],
            "agreement": pct(r["percent_agreement"]),
            "Fleiss κ": None if math.isnan(k) or reason else round(k, 3),
            "95% CI": None if math.isnan(k) or reason else ci_text(r["ci"], None),
            "note": note}


def agreement_view(db: sqlite_utils.Database, task: str) -> dict[str, Any]:
    """What the Annotation jobs page shows, every number with its sample size and every
    undefined one with its reason: ``summary`` (a sentence), ``judges``, ``per_question``
    and ``likert`` (rows) and ``likert_note`` (why there is no Likert comparison, or '')."""
    rep = agreement_report(db, task)
    hh = rep["human_human"]
    ci, why = hh["ci"], hh["ci_reasons"]
    summary = (f"Among {len(rep['annotators'])} annotators, {hh['n_units']} (item, question) "
               f"units answered Yes/No by two or more, on {hh['n_items']} items of "
               f"{hh['n_groups']} groups: Krippendorff α = "
               + _with_ci(hh["krippendorff_alpha"], ci["krippendorff_alpha"],
                          why["krippendorff_alpha"])
               + ", Fleiss κ = " + _with_ci(hh["fleiss_kappa"], ci["fleiss_kappa"],
                                            why["fleiss_kappa"])
               + (f" — {rep['human_note']}" if rep["human_note"] else ""))
    judges = [{"judge": k, "method": v["method"], "run": v["run"], "units": v["n_units"],
               "groups": v["n_groups"], "Cohen κ": stat_text(v["cohen_kappa"]),
               "κ 95% CI": "" if math.isnan(v["cohen_kappa"]) else
               ci_text(v["cohen_kappa_ci"], v["cohen_kappa_ci_reason"]),
               "Krippendorff α": stat_text(v["krippendorff_alpha"]), "note": v["note"]}
              for k, v in rep["human_judge"].items()]
    per_question = [_question_row(r) for r in rep["per_question"]]
    has_scores = db.execute("SELECT 1 FROM human_score hs JOIN item i ON i.id = hs.item_id "
                            "WHERE i.task_id = ? AND hs.annotator = '' LIMIT 1",
                            [task_id(db, task)]).fetchone() is not None
    likert = [{"dimension": d, "items": v["n"], "Spearman ρ": stat_text(v["spearman"]),
               "Pearson r": stat_text(v["pearson"]),
               "note": "" if not math.isnan(v["spearman"]) else
               f"needs ≥ 2 annotated items with a human score ({v['n']} so far)" if v["n"] < 2
               else f"one side constant over the {v['n']} items: undefined"} for d, v in rep["likert"].items()]
    likert_note = ""
    if not has_scores:
        likert, likert_note = [], ("This task has no human scores (benchmark Likert ratings), "
                                   "so the human checklist scores cannot be compared with them.")
    elif not likert:
        likert_note = "No human checklist answers yet to compare with the human scores."
    return {"summary": summary, "judges": judges, "per_question": per_question,
            "likert": likert, "likert_note": likert_note}
