"""Bias probes: does a question reward length rather than quality?

LLM judges are known to prefer longer answers. Two probes show it per question, on one run:

* **Length correlation** (:func:`length_bias`) — per question, Spearman's ρ between the answer
  value (normalised p(Yes), else 1 / 0 from the verdict; invalid answers left out) and the
  judged output's length in words (whitespace-separated tokens), over the run's items; per
  dimension, ρ between the run's primary score and length. The 95% interval is Fisher's z with
  the Bonett–Wright standard error ``sqrt((1 + ρ²/2) / (n − 3))``. A question is **flagged**
  when ``|ρ| ≥`` :data:`LENGTH_RHO` (0.3, a "moderate" correlation) and its interval excludes
  0. A flag is a warning, not a verdict: on some dimensions (coverage, relevance) longer
  outputs may really be better — compare with the human scores' own correlation with length.
  :func:`selection_length` does the same over several runs (a page's selection), one point
  per item: its answer value averaged over the runs.
* **Verbosity probe** (:func:`verbosity_probe`) — a sample of the run's items is judged again,
  with the same judge, method, options and questions, on the output padded with a neutral
  restatement of itself (:func:`pad_output`): same content, about twice the words. Per
  question, the mean answer value padded − original (``delta``) with a paired 95% t interval;
  **flagged** when ``delta >`` :data:`VERBOSITY_MARGIN` (0.10 on the p(Yes) scale) and the
  interval's lower bound is above 0 — repeating the answer adds no information, so a question
  whose Yes rises with it rewards verbosity. The requests go through the cached judge (a
  probe killed midway resumes where it stopped, a rerun costs nothing);
  :func:`verbosity_cost` says how many judge calls a probe would make before asking.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.checklists.versions import version_by_id
from checkeval_core.judges.cached import request_key
from checkeval_core.judges.registry import get_judge
from checkeval_core.runs.estimate import estimate_requests
from checkeval_core.runs.jobs import get_run
from checkeval_core.runs.methods import sentences
from checkeval_core.runs.registry import method as method_entry
from checkeval_core.runs.registry import primary_aggregation
from checkeval_core.runs.score_math import answer_value
from checkeval_core.runs.score_read import run_scores
from checkeval_core.stats.bootstrap import enough_groups, minimum
from checkeval_core.stats.intervals import fisher_z_interval, t_interval
from checkeval_core.stats.significance import spearman_test
from checkeval_core.stats.values import isnan
from checkeval_core.store import item_column
from checkeval_core.tasks import get_task, items

#: |Spearman ρ| of a question's answers with output length from which it is flagged (with a
#: 95% interval excluding 0): 0.3 is a "moderate" correlation. ``checkeval bias`` flags with
#: it, and the Analysis page's question diagnostics call such a question "follows length".
LENGTH_RHO = 0.3
VERBOSITY_MARGIN = 0.10
DEFAULT_PROBE_ITEMS = 20
PAD_LEAD = "In other words: "
PADDING_RULE = (f"the output, a blank line, then {PAD_LEAD!r} followed by the output's own "
                "sentences (pysbd, English) in their order, whitespace-normalised and joined "
                "by single spaces")


# -- length correlation ---------------------------------------------------------------------
def n_words(text: str | None) -> int:
    """An output's length: whitespace-separated tokens."""
    return len((text or "").split())


def spearman_entry(values: list[float], lengths: list[float]) -> dict[str, Any]:
    """``{"rho", "n", "p_value", "ci", "reason"}``: Spearman's ρ of values with lengths, its
    Fisher-z interval (Bonett–Wright SE), and a reason whenever a value is undefined."""
    n = len(values)
    out: dict[str, Any] = {"rho": None, "n": n, "p_value": None, "ci": None, "reason": None}
    if n < 3:
        out["reason"] = f"only {n} answered item(s): needs ≥ 3"
        return out
    if len(set(values)) == 1:
        v = values[0]
        what = {1.0: "Yes", 0.0: "No"}.get(v, f"{v:g}")
        out["reason"] = f"every answer is {what} on the {n} items: no variation to correlate"
        return out
    if len(set(lengths)) == 1:
        out["reason"] = f"every output has the same length ({lengths[0]:g} words)"
        return out
    rho, p = spearman_test(values, lengths)
    if isnan(rho):
        out["reason"] = "the answers or the lengths are equal up to rounding: nothing to correlate"
        return out
    out.update(rho=rho, p_value=p)
    out["ci"], out["reason"] = fisher_z_interval(rho, n)
    return out


def _length_flag(e: dict[str, Any], threshold: float) -> bool:
    return (e["rho"] is not None and e["ci"] is not None and abs(e["rho"]) >= threshold
            and (e["ci"][0] > 0 or e["ci"][1] < 0))


def _run_and_method(db: sqlite_utils.Database, run_id: int) -> tuple[dict[str, Any], Any]:
    run = get_run(db, run_id)
    if run["status"] != "completed":
        raise ValueError(f"run {run_id} is {run['status']}, not completed: the bias probes "
                         f"read a finished run's answers")
    return run, method_entry(run["method"])


def length_bias(db: sqlite_utils.Database, run_id: int,
                threshold: float = LENGTH_RHO) -> dict[str, Any]:
    """Per question and per dimension of a completed run: Spearman ρ with output length
    (module docstring). Returns ``{"run", "task", "judge", "method", "n_items", "threshold",
    "questions": [{"question_id", "question", "dimension", "rho", "n", "p_value", "ci",
    "flagged", "reason"}], "questions_reason", "dimensions": [{"dimension", "aggregation",
    "rho", "n", "p_value", "ci", "flagged", "reason"}], "n_flagged"}``; questions sorted by
    |ρ|, largest first, undefined ones last."""
    run, m = _run_and_method(db, run_id)
    length = {k: n_words(v) for k, v in item_column(db, list(run["item_ids"]), "output").items()}
    out: dict[str, Any] = {"run": run_id, "task": run["task"], "judge": run["judge_spec"],
                           "method": run["method"], "n_items": len(length),
                           "threshold": threshold, "questions": [], "questions_reason": None,
                           "dimensions": []}
    # the floor's small-sample rule: no flag from the items of a handful of groups
    groups = item_column(db, list(run["item_ids"]), "group_id")
    out["n_groups"] = len(set(groups.values()))
    may_flag = enough_groups(out["n_groups"])
    out["flag_reason"] = None if may_flag else (
        f"no flag: the run's items come from {out['n_groups']} groups, fewer than the "
        f"{minimum()} a flag needs")
    if m.per_question:
        qinfo = {q["id"]: q for q in
                 version_by_id(db, run["checklist_version_id"])["content"]["questions"]}
        by_q: dict[int, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
        for item, qid, verdict, p_yes, error in db.execute(
                "SELECT item_id, question_id, verdict, p_yes, error FROM answer WHERE "
                "run_id = ? AND question_id != 0 AND unit = ''", [run_id]):
            vals, lens = by_q[qid]
            v = None if error else answer_value(verdict, p_yes)
            if v is not None and item in length:
                vals.append(v)
                lens.append(float(length[item]))
        for qid in sorted(by_q):
            e = spearman_entry(*by_q[qid])
            q = qinfo.get(qid, {})
            out["questions"].append({"question_id": qid, "question": q.get("text", ""),
                                     "dimension": q.get("dimension", ""), **e,
                                     "flagged": may_flag and _length_flag(e, threshold)})
        out["questions"].sort(key=lambda e: (e["rho"] is None, -abs(e["rho"] or 0),
                                             e["question_id"]))
    else:
        out["questions_reason"] = (f"method {run['method']} has no per-question answers; "
                                   f"only its dimension scores are compared with length")
    agg = primary_aggregation(run)
    by_dim: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for s in run_scores(db, run_id, agg):
        if s["value"] is not None and not (isinstance(s["value"], float) and
                                           math.isnan(s["value"])):
            by_dim[s["dimension"]][0].append(float(s["value"]))
            by_dim[s["dimension"]][1].append(float(length.get(s["item_pk"], 0)))
    for dim in sorted(by_dim):
        e = spearman_entry(*by_dim[dim])
        out["dimensions"].append({"dimension": dim, "aggregation": agg, **e,
                                  "flagged": may_flag and _length_flag(e, threshold)})
    out["n_flagged"] = sum(q["flagged"] for q in out["questions"])
    return out


def selection_length(db: sqlite_utils.Database, run_ids: list[int],
                     threshold: float = LENGTH_RHO,
                     item_pks: set[int] | None = None) -> dict[int, dict[str, Any]]:
    """Per question over several runs (a page's selection): Spearman ρ between each item's
    answer value averaged over the runs that answered it Yes/No (p(Yes), else 1 / 0) and the
    item's output length in words — one point per item, so the interval of
    :func:`spearman_entry` holds; with one run, :func:`length_bias`'s per-question ρ.

    Question id → ``{"rho", "n" (items), "p_value", "ci", "reason", "n_groups" (groups of
    those items), "flagged" (|ρ| ≥ ``threshold`` and the interval excludes 0)}``.
    ``item_pks``: only these items (the items a comparison rests on)."""
    if not run_ids:
        return {}
    marks = ",".join("?" * len(run_ids))
    vals: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for item, qid, verdict, p_yes, error in db.execute(
            f"SELECT item_id, question_id, verdict, p_yes, error FROM answer WHERE run_id IN "
            f"({marks}) AND question_id != 0 AND unit = ''", list(run_ids)):
        v = None if error else answer_value(verdict, p_yes)
        if v is not None and (item_pks is None or item in item_pks):
            vals[qid][item].append(v)
    pks = sorted({i for per in vals.values() for i in per})
    info: dict[int, tuple[int, Any]] = {}
    for i in range(0, len(pks), 500):
        chunk = pks[i:i + 500]
        for pk, output, group in db.execute(
                f"SELECT id, output, group_id FROM item WHERE id IN "
                f"({','.join('?' * len(chunk))})", chunk):
            info[pk] = (n_words(output), group)
    out = {}
    for qid, per in vals.items():
        its = [i for i in sorted(per) if i in info]
        e = spearman_entry([float(np.mean(per[i])) for i in its],
                           [float(info[i][0]) for i in its])
        out[qid] = {**e, "n_groups": len({info[i][1] for i in its}),
                    "flagged": _length_flag(e, threshold)}
    return out


# -- verbosity probe ------------------------------------------------------------------------
def pad_output(text: str) -> str | None:
    """The output padded with a neutral restatement of itself (rule: :data:`PADDING_RULE`);
    None when it has no sentence."""
    sents = sentences(text)
    if not sents:
        return None
    return text.rstrip() + "\n\n" + PAD_LEAD + " ".join(sents)


def probe_items(db: sqlite_utils.Database, run: dict[str, Any],
                n_items: int) -> list[dict[str, Any]]:
    """The probe's sample: the run's items with at least one sentence, the ``n_items`` whose
    sha256(task item id) is smallest — a fixed pseudo-random sample, the same on every call."""
    its = [i for i in items(db, run["task"], pks=list(run["item_ids"]))
           if (i.get("output") or "").strip()]
    its.sort(key=lambda i: hashlib.sha256(str(i["item_id"]).encode()).hexdigest())
    return its[:n_items]


def _plan(db: sqlite_utils.Database, run: dict[str, Any], judge: Any,
          sample: list[dict[str, Any]]) -> list[Any]:
    """The padded items' judge requests, planned by the run's own method and options."""
    content = version_by_id(db, run["checklist_version_id"])["content"]
    ctx = {"kind": get_task(db, run["task"])["kind"], "content": content,
           "params": run["params"], "db": db, "run": run, "judge": judge,
           "definitions": {d["name"]: d.get("definition", "") for d in content["dimensions"]}}
    m = method_entry(run["method"])
    works = []
    for it in sample:
        padded = pad_output(it["output"])
        if padded is not None:
            works += m.plan(dict(it, output=padded), ctx)
    return works


def _check_probe_run(db: sqlite_utils.Database, run_id: int,
                     n_items: int) -> tuple[dict[str, Any], Any]:
    if isinstance(n_items, bool) or not isinstance(n_items, int) or n_items < 1:
        raise ValueError(f"--items {n_items}: give a positive number of items")
    run, m = _run_and_method(db, run_id)
    if not m.per_question:
        raise ValueError(f"method {run['method']} has no per-question answers: the verbosity "
                         f"probe compares questions (use a rocketeval or checkeval run)")
    return run, m


def _uncached(judge: Any, db: sqlite_utils.Database, works: list[Any]) -> int:
    """How many of the works' requests the judge's cache does not hold (= judge calls)."""
    params = getattr(judge, "params", {})
    model = judge.capabilities.model
    keys = [request_key(judge.spec, model, params, w.kind, w.request.cache_payload())
            for w in works]
    found: set[str] = set()
    for i in range(0, len(keys), 500):
        chunk = keys[i:i + 500]
        found.update(r[0] for r in db.execute(
            f"SELECT key FROM llm_cache WHERE key IN ({','.join('?' * len(chunk))})", chunk))
    return sum(k not in found for k in keys)


def verbosity_cost(db: sqlite_utils.Database, run_id: int,
                   n_items: int = DEFAULT_PROBE_ITEMS, judge: Any = None) -> dict[str, Any]:
    """What :func:`verbosity_probe` would ask, before asking: ``{"n_items", "n_requests",
    "n_calls"}`` — ``n_calls`` are the requests not in the judge's cache (a rerun: 0) — plus
    the cost estimate's figures (``runs/estimate.py``: ``calls``, ``cached``,
    ``prompt_tokens``, ``completion_tokens``, ``seconds``, ``usd``) and its ``notes``."""
    run, _ = _check_probe_run(db, run_id, n_items)
    j = judge or get_judge(run["judge_spec"], db=db)
    sample = probe_items(db, run, n_items)
    works = _plan(db, run, j, sample)
    est = estimate_requests(j, [(k, [w.request for w in works if w.kind == k])
                                for k in ("binary", "generate")], db)
    return {"n_items": len(sample), "n_requests": len(works), "n_calls": _uncached(j, db, works),
            **est.to_json(), "notes": est.notes}


def verbosity_probe(db: sqlite_utils.Database, run_id: int,
                    n_items: int = DEFAULT_PROBE_ITEMS, judge: Any = None,
                    margin: float = VERBOSITY_MARGIN) -> dict[str, Any]:
    """Ask the run's judge about the padded outputs of :func:`probe_items` and compare with
    the run's stored answers (module docstring). Returns ``{"run", "judge", "method",
    "n_items", "n_requests", "n_calls" (judge calls made, i.e. cache misses), "margin",
    "padding_rule", "questions": [{"question_id", "question", "dimension", "n", "yes_original",
    "yes_padded", "delta", "delta_ci", "share_yes_original", "share_yes_padded", "flagged",
    "reason"}], "n_flagged"}``; ``yes_*`` are mean answer values (p(Yes), else 1 / 0), questions
    sorted by delta, largest first."""
    run, _ = _check_probe_run(db, run_id, n_items)
    j = judge or get_judge(run["judge_spec"], db=db)
    sample = probe_items(db, run, n_items)
    works = _plan(db, run, j, sample)
    before = getattr(j, "n_requests", None)
    n_calls = _uncached(j, db, works)
    padded: dict[tuple[int, int], tuple[str, float | None]] = {}
    for kind in ("binary", "generate"):
        batch = [w for w in works if w.kind == kind]
        if not batch:
            continue
        results = (j.binary if kind == "binary" else j.generate)([w.request for w in batch])
        for w, res in zip(batch, results):
            for a in w.parse(res):
                padded[(w.item_pk, a["question_id"])] = (
                    "invalid" if a["error"] else a["verdict"], a["p_yes"])
    if before is not None:
        n_calls = j.n_requests - before
    pks = [it["id"] for it in sample]
    original: dict[tuple[int, int], tuple[str, float | None]] = {}
    if pks:
        for item, qid, verdict, p_yes, error in db.execute(
                f"SELECT item_id, question_id, verdict, p_yes, error FROM answer WHERE "
                f"run_id = ? AND question_id != 0 AND unit = '' AND item_id IN "
                f"({','.join('?' * len(pks))})", [run_id, *pks]):
            original[(item, qid)] = ("invalid" if error else verdict, p_yes)
    qinfo = {q["id"]: q for q in
             version_by_id(db, run["checklist_version_id"])["content"]["questions"]}
    pairs: dict[int, list[tuple[tuple[str, float | None], tuple[str, float | None]]]] = \
        defaultdict(list)
    for key, pad in padded.items():
        orig = original.get(key)
        if orig is not None and "invalid" not in (orig[0], pad[0]):
            pairs[key[1]].append((orig, pad))
    questions = []
    for qid in sorted({q for _, q in padded}):
        q = qinfo.get(qid, {})
        lst = pairs.get(qid, [])
        e: dict[str, Any] = {"question_id": qid, "question": q.get("text", ""),
                             "dimension": q.get("dimension", ""), "n": len(lst),
                             "yes_original": None, "yes_padded": None, "delta": None,
                             "delta_ci": None, "share_yes_original": None,
                             "share_yes_padded": None, "flagged": False, "reason": None}
        if not lst:
            e["reason"] = "no item has a Yes/No answer both on the original and padded output"
        else:
            o = [answer_value(*a) for a, _ in lst]
            p = [answer_value(*b) for _, b in lst]
            diffs = [b - a for a, b in zip(o, p)]
            ci, why = t_interval(diffs)
            e.update(yes_original=float(np.mean(o)), yes_padded=float(np.mean(p)),
                     delta=float(np.mean(diffs)), delta_ci=ci, reason=why,
                     share_yes_original=float(np.mean([a[0] == "yes" for a, _ in lst])),
                     share_yes_padded=float(np.mean([b[0] == "yes" for _, b in lst])))
            e["flagged"] = bool(e["delta"] > margin and ci is not None and ci[0] > 0)
        questions.append(e)
    questions.sort(key=lambda e: (e["delta"] is None, -(e["delta"] or 0), e["question_id"]))
    return {"run": run_id, "task": run["task"], "judge": run["judge_spec"],
            "method": run["method"], "n_items": len(sample), "n_requests": len(works),
            "n_calls": n_calls, "margin": margin, "padding_rule": PADDING_RULE,
            "questions": questions, "n_flagged": sum(e["flagged"] for e in questions)}
