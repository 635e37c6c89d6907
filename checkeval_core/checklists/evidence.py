"""Every proposed question tested before review (AutoChecklist's *UnitTester*, with people's
scores as the test): the chosen judge answers each question on a small stratified sample of
**dev** items, and the review shows, beside the question's text:

* ``yes_rate`` — the judge's share of Yes on the sample (invalid answers left out);
* ``separation`` — how well its answers order the outputs people scored: over pairs of items
  on the same source (group) whose human scores for the question's dimension differ, the share
  the answer orders as people did, ties counting one half (a within-group AUC:
  :func:`checkeval_core.stats.ranking.separation`), with the floor's group-resampled interval
  ``separation_ci`` or the reason there is none;
* ``redundant_with`` — the kept questions of the same dimension whose answers on the same
  items agree with its answers on at least :data:`REDUNDANT` of them;
* ``cost`` — what asking it costs per item (tokens, and USD where the judge has a price);
* ``flag`` — the dev-only rule: ``never_varies`` (one answer on every sampled item),
  ``orders_no_pair`` (its answer never differs within a pair people ranked) or ``reversed``
  (the whole interval below 0.5: Yes goes with the output people scored lower). A flag is
  shown, never acted on: nothing is deleted or filtered.

The sample (:func:`dev_sample`): dev groups only (the task's split; held-out groups are never
read, so evidence spent choosing questions does not bias a held-out verdict), in a seeded order
of groups, round by round the highest and the lowest scored remaining item of each group —
stratified by group and by people's score. Every run is appended to ``question_evidence``;
the review shows the latest per question (:func:`latest_evidence`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.checklists.editing import dimension_id, questions
from checkeval_core.judges.prices import PriceError, price_of
from checkeval_core.judges.registry import get_judge
from checkeval_core.prompts.judge import binary_request_for_item
from checkeval_core.stats.draws import sampling_rng, shuffled
from checkeval_core.stats.ranking import pairs_ordered, separation
from checkeval_core.stats.values import Figure, pct
from checkeval_core.store import dumps, loads, now_iso, rows, task_id, transaction
from checkeval_core.task_split import in_part, part_members
from checkeval_core.tasks import get_task, items
from checkeval_core.team import guarded

DEFAULT_ITEMS = 24
MAX_ITEMS = 400
#: Two questions whose answers agree on at least this share of the sampled items are listed as
#: redundant with each other.
REDUNDANT = 0.9
#: Fewer items answered by both questions than this: no redundancy figure.
MIN_SHARED = 4
STATUSES = ("proposed", "kept", "all")
N_BOOT = 200
FLAGS = ("never_varies", "orders_no_pair", "reversed")
NAN = float("nan")


def check_options(status: str, n_items: int) -> None:
    """Refuse bad options before anything is asked."""
    if status not in STATUSES:
        raise ValueError(f"--status {status!r}: use one of {', '.join(STATUSES)}")
    if isinstance(n_items, bool) or not isinstance(n_items, int) or not 4 <= n_items <= MAX_ITEMS:
        raise ValueError(f"--items {n_items!r}: give a whole number from 4 to {MAX_ITEMS}")


def dev_sample(db: sqlite_utils.Database, task: str, dimension: str, n: int, seed: int = 0
               ) -> list[dict[str, Any]]:
    """``n`` dev items (see the module doc), each ``{"pk", "group", "system", "score"}`` with
    people's score for ``dimension`` (NaN where there is none). Raises ``SplitError`` (a
    ``ValueError``) on a task without a dev / held-out split."""
    groups, systems = part_members(db, task, "dev")  # type: ignore[misc]
    score = {r["item"]: r["value"] for r in rows(
        db, "SELECT hs.item_id AS item, hs.value FROM human_score hs JOIN item i ON i.id = "
            "hs.item_id WHERE i.task_id = ? AND hs.annotator = '' AND lower(hs.dimension) = "
            "lower(?)", [task_id(db, task), dimension])}
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows(db, "SELECT id, group_id, system_id FROM item WHERE task_id = ? ORDER BY "
                      "position, id", [task_id(db, task)]):
        if in_part(r["group_id"], r["system_id"], "dev", groups, systems):
            by_group[r["group_id"]].append({"pk": r["id"], "group": r["group_id"],
                                            "system": r["system_id"],
                                            "score": score.get(r["id"], NAN)})
    for its in by_group.values():  # highest first; unscored last
        its.sort(key=lambda x: (math.isnan(x["score"]), -(0 if math.isnan(x["score"])
                                                          else x["score"]), x["pk"]))
    names = sorted(by_group)
    order = [names[i] for i in shuffled(sampling_rng(seed), len(names))]
    out: list[dict[str, Any]] = []
    total = sum(len(v) for v in by_group.values())
    while len(out) < min(n, total):
        for g in order:
            its = by_group[g]
            for pick in (0, -1):  # the best and the worst left in this group
                scored = [x for x in its if not math.isnan(x["score"])]
                if its and len(out) < n:
                    x = (scored[pick] if scored else its[0])
                    its.remove(x)
                    out.append(x)
    return out


def _targets(db: sqlite_utils.Database, task: str, status: str, dimension: str | None
             ) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    """Per dimension: the questions to test and the kept ones to compare them with."""
    qs = [q for q in questions(db, task, dimension=dimension) if q["dimension"]]
    test: dict[str, list[dict]] = defaultdict(list)
    kept: dict[str, list[dict]] = defaultdict(list)
    for q in qs:
        if status == "all" and q["status"] in ("proposed", "kept") or q["status"] == status:
            test[q["dimension"]].append(q)
        if q["status"] == "kept":
            kept[q["dimension"]].append(q)
    return dict(test), dict(kept)


def _cost(j: Any, results: list[Any], judge: str) -> dict[str, Any]:
    n = len(results) or 1
    tin = sum(r.tokens_in for r in results) / n
    tout = sum(r.tokens_out for r in results) / n
    caps = getattr(j, "capabilities", None)
    try:
        price = price_of(judge, getattr(caps, "model", ""), bool(getattr(caps, "local", False)))
    except PriceError:
        price = None
    usd = None if price is None else (tin * price[0] + tout * price[1]) / 1e6
    return {"calls": 1, "prompt_tokens": round(tin, 1), "completion_tokens": round(tout, 1),
            "usd": usd}


def _flag(answers: np.ndarray, sep: dict[str, Any]) -> tuple[str | None, str | None]:
    valid = answers[~np.isnan(answers)]
    if len(valid) >= 2 and len(set(valid.tolist())) == 1:
        word = "Yes" if valid[0] == 1 else "No"
        return "never_varies", (f"answered {word} on all {len(valid)} dev items: it cannot "
                                "separate anything")
    if sep["n_pairs"] and sep["ordered"] + sep["reversed"] == 0:
        return "orders_no_pair", (f"the same answer for both outputs of every one of the "
                                  f"{sep['n_pairs']} pairs people scored differently")
    if not math.isnan(sep["ci"][1]) and sep["ci"][1] < 0.5:
        return "reversed", (f"Yes goes with the output people scored lower (separation "
                            f"{sep['value']:.2f}, interval below 0.5)")
    return None, None


@guarded("checklist.edit")
def question_evidence(db: sqlite_utils.Database, task: str, judge: str,
                      status: str = "proposed", n_items: int = DEFAULT_ITEMS,
                      dimension: str | None = None, judge_obj: Any = None, seed: int = 0,
                      n_boot: int = N_BOOT, store: bool = True) -> dict[str, Any]:
    """Test the task's ``status`` questions (of ``dimension``, or every dimension) on
    ``n_items`` dev items per dimension (see the module doc) and store the evidence.

    Returns ``{"task", "judge", "split": "dev", "items", "dimensions": {name: {"n_items",
    "n_groups", "n_scored"}}, "requests", "from_cache", "questions": [{"question_id", "text",
    "dimension", "yes_rate", "n_answers", "separation", "separation_ci", "separation_reason",
    "n_pairs", "n_groups", "redundant_with", "cost", "flag", "reason"}]}``; ``reason`` is the
    flag's reason, else why separation has no value or interval, else None."""
    check_options(status, n_items)
    if dimension is not None:
        dimension_id(db, task, dimension)  # an unknown dimension is refused, not tested empty
    test, kept = _targets(db, task, status, dimension)
    kind = get_task(db, task)["kind"]
    samples = {d: dev_sample(db, task, d, n_items, seed) for d in test}
    j = judge_obj or get_judge(judge, db=db)
    reqs, keys = [], []
    for d, qs in test.items():
        its = {it["pk"]: it for it in items(db, task, pks=[s["pk"] for s in samples[d]])}
        asked = {q["id"]: q for q in qs + kept.get(d, [])}
        for q in asked.values():
            for s in samples[d]:
                reqs.append(binary_request_for_item(its[s["pk"]], q["text"], kind))
                keys.append((d, q["id"], s["pk"]))
    results = j.binary(reqs) if reqs else []
    ans: dict[tuple[int, int], float] = {}
    res_of: dict[int, list[Any]] = defaultdict(list)
    for (_, qid, pk), r in zip(keys, results):
        ans[(qid, pk)] = {"yes": 1.0, "no": 0.0}.get(r.verdict, NAN)
        res_of[qid].append(r)
    out_q = []
    for d, qs in test.items():
        sample = samples[d]
        for q in qs:
            a = np.array([ans[(q["id"], s["pk"])] for s in sample], float)
            valid = a[~np.isnan(a)]
            _, per = pairs_ordered([s["group"] for s in sample], [s["score"] for s in sample], a)
            sep = separation(per, n_boot, seed)
            if not any(not math.isnan(s["score"]) for s in sample):
                sep["reason"] = f"no human score for dimension {d!r} on the dev items"
            red = []
            for k in kept.get(d, []):
                if k["id"] == q["id"]:
                    continue
                b = np.array([ans[(k["id"], s["pk"])] for s in sample], float)
                both = ~(np.isnan(a) | np.isnan(b))
                if both.sum() >= MIN_SHARED:
                    agree = float((a[both] == b[both]).mean())
                    if agree >= REDUNDANT:
                        red.append({"question_id": k["id"], "agreement": agree,
                                    "n": int(both.sum())})
            flag, why = _flag(a, sep)
            out_q.append({
                "question_id": q["id"], "text": q["text"], "dimension": d,
                "status": q["status"],
                "yes_rate": float(valid.mean()) if len(valid) else NAN,
                "n_answers": int(len(valid)), "separation": sep["value"],
                "separation_ci": sep["ci"], "separation_reason": sep["reason"],
                "n_pairs": sep["n_pairs"], "n_groups": sep["n_groups"],
                "redundant_with": sorted(red, key=lambda x: -x["agreement"]),
                "cost": _cost(j, res_of[q["id"]], judge), "flag": flag,
                "reason": why or sep["reason"]})
    if store:
        _store(db, task, judge, out_q)
    return {"task": task, "judge": judge, "split": "dev", "items": n_items,
            "dimensions": {d: {"n_items": len(s), "n_groups": len({x["group"] for x in s}),
                               "n_scored": sum(not math.isnan(x["score"]) for x in s)}
                           for d, s in samples.items()},
            "requests": len(reqs), "from_cache": sum(bool(r.cached) for r in results),
            "questions": out_q}


def _record(q: dict[str, Any]) -> dict[str, Any]:
    return {k: q[k] for k in ("yes_rate", "n_answers", "separation", "separation_ci",
                              "separation_reason", "n_pairs", "n_groups", "redundant_with",
                              "cost", "flag", "reason")}


def _store(db: sqlite_utils.Database, task: str, judge: str, qs: list[dict[str, Any]]) -> None:
    """Append each question's evidence; the same evidence again adds nothing."""
    tid, now = task_id(db, task), now_iso()
    with transaction(db):
        for q in qs:
            ev = dumps(_record(q))
            last = db.execute("SELECT judge, evidence FROM question_evidence WHERE question_id "
                              "= ? ORDER BY id DESC LIMIT 1", [q["question_id"]]).fetchone()
            if last is not None and (last[0], last[1]) == (judge, ev):
                continue
            db.execute("INSERT INTO question_evidence (task_id, question_id, judge, flag, "
                       "evidence, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                       [tid, q["question_id"], judge, q["flag"] or "", ev, now])


def latest_evidence(db: sqlite_utils.Database, task: str) -> dict[int, dict[str, Any]]:
    """``{question_id: {"judge", "when", **evidence}}``: the latest stored test of each
    question of ``task``."""
    out: dict[int, dict[str, Any]] = {}
    for r in rows(db, "SELECT question_id, judge, evidence, created_at FROM question_evidence "
                      "WHERE task_id = ? ORDER BY id", [task_id(db, task)]):
        out[r["question_id"]] = {"judge": r["judge"], "when": r["created_at"],
                                 **loads(r["evidence"], {})}
    return out


def _num(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def evidence_text(ev: dict[str, Any] | None) -> str:
    """One line for the review table: the flag (if any), separation [interval] (pairs,
    groups), yes-rate, redundancy, cost, then the flag's reason."""
    if not ev:
        return ""
    parts = []  # separation first: the figure a reviewer decides on
    if _num(ev.get("separation")):
        ci = ev.get("separation_ci") or [None, None]
        parts.append(f"separates {Figure(ev['separation'], ci).text(2)}"
                     f" on {ev['n_pairs']} pairs / {ev['n_groups']} groups")
    parts.append(f"yes {pct(ev['yes_rate'])} of {ev['n_answers']}"
                 if _num(ev.get("yes_rate")) else "no valid answer")
    if ev.get("redundant_with"):
        r = ev["redundant_with"][0]
        parts.append(f"answers like kept #{r['question_id']} on {pct(r['agreement'])}")
    cost = ev.get("cost") or {}
    if cost:
        parts.append(f"{cost['prompt_tokens']:.0f} tokens/item"
                     + (f", ${cost['usd']:.5f}/item" if _num(cost.get("usd")) and cost["usd"]
                        else ""))
    line = " · ".join(parts)
    if ev.get("flag"):
        line = f"⚑ {ev['flag']} · " + line + f" — {ev['reason']}"
    elif ev.get("reason"):
        line += f" ({ev['reason']})"
    return line + f" [{ev.get('judge', '')}, dev]"
