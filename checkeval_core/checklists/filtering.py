"""LLM filtering of the pooled questions of one dimension (CheckEval stage 2, filtering).

The judge checks every question for alignment ("Yes" = better), consistency with the
dimension's definition, and redundancy with another question; per question it gives
keep/remove, the failed criterion, a reason and, for redundancy, the duplicated question.
Removed generated questions become ``filtered`` (humans may override in the review queue);
kept ones keep their status. A question a person wrote (a seed, or a reviewer's edit) is never
demoted by a judge: a "remove" verdict on it is a *flag* — stored as the verdict, status
unchanged, reported for the person to decide. The verdict is stored on every question. An
answer that cannot be read changes nothing and is reported. A lexical similarity assist
proposes near-duplicates.

When the judge gives p(Yes), a decision whose deciding p(Yes) lies in :data:`UNSURE_BAND`
(0.40–0.60) is marked ``unsure``: the judge barely prefers one answer, which a small local
judge does for most questions, so such a verdict is shown as "the judge is unsure".

Two ways to ask (``mode``): ``json`` — the whole pool in one prompt, decisions as one JSON
object (what a large judge does well); ``binary`` — one Yes/No check per question and
criterion (alignment, consistency) plus one per lexically similar pair (redundancy), so
every question gets a decision even from a 0.5B local judge, which completes a long JSON
answer for one question in eight. ``binary`` is the default for ``embedded*`` judges.
"""

from __future__ import annotations

import json
from difflib import SequenceMatcher
from typing import Any

import sqlite_utils

from checkeval_core.checklists.augment import subject_noun
from checkeval_core.checklists.editing import questions
from checkeval_core.jsontext import find_json
from checkeval_core.judges.base import BinaryRequest, GenerateRequest
from checkeval_core.judges.fake import register_fake_generator, stable_unit
from checkeval_core.judges.registry import get_judge
from checkeval_core.prompts import checklist as P
from checkeval_core.prompts.judge import BINARY_SYSTEM
from checkeval_core.store import task_id, transaction
from checkeval_core.tasks import get_task

CRITERIA = ("alignment", "consistency", "redundancy")
MODES = ("json", "binary")
# lexical similarity from which a pair of questions is put to the judge as possibly redundant
REDUNDANCY_CANDIDATE = 0.6
#: p(Yes) from which to which (inclusive) a verdict is reported as "the judge is unsure"
UNSURE_BAND = (0.4, 0.6)
#: origins of questions a person wrote: a filter verdict only flags them
HUMAN_ORIGINS = ("seed", "edited")


def is_human(q: dict[str, Any]) -> bool:
    """Whether a person wrote the question (a seed, or a reviewer's edit)."""
    return q.get("origin") in HUMAN_ORIGINS or "seed" in (q.get("origins") or [])


def is_unsure(p_yes: float | None) -> bool:
    """Whether a p(Yes) is too close to 0.5 to call (inside :data:`UNSURE_BAND`)."""
    return p_yes is not None and UNSURE_BAND[0] <= float(p_yes) <= UNSURE_BAND[1]


def is_flagged(q: dict[str, Any]) -> bool:
    """A question a person wrote that the filter would remove, still in the pool: the
    person's call (Checklist review lists these as *flagged*)."""
    return (q.get("filter_verdict") == "remove" and q.get("status") in ("proposed", "kept")
            and is_human(q))


def default_mode(judge: str) -> str:
    """``binary`` for the embedded (small, local) judges, ``json`` for every other judge."""
    return "binary" if judge.split(":", 1)[0] == "embedded" else "json"


def parse_decisions(text: str) -> list[dict[str, Any]] | None:
    """The list of decisions from the judge's JSON (tolerates prose and code fences)."""
    data = find_json(text)
    if isinstance(data, dict):
        data = data.get("decisions")
    if not isinstance(data, list):
        return None
    return [d for d in data if isinstance(d, dict) and "id" in d]


def filter_dimension(db: sqlite_utils.Database, task: str, dimension: str, judge: str,
                     judge_obj: Any = None, mode: str | None = None) -> dict[str, Any]:
    """Filter the pooled (proposed and kept) questions of ``dimension``; returns
    ``{"decisions", "problems", "removed", "flagged", "unsure", "mode"}``: ``removed`` counts
    generated questions now ``filtered``, ``flagged`` the human-written ones the judge would
    remove (status unchanged), ``unsure`` the decisions with p(Yes) in :data:`UNSURE_BAND`.
    Each decision says its ``outcome`` (kept / filtered / flagged) and ``p_yes``."""
    mode = mode or default_mode(judge)
    if mode not in MODES:
        raise ValueError(f"--mode {mode!r}: use json or binary")
    tid = task_id(db, task)
    dim = db.execute("SELECT id, definition FROM dimension WHERE task_id = ? AND name = ?",
                     [tid, dimension]).fetchone()
    if dim is None:
        raise ValueError(f"task {task!r} has no dimension {dimension!r}")
    pool = [q for q in questions(db, task, dimension=dimension)
            if q["status"] in ("proposed", "kept")]
    if not pool:
        raise ValueError(f"dimension {dimension!r} has no questions to filter")
    j = judge_obj or get_judge(judge, db=db)
    if mode == "binary":
        decisions, problems = _binary_decisions(
            j, pool, dimension, dim[1] or "(none given)",
            subject_noun(get_task(db, task)["kind"]))
        applied = _apply(db, pool, decisions, judge)
        return {**applied, "problems": problems + applied["problems"], "mode": mode}
    listing = "\n".join(f"{i + 1}. {q['text']}" for i, q in enumerate(pool))
    req = GenerateRequest.chat(P.FILTER_SYSTEM, P.FILTER.format(
        dimension=dimension, definition=dim[1] or "(none given)", questions=listing),
        max_tokens=200 + 60 * len(pool), json_mode=True, purpose="filter",
        payload={"questions": [q["text"] for q in pool]})
    res = j.generate([req])[0]
    if res.error:
        return {**_NOTHING, "problems": [f"the judge failed: {res.error}"], "mode": mode}
    decisions = parse_decisions(res.text)
    if decisions is None:
        return {**_NOTHING, "problems": ["the judge's answer is not the JSON asked for; "
                                         "nothing was changed: " + res.text[:200]],
                "mode": mode}
    out = _apply(db, pool, decisions, judge)
    return {**out, "problems": out["problems"], "mode": mode}


_NOTHING: dict[str, Any] = {"decisions": [], "removed": 0, "flagged": 0, "unsure": 0}


def _binary_decisions(j: Any, pool: list[dict[str, Any]], dimension: str, definition: str,
                      noun: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Decisions in the JSON mode's shape from Yes/No checks: a question is removed when the
    judge says No to alignment or to consistency, or Yes to "same as an earlier question"
    for a lexically similar earlier one. An invalid answer decides nothing for its criterion."""
    ctx = (P.FILTER_CONTEXT.format(dimension=dimension, definition=definition, noun=noun),)
    reqs, keys = [], []
    for i, q in enumerate(pool):
        for crit, tmpl in (("alignment", P.FILTER_ALIGNMENT),
                           ("consistency", P.FILTER_CONSISTENCY)):
            reqs.append(BinaryRequest(BINARY_SYSTEM, ctx, tmpl.format(
                question=q["text"], noun=noun, dimension=dimension)))
            keys.append((crit, i, None))
    for a, b, _ in similar_pairs([q["text"] for q in pool], REDUNDANCY_CANDIDATE):
        reqs.append(BinaryRequest(BINARY_SYSTEM, ctx, P.FILTER_REDUNDANT.format(
            a=pool[a]["text"], b=pool[b]["text"])))
        keys.append(("redundancy", max(a, b), min(a, b)))
    results = j.binary(reqs)
    failed: dict[int, tuple[str, str, int | None, float | None]] = {}
    lowest: dict[int, float] = {}  # the weakest per-question p(Yes) of a kept question
    answered: set[int] = set()
    problems: list[str] = []
    medians = _pool_medians(keys, results)
    for (crit, i, other), res in zip(keys, results):
        if res.verdict == "invalid":
            problems.append(f"question {i + 1} ({crit}): no readable Yes/No"
                            + (f" ({res.error})" if res.error else ""))
            continue
        answered.add(i)
        if crit != "redundancy" and res.p_yes is not None:
            lowest[i] = min(lowest.get(i, 1.0), float(res.p_yes))
        fails = _fails(crit, res, medians.get(crit))
        if fails and i not in failed:
            conf = (f" (p(Yes) {res.p_yes:.2f})" if res.p_yes is not None
                    and not is_unsure(res.p_yes) else "")  # else said as "unsure"
            reason = {"alignment": f"a Yes would not mean a better {noun}",
                      "consistency": f"not about {dimension} as defined",
                      "redundancy": f"asks the same as question {(other or 0) + 1}"}[crit]
            failed[i] = (crit, reason + conf, other, res.p_yes)
    decisions = []
    for i in sorted(answered):
        if i in failed:
            crit, reason, other, p = failed[i]
            decisions.append({"id": i + 1, "keep": False, "criterion": crit, "reason": reason,
                              "duplicate_of": other + 1 if other is not None else None,
                              "p_yes": p})
        else:
            decisions.append({"id": i + 1, "keep": True, "criterion": "",
                              "reason": "passed the Yes/No checks", "duplicate_of": None,
                              "p_yes": lowest.get(i)})
    return decisions, problems


# how far below the pool's median p(Yes) a question must fall to fail a check
RELATIVE_MARGIN = 0.03


def _pool_medians(keys: list[tuple[str, int, int | None]], results: list[Any]) -> dict[str, float]:
    """Median p(Yes) per per-question criterion over the pool (when the judge gives p(Yes))."""
    import statistics

    by: dict[str, list[float]] = {}
    for (crit, _, _), res in zip(keys, results):
        if crit != "redundancy" and res.verdict != "invalid" and res.p_yes is not None:
            by.setdefault(crit, []).append(float(res.p_yes))
    return {c: statistics.median(v) for c, v in by.items() if len(v) >= 3}


def _fails(crit: str, res: Any, median: float | None) -> bool:
    """Whether one check fails. Redundancy: the judge says Yes ("the same thing"). Alignment
    and consistency: with p(Yes) over a pool of ≥ 3 questions, p(Yes) clearly below the pool's
    median — a small judge's p(Yes) is poorly calibrated (probe with the 0.5B model: 0.41–0.49
    for alignment on five questions, the two bad ones lowest, all verdicts "no"), so its
    ranking is used, not its 0.5 cut; otherwise the verdict "no"."""
    if crit == "redundancy":
        return res.verdict == "yes"
    if median is not None and res.p_yes is not None:
        return float(res.p_yes) < median - RELATIVE_MARGIN
    return res.verdict == "no"


def _apply(db: sqlite_utils.Database, pool: list[dict[str, Any]],
           decisions: list[dict[str, Any]], judge: str) -> dict[str, Any]:
    """Store the decisions on the pooled questions (one transaction)."""
    problems: list[str] = []
    out: list[dict[str, Any]] = []
    removed = flagged = unsure = 0
    with transaction(db):
        for d in decisions:
            try:
                idx = int(d["id"]) - 1
            except (TypeError, ValueError):
                problems.append(f"decision with a bad id: {d}")
                continue
            if not 0 <= idx < len(pool):
                problems.append(f"decision for unknown question {d['id']}")
                continue
            q = pool[idx]
            keep = d.get("keep") not in (False, "false", "no", 0)
            crit = str(d.get("criterion") or "")
            crit = crit if crit in CRITERIA else ("" if keep else "unspecified")
            dup = d.get("duplicate_of")
            dup_id = pool[int(dup) - 1]["id"] if isinstance(dup, int) and \
                0 < dup <= len(pool) and int(dup) - 1 != idx else None
            p_yes = d.get("p_yes")
            p_yes = float(p_yes) if isinstance(p_yes, (int, float)) else None
            doubt = is_unsure(p_yes)
            reason = str(d.get("reason", ""))
            if doubt:
                reason = f"the judge is unsure (p(Yes) {p_yes:.2f}): {reason}"
            db.execute("UPDATE question SET filter_verdict = ?, filter_criterion = ?, "
                       "filter_reason = ?, duplicate_of_id = ?, filter_model = ? WHERE id = ?",
                       ["keep" if keep else "remove", crit, reason[:500], dup_id, judge,
                        q["id"]])
            if keep:
                outcome = "kept"
            elif is_human(q):  # a person's question: the verdict is theirs to act on
                outcome = "flagged"
                flagged += 1
            else:
                db.execute("UPDATE question SET status = 'filtered', reason = ? WHERE id = ?",
                           [f"filter ({crit}): {reason}"[:500], q["id"]])
                outcome = "filtered"
                removed += 1
            unsure += doubt
            out.append({"id": q["id"], "text": q["text"], "origin": q["origin"],
                        "outcome": outcome, "keep": keep, "criterion": crit,
                        "reason": reason, "p_yes": p_yes, "unsure": doubt,
                        "duplicate_of": dup_id})
    missing = len(pool) - len(out)
    if missing:
        problems.append(f"{missing} question(s) got no decision and were left unchanged")
    return {"decisions": out, "problems": problems, "removed": removed, "flagged": flagged,
            "unsure": unsure}


def filter_summary(res: dict[str, Any]) -> str:
    """One line saying what a filter did, every count over the questions decided."""
    n = len(res["decisions"])
    text = f"{res['removed']} of {n} questions filtered out"
    if res.get("flagged"):
        text += (f"; {res['flagged']} question(s) you wrote would be removed by the judge: "
                 "flagged for you to decide on Checklist review (still kept)")
    if res.get("unsure"):
        lo, hi = UNSURE_BAND
        text += (f"; the judge is unsure on {res['unsure']} of {n} (p(Yes) between {lo:.2f} "
                 f"and {hi:.2f})")
    return text


def similar_pairs(texts: list[str], threshold: float = 0.75) -> list[tuple[int, int, float]]:
    """Near-duplicate pairs ``(i, j, score)`` by character-sequence similarity, best first."""
    pairs = []
    low = [t.lower() for t in texts]
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            s = SequenceMatcher(None, low[i], low[j]).ratio()
            if s >= threshold:
                pairs.append((i, j, round(s, 3)))
    return sorted(pairs, key=lambda p: -p[2])


def _fake_filter(req: GenerateRequest) -> str:
    qs = req.payload.get("questions", [])
    decisions = []
    for i, q in enumerate(qs):
        earlier = [k for k in range(i) if qs[k].lower() == q.lower()]
        if earlier:
            decisions.append({"id": i + 1, "keep": False, "criterion": "redundancy",
                              "reason": "same as an earlier question",
                              "duplicate_of": earlier[0] + 1})
        elif "any errors" in q.lower() or stable_unit("filter", q) < 0.15:
            decisions.append({"id": i + 1, "keep": False, "criterion": "alignment",
                              "reason": "a Yes would mean a worse text", "duplicate_of": None})
        else:
            decisions.append({"id": i + 1, "keep": True, "criterion": "", "reason": "fine",
                              "duplicate_of": None})
    return "Decisions below.\n" + json.dumps({"decisions": decisions})


register_fake_generator("filter", _fake_filter)
