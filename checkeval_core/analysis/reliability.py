"""How stable each question's verdict is when only the wording of the prompt changes.

CheckEval's claim is that binary questions give stable answers. This module measures it per
question: the same checklist version, judge, method and items are run k times, each run asked
with another rewording of the instructions (run option ``phrasing``, see
:mod:`checkeval_core.runs.options`), and the k answers to each (item, question) are compared.

Definitions (``docs/methods.md`` → *Reliability of each question*):

* An item **counts** for a question when every one of the k runs has an answer to it that is
  ``yes`` or ``no`` (an ``invalid`` answer or a judge error in any run leaves the item out;
  those items are counted in ``n_invalid``). ``n_items`` = the items that count.
* **flip rate** = share of the counted items whose k verdicts are not all the same, with a
  Wilson 95% interval.
* **p_yes_sd** = the pooled within-item standard deviation of the answer value across runs,
  ``sqrt(Σ_i Σ_r (v_ir − v̄_i)² / (n_items · (k − 1)))``, where ``v`` is the normalised p(Yes)
  when the answer has one, else 1 / 0 from the verdict (as ``mean_p_yes`` scores it); its 95%
  interval is a percentile bootstrap over items (1,000 resamples, seed 0).
* A question is **unreliable** when its flip rate is above ``max_flip`` (default
  :data:`DEFAULT_MAX_FLIP` = 0.10: its verdict changes on more than one item in ten when only
  the wording of the instructions changes, so its answer says more about the prompt than about
  the text). Questions with no counted item are never called unreliable (no evidence), nor
  those whose items come from fewer than the floor's ``MIN_GROUPS`` groups (``flag_reason``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.checklists.versions import version_by_id
from checkeval_core.runs.jobs import get_run
from checkeval_core.runs.options import requested
from checkeval_core.runs.registry import method as method_entry
from checkeval_core.runs.score_math import answer_value
from checkeval_core.stats.bootstrap import (
    enough_groups,
    group_bootstrap,
    minimum,
    ratio_of_sums,
    wilson_ci,
)
from checkeval_core.store import item_column, loads

#: The flip rate above which a question is called unreliable (``checkeval reliability``,
#: proposals) and flagged "unstable" in the Analysis page's question diagnostics: its verdict
#: changes on more than one item in ten when only the wording of the instructions changes.
DEFAULT_MAX_FLIP = 0.10
# the options the runs of a reliability set may differ in (everything else must be equal)
VARYING_OPTIONS = ("phrasing",)
N_BOOT = 1000


class RunSetError(ValueError):
    """The runs cannot be compared for reliability (the message says why)."""


def _pooled_sd(values: np.ndarray) -> float:
    """``values``: items × runs. Pooled within-item SD (ddof 1 within each item)."""
    return float(math.sqrt(np.var(values, axis=1, ddof=1).mean()))


def _sd_ci(values: np.ndarray, n_boot: int, seed: int) -> tuple[list[float] | None, str | None]:
    var = np.var(values, axis=1, ddof=1) if len(values) else np.zeros(0)
    boot = group_bootstrap(len(var), lambda idx: np.sqrt(var[idx].mean(axis=1)), n_boot, seed,
                           unit="items")
    if boot.ci_reason:
        return None, boot.ci_reason.removeprefix("no interval: ")
    return boot.ci(), None


def check_run_set(db: sqlite_utils.Database, run_ids: list[int]) -> list[dict[str, Any]]:
    """The runs, if they form a reliability set: ≥ 2 distinct completed runs of one task,
    checklist version, judge and per-question method whose options differ only in
    :data:`VARYING_OPTIONS`, each with its own wording. A :class:`RunSetError` says which runs
    differ and how; an unknown run raises ``NotFound``."""
    if len(run_ids) < 2:
        raise RunSetError("give at least two runs (--run A --run B): reliability compares the "
                          "answers of runs that differ only in the prompt's wording")
    seen: set[int] = set()
    for r in run_ids:
        if r in seen:
            raise RunSetError(f"run {r} is given twice")
        seen.add(r)
    runs = [get_run(db, r) for r in run_ids]
    for r in runs:
        if r["status"] != "completed":
            raise RunSetError(f"run {r['id']} is {r['status']}, not completed: reliability "
                              f"compares finished runs")
    first = runs[0]
    for r in runs[1:]:
        for field, label in (("task", "tasks"), ("checklist_version_id", "checklist versions"),
                             ("judge_spec", "judges"), ("method", "methods")):
            if r[field] != first[field]:
                a, b = first[field], r[field]
                if field == "checklist_version_id":
                    a, b = (f"v{first['checklist_version']}", f"v{r['checklist_version']}")
                raise RunSetError(f"runs {first['id']} and {r['id']} have different {label} "
                                  f"({a} vs {b}): a reliability set is one checklist version, "
                                  f"judge, method and task asked with different wordings")
    m = method_entry(first["method"])
    if not m.per_question:
        raise RunSetError(f"method {first['method']} has no per-question answers: reliability "
                          f"needs runs of a per-question method (e.g. rocketeval, checkeval)")

    def fixed(r: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in requested(r["params"]).items() if k not in VARYING_OPTIONS}

    wordings: dict[tuple, int] = {}
    for r in runs:
        if r is not first and fixed(r) != fixed(first):
            a, b = fixed(first), fixed(r)
            diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            raise RunSetError(f"runs {first['id']} and {r['id']} differ in "
                              f"{', '.join(diff)}: the runs of a reliability set may differ "
                              f"only in {', '.join(VARYING_OPTIONS)}")
        key = tuple(r["params"].get(k, 0) for k in VARYING_OPTIONS)
        if key in wordings:
            raise RunSetError(f"runs {wordings[key]} and {r['id']} were asked with the same "
                              f"wording (phrasing={key[0]}): their answers come from the same "
                              f"prompt, so they say nothing about reliability — start a run "
                              f"with another --param phrasing=N")
        wordings[key] = r["id"]
    return runs


def reliability(db: sqlite_utils.Database, run_ids: list[int], n_boot: int = N_BOOT,
                seed: int = 0, max_flip: float = DEFAULT_MAX_FLIP) -> dict[str, Any]:
    """Per-question flip rate and p(Yes) SD over a reliability set (definitions in the module
    docstring), and a summary of the set.

    Returns ``{"runs": [{"run", "phrasing"}], "n_runs", "n_items" (items in every run),
    "task", "judge", "method", "checklist_version", "max_flip", "summary": {"flip_rate",
    "flip_rate_ci", "flip_rate_ci_method", "n_pairs", "n_items", "p_yes_sd", "n_questions",
    "n_unreliable", "reason"},
    "questions": [{"question_id", "question", "dimension", "flip_rate", "flip_rate_ci",
    "n_flips", "p_yes_sd", "p_yes_sd_ci", "n_items", "n_groups", "n_invalid", "yes_rate",
    "unreliable", "reason"}]}`` (questions sorted by flip rate, highest first; undefined values
    are None with a ``reason``; ``n_groups``: the groups — documents, contexts, queries — of
    the counted items)."""
    runs = check_run_set(db, run_ids)
    ids = [r["id"] for r in runs]
    common = set(runs[0]["item_ids"])
    for r in runs[1:]:
        common &= set(r["item_ids"])
    if not common:
        raise RunSetError(f"runs {', '.join(map(str, ids))} have no item in common")
    content = version_by_id(db, runs[0]["checklist_version_id"])["content"]
    qinfo = {q["id"]: q for q in content["questions"]}
    group = item_column(db, sorted(common), "group_id")
    marks = ",".join("?" * len(ids))
    got: dict[tuple[int, int], dict[int, tuple[str, float | None]]] = defaultdict(dict)
    for run_id, item, qid, verdict, p_yes, error in db.execute(
            f"SELECT run_id, item_id, question_id, verdict, p_yes, error FROM answer WHERE "
            f"run_id IN ({marks}) AND question_id != 0 AND unit = ''", ids):
        if item in common:
            got[(qid, item)][run_id] = ("invalid" if error else verdict, p_yes)
    k = len(ids)
    per_q: dict[int, dict[str, Any]] = defaultdict(lambda: {"items": [], "values": [],
                                                            "verdicts": [], "invalid": 0})
    for (qid, item), by_run in sorted(got.items()):
        if len(by_run) < k:  # not asked in every run (cannot be compared)
            continue
        answers = [by_run[r] for r in ids]
        if any(v == "invalid" for v, _ in answers):
            per_q[qid]["invalid"] += 1
            continue
        per_q[qid]["items"].append(item)
        per_q[qid]["verdicts"].append([v for v, _ in answers])
        per_q[qid]["values"].append([answer_value(v, p) for v, p in answers])
    questions = []
    for qid in sorted({qid for qid, _ in got}):
        d = per_q[qid]
        n = len(d["verdicts"])
        q = qinfo.get(qid, {})
        entry: dict[str, Any] = {"question_id": qid, "question": q.get("text", ""),
                                 "dimension": q.get("dimension", ""), "n_items": n,
                                 "n_groups": len({group.get(i) for i in d["items"]}),
                                 "n_invalid": d["invalid"], "flip_rate": None,
                                 "flip_rate_ci": None, "n_flips": 0, "p_yes_sd": None,
                                 "p_yes_sd_ci": None, "yes_rate": None, "unreliable": False,
                                 "reason": None}
        if n == 0:
            entry["reason"] = (f"no item has a Yes/No answer in all {k} runs"
                               + (f" ({d['invalid']} left out for an invalid answer)"
                                  if d["invalid"] else ""))
        else:
            flips = [len(set(v)) > 1 for v in d["verdicts"]]
            vals = np.array(d["values"], dtype=float)
            ci, why = _sd_ci(vals, n_boot, seed)
            entry.update(n_flips=int(sum(flips)), flip_rate=sum(flips) / n,
                         flip_rate_ci=wilson_ci(int(sum(flips)), n), p_yes_sd=_pooled_sd(vals),
                         p_yes_sd_ci=ci, yes_rate=float(np.mean(
                             [v == "yes" for vs in d["verdicts"] for v in vs])),
                         reason=why)
            # the floor's small-sample rule: no flag from answers on a handful of groups
            entry["unreliable"] = (entry["flip_rate"] > max_flip
                                   and enough_groups(entry["n_groups"]))
            if entry["flip_rate"] > max_flip and not entry["unreliable"]:
                entry["flag_reason"] = (f"not flagged: its items come from {entry['n_groups']}"
                                        f" groups, fewer than the {minimum()} a flag needs")
        questions.append(entry)
    questions.sort(key=lambda e: (-1 if e["flip_rate"] is None else -e["flip_rate"],
                                  e["dimension"], e["question_id"]))
    summary = _summary(per_q, questions, n_boot, seed)
    return {"runs": [{"run": r["id"], "phrasing": r["params"].get("phrasing", 0)} for r in runs],
            "n_runs": k, "n_items": len(common), "task": runs[0]["task"],
            "judge": runs[0]["judge_spec"], "method": runs[0]["method"],
            "checklist_version": runs[0]["checklist_version"], "max_flip": max_flip,
            "summary": summary, "questions": questions}


def _summary(per_q: dict[int, dict[str, list]], questions: list[dict[str, Any]], n_boot: int,
             seed: int) -> dict[str, Any]:
    """Pooled over every counted (item, question) pair. The flip-rate interval is a percentile
    bootstrap over items (an item's questions resampled together: one hard item can flip many
    questions, so pairs are not independent)."""
    flips: dict[int, list[int]] = defaultdict(list)  # item -> flipped (0/1) per question
    sq: list[float] = []
    for d in per_q.values():
        for item, verdicts, vals in zip(d["items"], d["verdicts"], d["values"]):
            flips[item].append(int(len(set(verdicts)) > 1))
            sq.append(float(np.var(vals, ddof=1)))
    n_pairs = len(sq)
    out: dict[str, Any] = {"n_pairs": n_pairs, "n_items": len(flips),
                           "n_questions": len(questions),
                           "n_unreliable": sum(q["unreliable"] for q in questions),
                           "flip_rate": None, "flip_rate_ci": None,
                           "flip_rate_ci_method": None, "p_yes_sd": None, "reason": None}
    if not n_pairs:
        out["reason"] = "no question has an item answered Yes/No in every run"
        return out
    out["flip_rate"] = sum(map(sum, flips.values())) / n_pairs
    out["p_yes_sd"] = float(math.sqrt(np.mean(sq)))
    k = np.array([sum(v) for v in flips.values()], dtype=float)
    n = np.array([len(v) for v in flips.values()], dtype=float)
    boot = group_bootstrap(len(k), ratio_of_sums(k, n), n_boot, seed, unit="items")
    if boot.ci_reason:
        out["reason"] = boot.ci_reason.removeprefix("no interval: ")
        return out
    ci = boot.ci()
    out["flip_rate_ci_method"] = "bootstrap over items"
    if ci[0] == ci[1]:  # no pair flipped (or all did): the bootstrap has no spread
        ci = wilson_ci(int(k.sum()), n_pairs)
        out["flip_rate_ci_method"] = "Wilson over pairs (the bootstrap over items has no spread)"
    out["flip_rate_ci"] = ci
    return out


def unreliable_questions(result: dict[str, Any],
                         max_flip: float = DEFAULT_MAX_FLIP) -> list[dict[str, Any]]:
    """The questions of a :func:`reliability` result whose flip rate is above ``max_flip``
    (default 0.10, see the module docstring), highest first — what a checklist proposal may
    drop as "unstable under rewording". Questions without a defined flip rate are left out."""
    return sorted((q for q in result["questions"]
                   if q["flip_rate"] is not None and q["flip_rate"] > max_flip),
                  key=lambda q: -q["flip_rate"])


#: How to get a reliability set, said wherever flip rates are blank for want of one.
HOW_TO_START = ("start them with the run option phrasing (Run page → Prompt layout and "
                "scoring → Prompt wording, or `checkeval run … --param phrasing=1`) and select "
                "them here")


def _wording_groups(db: sqlite_utils.Database, task: str | None = None,
                    run_ids: list[int] | None = None) -> dict[tuple, dict[Any, list[int]]]:
    """Completed per-question runs by (task, checklist version, judge, method, options other
    than the wording) → wording → run ids, oldest first."""
    sql = ("SELECT r.id, r.task_id, r.checklist_version_id, r.judge_spec, r.method, r.params "
           "FROM run r JOIN task t ON t.id = r.task_id WHERE r.status = 'completed'")
    args: list[Any] = []
    if task:
        sql += " AND t.name = ?"
        args.append(task)
    if run_ids is not None:
        sql += " AND r.id IN (SELECT value FROM json_each(?))"
        args.append(f"[{','.join(str(int(r)) for r in run_ids)}]")
    groups: dict[tuple, dict[Any, list[int]]] = defaultdict(lambda: defaultdict(list))
    for rid, tid, vid, judge, meth, params in db.execute(sql + " ORDER BY r.id", args):
        try:
            if not method_entry(meth).per_question:
                continue
        except ValueError:
            continue
        p = requested(loads(params, {}))
        fixed = tuple(sorted((k, repr(v)) for k, v in p.items() if k not in VARYING_OPTIONS))
        wording = tuple(p.get(k, 0) for k in VARYING_OPTIONS)
        groups[(tid, vid, judge, meth, fixed)][wording].append(rid)
    return groups


def reliability_sets(db: sqlite_utils.Database, task: str | None = None,
                     run_ids: list[int] | None = None) -> list[list[int]]:
    """Completed runs grouped into candidate reliability sets: same task, checklist version,
    judge, per-question method and options except the wording, with ≥ 2 different wordings
    (one run per wording, the newest). Newest set first — what a page offers to compare.
    ``run_ids``: only among these runs (a page's selection)."""
    groups = _wording_groups(db, task, run_ids)
    sets = [sorted(ids[-1] for ids in g.values()) for g in groups.values() if len(g) >= 2]
    return sorted(sets, key=lambda s: -max(s))


def selection_reliability(db: sqlite_utils.Database, run_ids: list[int]) -> dict[str, Any]:
    """The flip rates a page can show for its selected runs: the reliability set they hold
    (:func:`reliability_sets` among ``run_ids``; with several, the one with the most runs, then
    the newest), computed by :func:`reliability`.

    Returns ``{"set": run ids compared (empty without a set), "result": the
    :func:`reliability` result or None, "columns": :func:`diagnostics_columns` of it ({} without
    a set), "note": which runs were compared, or None, "reason": why there is no flip rate at
    all (and how to get one), or None}``."""
    out: dict[str, Any] = {"set": [], "result": None, "columns": {}, "note": None,
                           "reason": None}
    groups = _wording_groups(db, None, list(run_ids))
    sets = sorted((sorted(ids[-1] for ids in g.values()) for g in groups.values()
                   if len(g) >= 2), key=lambda s: (-len(s), -max(s)))
    if not sets:
        n = sum(len(ids) for g in groups.values() for ids in g.values())
        same = next(((w, ids) for g in groups.values() for w, ids in g.items()
                     if len(ids) >= 2), None)
        if len(run_ids) < 2:
            why = f"{len(run_ids)} run selected"
        elif n < 2:
            why = (f"only {n} of the {len(run_ids)} selected runs has per-question answers"
                   if n else "no selected run has per-question answers")
        elif same:
            why = (f"runs {', '.join(f'#{r}' for r in same[1])} were asked with the same "
                   f"wording ({', '.join(f'{k}={v}' for k, v in zip(VARYING_OPTIONS, same[0]))})")
        else:
            why = (f"no two of the {n} selected per-question runs share checklist version, "
                   "judge, method and the other run options")
        out["reason"] = ("needs ≥ 2 selected runs of one checklist version, judge and method "
                         f"that differ only in phrasing ({why}) — {HOW_TO_START}")
        return out
    best = sets[0]
    try:
        res = reliability(db, best)
    except RunSetError as e:
        out["reason"] = f"runs {', '.join(f'#{r}' for r in best)}: {e}"
        return out
    phr = ", ".join(str(r["phrasing"]) for r in res["runs"])
    note = (f"Flip rate and p(Yes) SD compare runs {', '.join(f'#{r}' for r in best)} "
            f"({res['judge']} · {res['method']}, checklist v{res['checklist_version']}, "
            f"phrasings {phr}) on the {res['n_items']} items all of them scored.")
    if len(sets) > 1:
        note += (f" The selection holds {len(sets) - 1} other such set(s): select one set "
                 "alone to see its flip rates.")
    return {"set": best, "result": res, "columns": diagnostics_columns(res), "note": note,
            "reason": None}


def diagnostics_columns(result: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Question id → the reliability columns a question-diagnostics table shows beside its
    other columns: ``flip_rate``, ``flip_rate_ci``, ``p_yes_sd``, ``p_yes_sd_ci``,
    ``n_items``, ``n_groups``, ``unreliable``, ``reason`` (each undefined value with its
    reason)."""
    keys = ("flip_rate", "flip_rate_ci", "p_yes_sd", "p_yes_sd_ci", "n_items", "n_groups",
            "unreliable", "reason")
    return {q["question_id"]: {k: q[k] for k in keys} for q in result["questions"]}
