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
judge does for most questions, so such a verdict is shown as "the judge is unsure" — and it
never changes a status: an unsure "remove" is stored as the verdict ``unsure`` only.

Who wrote a question: a person (a seed, a reviewer's edit) or an imported file — a published
checklist such as the CheckEval authors' counts as human-written, so the filter only flags it.

What is filtered (``scope``, :data:`SCOPES`): by default the new proposals only; the kept
questions of the dimension are shown to the judge as context for redundancy (a proposal that
repeats a kept question is removed) but never decided on. ``all`` re-checks every pooled
(proposed and kept) question. :func:`filter_plan` says what a filter will cost before it
starts — the judge calls, and the time at the rate measured on the last filter with the same
judge and mode (every filter records its calls and seconds in the review history).

Two ways to ask (``mode``): ``json`` — the whole pool in one prompt, decisions as one JSON
object (what a large judge does well); ``binary`` — one Yes/No check per question and
criterion (alignment, consistency) plus one per lexically similar pair (redundancy), so
every question gets a decision even from a 0.5B local judge, which completes a long JSON
answer for one question in eight. ``binary`` is the default for ``embedded*`` judges.
"""

from __future__ import annotations

import json
import statistics
import time
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Any

import sqlite_utils

from checkeval_core.checklists.augment import subject_noun
from checkeval_core.checklists.editing import questions
from checkeval_core.checklists.review import mark_filtered, record_event
from checkeval_core.jsontext import find_json
from checkeval_core.judges.base import BinaryRequest, GenerateRequest
from checkeval_core.judges.fake import register_fake_generator, stable_unit
from checkeval_core.judges.registry import get_judge
from checkeval_core.judges.spec import is_small_model
from checkeval_core.prompts import checklist as P
from checkeval_core.prompts.judge import BINARY_SYSTEM
from checkeval_core.store import loads, task_id, transaction
from checkeval_core.tasks import get_task
from checkeval_core.team import guarded

CRITERIA = ("alignment", "consistency", "redundancy")
MODES = ("json", "binary")
# lexical similarity from which a pair of questions is put to the judge as possibly redundant
REDUNDANCY_CANDIDATE = 0.6
#: p(Yes) from which to which (inclusive) a verdict is reported as "the judge is unsure"
UNSURE_BAND = (0.4, 0.6)
#: origins of questions a person wrote: a filter verdict only flags them
HUMAN_ORIGINS = ("seed", "edited")
#: what a filter decides on: the new proposals (default) or every pooled question
SCOPES = ("proposed", "all")
#: the author the app's generators record; any other author without a model is a file's
GENERATED_AUTHOR = "llm"


def is_human(q: dict[str, Any]) -> bool:
    """Whether a person wrote the question: a seed, a reviewer's edit, or a question imported
    from a file (e.g. the CheckEval authors' published checklist: no model of this app wrote
    it, whatever origin the file gives it)."""
    return (q.get("origin") in HUMAN_ORIGINS or "seed" in (q.get("origins") or [])
            or (q.get("author") not in ("", GENERATED_AUTHOR) and not q.get("model")))


def is_unsure(p_yes: float | None) -> bool:
    """Whether a p(Yes) is too close to 0.5 to call (inside :data:`UNSURE_BAND`)."""
    return p_yes is not None and UNSURE_BAND[0] <= float(p_yes) <= UNSURE_BAND[1]


def is_flagged(q: dict[str, Any]) -> bool:
    """A question a person wrote that the filter would remove, still in the pool: the
    person's call (Checklist review lists these as *flagged*)."""
    return (q.get("filter_verdict") == "remove" and q.get("status") in ("proposed", "kept")
            and is_human(q))


def default_mode(judge: str) -> str:
    """``binary`` for a backend declaring a small local model, ``json`` for every other."""
    return "binary" if is_small_model(judge) else "json"


def parse_decisions(text: str) -> list[dict[str, Any]] | None:
    """The list of decisions from the judge's JSON (tolerates prose and code fences)."""
    data = find_json(text)
    if isinstance(data, dict):
        data = data.get("decisions")
    if not isinstance(data, list):
        return None
    return [d for d in data if isinstance(d, dict) and "id" in d]


def _pool(db: sqlite_utils.Database, task: str, dimension: str, mode: str | None, judge: str,
          scope: str) -> tuple[int, Any, list[dict[str, Any]], set[int], str]:
    """``(task id, dimension row, pool, ids to decide, mode)``: the pool lists the kept
    questions first (context), then the proposals; a ValueError names a bad option."""
    mode = mode or default_mode(judge)
    if mode not in MODES:
        raise ValueError(f"--mode {mode!r}: use json or binary")
    if scope not in SCOPES:
        raise ValueError(f"--scope {scope!r}: use proposed (the new proposals) or all (every "
                         "proposed and kept question)")
    tid = task_id(db, task)
    dim = db.execute("SELECT id, definition FROM dimension WHERE task_id = ? AND name = ?",
                     [tid, dimension]).fetchone()
    if dim is None:
        raise ValueError(f"task {task!r} has no dimension {dimension!r}")
    qs = questions(db, task, dimension=dimension)
    pool = ([q for q in qs if q["status"] == "kept"]
            + [q for q in qs if q["status"] == "proposed"])
    targets = {q["id"] for q in pool if scope == "all" or q["status"] == "proposed"}
    if not pool:
        raise ValueError(f"dimension {dimension!r} has no questions to filter")
    if not targets:
        raise ValueError(f"dimension {dimension!r} has no new proposals to filter (its "
                         f"{len(pool)} question(s) are kept); generate some first, or choose "
                         "all pooled questions (--scope all) to re-check the kept ones")
    return tid, dim, pool, targets, mode


def _binary_plan(pool: list[dict[str, Any]], targets: set[int]
                 ) -> tuple[list[int], list[tuple[int, int, float]]]:
    """The pool indices asked about per criterion, and the lexically similar pairs that
    involve a question to decide (the later one of the pair is the one removed)."""
    asked = [i for i, q in enumerate(pool) if q["id"] in targets]
    pairs = [(a, b, s) for a, b, s in similar_pairs([q["text"] for q in pool],
                                                    REDUNDANCY_CANDIDATE)
             if pool[max(a, b)]["id"] in targets]
    return asked, pairs


def measured_rate(db: sqlite_utils.Database, judge: str, mode: str) -> dict[str, Any] | None:
    """Seconds per judge call measured on the last filter with this judge and mode that asked
    the judge afresh (not from the cache): ``{"seconds_per_call", "calls", "seconds",
    "when"}``, None when there is none."""
    for detail, when in db.execute(
            "SELECT detail, created_at FROM review_event WHERE action = 'filter_run' AND "
            "actor = ? ORDER BY id DESC LIMIT 50", [judge]).fetchall():
        d = loads(detail, {})
        if d.get("mode") == mode and d.get("fresh_calls"):
            return {"seconds_per_call": d["seconds"] / d["fresh_calls"],
                    "calls": d["fresh_calls"], "seconds": d["seconds"], "when": when}
    return None


def filter_plan(db: sqlite_utils.Database, task: str, dimension: str, judge: str,
                mode: str | None = None, scope: str = "proposed") -> dict[str, Any]:
    """What :func:`filter_dimension` will do and cost, before it starts: ``{"scope", "mode",
    "n_questions" (decided), "n_context" (kept questions shown for redundancy only),
    "calls", "seconds" (None when no rate was measured), "rate", "line"}``. Nothing is asked
    of the judge; bad options raise ValueError as the filter would."""
    _, _, pool, targets, mode = _pool(db, task, dimension, mode, judge, scope)
    if mode == "binary":
        asked, pairs = _binary_plan(pool, targets)
        calls, kind = 2 * len(asked) + len(pairs), "Yes/No checks"
    else:
        calls, kind = 1, "generation (the whole pool in one answer)"
    rate = measured_rate(db, judge, mode)
    seconds = None if rate is None else calls * rate["seconds_per_call"]
    n_ctx = len(pool) - len(targets)
    line = (f"Filters {len(targets)} question(s)"
            + (f" ({n_ctx} kept question(s) shown to the judge for redundancy only)"
               if n_ctx else "")
            + f": {calls} judge call(s) — {kind}, with {judge}; "
            + (f"about {_duration(seconds)} at {rate['seconds_per_call']:.1f} s per call "
               f"measured on the last filter with this judge ({rate['calls']} calls in "
               f"{_duration(rate['seconds'])}); answers already cached are faster"
               if rate else "time not known yet (no filter with this judge measured here; "
                            "this one will be)"))
    return {"scope": scope, "mode": mode, "n_questions": len(targets), "n_context": n_ctx,
            "calls": calls, "seconds": seconds, "rate": rate, "line": line}


def _duration(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


@guarded("checklist.edit")
def filter_dimension(db: sqlite_utils.Database, task: str, dimension: str, judge: str,
                     judge_obj: Any = None, mode: str | None = None,
                     scope: str = "proposed") -> dict[str, Any]:
    """Filter ``dimension``: the new proposals (``scope="proposed"``, the default; the kept
    questions are context for redundancy) or every pooled question (``"all"``). Returns
    ``{"decisions", "problems", "removed", "flagged", "unsure", "mode", "scope", "calls",
    "seconds"}``: ``removed`` counts generated questions now ``filtered``, ``flagged`` the
    human-written ones the judge would remove (status unchanged), ``unsure`` the decisions
    with p(Yes) in :data:`UNSURE_BAND` (status unchanged). Each decision says its ``outcome``
    (kept / filtered / flagged / unsure) and ``p_yes``."""
    tid, dim, pool, targets, mode = _pool(db, task, dimension, mode, judge, scope)
    j = judge_obj or get_judge(judge, db=db)
    t0 = time.monotonic()
    if mode == "binary":
        decisions, problems, calls, fresh = _binary_decisions(
            j, pool, dimension, dim[1] or "(none given)",
            subject_noun(get_task(db, task)["kind"]), targets)
        applied = _apply(db, pool, decisions, judge, targets)
        _record_run(db, tid, dimension, judge, mode, scope, calls, fresh,
                    time.monotonic() - t0, applied)
        return {**applied, "problems": problems + applied["problems"], "mode": mode,
                "scope": scope, "calls": calls, "seconds": time.monotonic() - t0}
    listing = "\n".join(f"{i + 1}. {q['text']}" for i, q in enumerate(pool))
    req = GenerateRequest.chat(P.FILTER_SYSTEM, P.FILTER.format(
        dimension=dimension, definition=dim[1] or "(none given)", questions=listing),
        max_tokens=200 + 60 * len(pool), json_mode=True, purpose="filter",
        payload={"questions": [q["text"] for q in pool]})
    res = j.generate([req])[0]
    seconds = time.monotonic() - t0
    done = {"mode": mode, "scope": scope, "calls": 1, "seconds": seconds}
    if res.error:
        return {**_NOTHING, "problems": [f"the judge failed: {res.error}"], **done}
    decisions = parse_decisions(res.text)
    if decisions is None:
        return {**_NOTHING, "problems": ["the judge's answer is not the JSON asked for; "
                                         "nothing was changed: " + res.text[:200]], **done}
    out = _apply(db, pool, decisions, judge, targets)
    _record_run(db, tid, dimension, judge, mode, scope, 1,
                0 if getattr(res, "cached", False) else 1, seconds, out)
    return {**out, "problems": out["problems"], **done}


_NOTHING: dict[str, Any] = {"decisions": [], "removed": 0, "flagged": 0, "unsure": 0}


def _record_run(db: sqlite_utils.Database, tid: int, dimension: str, judge: str, mode: str,
                scope: str, calls: int, fresh: int, seconds: float, out: dict[str, Any]) -> None:
    """One ``filter_run`` event in the review history: what was asked and how long it took
    (the rate :func:`filter_plan` quotes next time)."""
    record_event(db, tid, "filter", "filter_run", actor=judge, detail={
        "dimension": dimension, "mode": mode, "scope": scope, "calls": calls,
        "fresh_calls": fresh, "seconds": round(seconds, 3), "n_decided": len(out["decisions"]),
        "removed": out["removed"], "flagged": out["flagged"], "unsure": out["unsure"]})


def _binary_decisions(j: Any, pool: list[dict[str, Any]], dimension: str, definition: str,
                      noun: str, targets: set[int] | None = None
                      ) -> tuple[list[dict[str, Any]], list[str], int, int]:
    """Decisions in the JSON mode's shape from Yes/No checks, for the questions of ``targets``
    (default: all): a question is removed when the judge says No to alignment or to
    consistency, or Yes to "same as an earlier question" for a lexically similar earlier one
    of the pool. An invalid answer decides nothing for its criterion. Also returns the number
    of calls and of calls not answered from the cache."""
    targets = {q["id"] for q in pool} if targets is None else targets
    asked, pairs = _binary_plan(pool, targets)
    ctx = (P.FILTER_CONTEXT.format(dimension=dimension, definition=definition, noun=noun),)
    reqs, keys = [], []
    for i in asked:
        q = pool[i]
        for crit, tmpl in (("alignment", P.FILTER_ALIGNMENT),
                           ("consistency", P.FILTER_CONSISTENCY)):
            reqs.append(BinaryRequest(BINARY_SYSTEM, ctx, tmpl.format(
                question=q["text"], noun=noun, dimension=dimension)))
            keys.append((crit, i, None))
    for a, b, _ in pairs:
        reqs.append(BinaryRequest(BINARY_SYSTEM, ctx, P.FILTER_REDUNDANT.format(
            a=pool[a]["text"], b=pool[b]["text"])))
        keys.append(("redundancy", max(a, b), min(a, b)))
    results = j.binary(reqs)
    fresh = sum(not getattr(r, "cached", False) for r in results)
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
    return decisions, problems, len(reqs), fresh


# how far below the pool's median p(Yes) a question must fall to fail a check
RELATIVE_MARGIN = 0.03


def _pool_medians(keys: list[tuple[str, int, int | None]], results: list[Any]) -> dict[str, float]:
    """Median p(Yes) per per-question criterion over the pool (when the judge gives p(Yes))."""
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
           decisions: list[dict[str, Any]], judge: str,
           targets: set[int] | None = None) -> dict[str, Any]:
    """Store the decisions on the questions of ``targets`` (default: the whole pool; a
    decision on a question given as context is ignored) in one transaction. A status changes
    only for a generated question the judge surely removes; the change is appended to the
    review history."""
    targets = {q["id"] for q in pool} if targets is None else targets
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
            if q["id"] not in targets:  # context for redundancy, not asked about
                continue
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
            verdict = "keep" if keep else "unsure" if doubt else "remove"
            db.execute("UPDATE question SET filter_verdict = ?, filter_criterion = ?, "
                       "filter_reason = ?, duplicate_of_id = ?, filter_model = ? WHERE id = ?",
                       [verdict, crit, reason[:500], dup_id, judge, q["id"]])
            if keep:
                outcome = "kept"
            elif doubt:  # an unsure verdict never changes a status
                outcome = "unsure"
            elif is_human(q):  # a person's question: the verdict is theirs to act on
                outcome = "flagged"
                flagged += 1
            else:
                mark_filtered(db, q, f"filter ({crit}): {reason}"[:500], judge)
                outcome = "filtered"
                removed += 1
            unsure += doubt
            out.append({"id": q["id"], "text": q["text"], "origin": q["origin"],
                        "outcome": outcome, "keep": keep, "criterion": crit,
                        "reason": reason, "p_yes": p_yes, "unsure": doubt,
                        "duplicate_of": dup_id})
    missing = len(targets) - len(out)
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
                 f"and {hi:.2f}: statuses left unchanged)")
    if res.get("seconds") is not None and res.get("calls"):
        text += f" — {res['calls']} judge call(s) in {_duration(res['seconds'])}"
    return text


def similar_pairs(texts: list[str], threshold: float = 0.75) -> list[tuple[int, int, float]]:
    """Near-duplicate pairs ``(i, j, score)`` by character-sequence similarity, best first.

    Quadratic in the number of texts: the result is kept for the last texts asked about, so
    the filter's cost line, shown on every redraw of the Dimensions page, and the filter
    itself compute it once."""
    return list(_similar_pairs(tuple(texts), float(threshold)))


@lru_cache(maxsize=16)
def _similar_pairs(texts: tuple[str, ...], threshold: float) -> tuple[tuple[int, int, float], ...]:
    pairs = []
    low = [t.lower() for t in texts]
    sm = SequenceMatcher(None)
    for j in range(len(texts)):
        sm.set_seq2(low[j])  # the matcher indexes its second text once for every pair
        for i in range(j):
            sm.set_seq1(low[i])
            # real_quick_ratio and quick_ratio are upper bounds of ratio: pairs far apart
            # skip the exact ratio
            if sm.real_quick_ratio() < threshold or sm.quick_ratio() < threshold:
                continue
            s = sm.ratio()
            if s >= threshold:
                pairs.append((i, j, round(s, 3)))
    return tuple(sorted(pairs, key=lambda p: (-p[2], p[0], p[1])))


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
