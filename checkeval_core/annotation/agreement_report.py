"""Agreement among human annotators and between humans and each judge run.

A *unit* is one (item, question) answered Yes/No (``unsure`` is excluded). Among humans:
Krippendorff's α (nominal) and Fleiss' κ (units with the most common number of annotators).
Humans vs a judge: the human side of a unit is the majority answer of its annotators (a tie
is left out; a coordinator's settled answer replaces it); Cohen's κ and α between that and
the run's verdicts.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.analysis.agreement import cohen_kappa, fleiss_from_labels, krippendorff_alpha
from checkeval_core.analysis.report import item_groups
from checkeval_core.store import task_id


def agreement_report(db: sqlite_utils.Database, task: str,
                     run_ids: list[int] | None = None) -> dict[str, Any]:
    tid = task_id(db, task)
    human: dict[tuple[int, int], dict[str, str]] = defaultdict(dict)
    for r in db.execute("SELECT annotator, item_id, question_id, value FROM annotation WHERE "
                        "task_id = ? AND kind = 'answer' AND value IN ('yes', 'no')", [tid]):
        human[(r[1], r[2])][r[0]] = r[3]
    annotators = sorted({a for v in human.values() for a in v})
    multi = [u for u, v in human.items() if len(v) >= 2]
    code = {"yes": 1.0, "no": 0.0}
    mat = [[code[human[u][a]] if a in human[u] else np.nan for u in multi] for a in annotators]
    hh = {"krippendorff_alpha": krippendorff_alpha(mat) if multi else math.nan,
          "fleiss_kappa": fleiss_from_labels([list(human[u].values()) for u in multi])[0],
          "n_units": len(multi), **_support(db, multi)}
    majority: dict[tuple[int, int], str] = {}
    for u, v in human.items():
        vals = list(v.values())
        y, n = vals.count("yes"), vals.count("no")
        if y != n:
            majority[u] = "yes" if y > n else "no"
    # a coordinator's settled answer replaces the majority (adjudication wins)
    for r in db.execute("SELECT adj.item_id, adj.question_id, adj.value FROM adjudication adj "
                        "JOIN annotation_job j ON j.id = adj.job_id WHERE j.task_id = ?", [tid]):
        majority[(r[0], r[1])] = r[2]
    hj: dict[str, Any] = {}
    runs = run_ids
    if runs is None:
        runs = [r[0] for r in db.execute("SELECT id FROM run WHERE task_id = ? AND status = "
                                         "'completed' ORDER BY id", [tid])]
    specs = {r[0]: r[1] for r in db.execute(
        f"SELECT id, judge_spec FROM run WHERE id IN ({','.join('?' * len(runs))})", runs)} \
        if runs else {}
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
        hj[key] = {"run": rid, "cohen_kappa": cohen_kappa(h, j),
                   "krippendorff_alpha": krippendorff_alpha([[code[x] for x in h],
                                                             [code[x] for x in j]])
                   if common else math.nan, "n_units": len(common), **_support(db, common)}
    per_question = []
    by_q: dict[int, list[list[str]]] = defaultdict(list)
    for u in multi:
        by_q[u[1]].append(list(human[u].values()))
    for qid, units in sorted(by_q.items()):
        per_question.append({"question_id": qid, "n_units": len(units),
                             "percent_agreement": float(np.mean([len(set(x)) == 1
                                                                 for x in units])),
                             "fleiss_kappa": fleiss_from_labels(units)[0]})
    return {"human_human": hh, "human_judge": hj, "annotators": annotators,
            "per_question": per_question, "likert": human_vs_likert(db, tid)}


def _support(db: sqlite_utils.Database, units: list[tuple[int, int]]) -> dict[str, Any]:
    """What an agreement figure rests on: the items, groups (documents / contexts / queries)
    and systems of its (item, question) units (no interval is computed for these)."""
    where = item_groups(db, {u[0] for u in units})
    return {"n_items": len(where), "n_groups": len({g for g, _ in where.values()}),
            "n_systems": len({s for _, s in where.values()})}


def human_vs_likert(db: sqlite_utils.Database, tid: int) -> dict[str, Any]:
    """CheckEval Table 5: per dimension, the human *checklist* score of an item (share of Yes
    over all its annotators' Yes/No answers) against the benchmark's Likert human score;
    dataset-level Spearman and Pearson over the annotated items."""
    from checkeval_core.analysis.correlation import corr

    share: dict[tuple[int, str], list[int]] = defaultdict(list)
    for r in db.execute("SELECT a.item_id, d.name, a.value FROM annotation a JOIN question q ON "
                        "q.id = a.question_id JOIN dimension d ON d.id = q.dimension_id WHERE "
                        "a.task_id = ? AND a.kind = 'answer' AND a.value IN ('yes', 'no')",
                        [tid]):
        share[(r[0], r[1])].append(r[2] == "yes")
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
