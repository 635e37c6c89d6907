"""LLM filtering of the pooled questions of one dimension (CheckEval stage 2, filtering).

The judge checks every question for alignment ("Yes" = better), consistency with the
dimension's definition, and redundancy with another question; per question it gives
keep/remove, the failed criterion, a reason and, for redundancy, the duplicated question.
Removed questions become ``filtered`` (humans may override in the review queue); kept ones
keep their status. The verdict is stored on every question. An answer that cannot be read
changes nothing and is reported. A lexical similarity assist proposes near-duplicates.
"""

from __future__ import annotations

import json
from difflib import SequenceMatcher
from typing import Any

import sqlite_utils

from checkeval_core.checklists.model import questions
from checkeval_core.jsontext import find_json
from checkeval_core.judges.base import GenerateRequest
from checkeval_core.judges.fake import register_fake_generator, stable_unit
from checkeval_core.judges.registry import get_judge
from checkeval_core.prompts import checklist as P
from checkeval_core.store import task_id, transaction

CRITERIA = ("alignment", "consistency", "redundancy")


def parse_decisions(text: str) -> list[dict[str, Any]] | None:
    """The list of decisions from the judge's JSON (tolerates prose and code fences)."""
    data = find_json(text)
    if isinstance(data, dict):
        data = data.get("decisions")
    if not isinstance(data, list):
        return None
    return [d for d in data if isinstance(d, dict) and "id" in d]


def filter_dimension(db: sqlite_utils.Database, task: str, dimension: str, judge: str,
                     judge_obj: Any = None) -> dict[str, Any]:
    tid = task_id(db, task)
    dim = db.execute("SELECT id, definition FROM dimension WHERE task_id = ? AND name = ?",
                     [tid, dimension]).fetchone()
    if dim is None:
        raise ValueError(f"task {task!r} has no dimension {dimension!r}")
    pool = [q for q in questions(db, task, dimension=dimension)
            if q["status"] in ("proposed", "kept")]
    if not pool:
        raise ValueError(f"dimension {dimension!r} has no questions to filter")
    listing = "\n".join(f"{i + 1}. {q['text']}" for i, q in enumerate(pool))
    req = GenerateRequest.chat(P.FILTER_SYSTEM, P.FILTER.format(
        dimension=dimension, definition=dim[1] or "(none given)", questions=listing),
        max_tokens=200 + 60 * len(pool), json_mode=True, purpose="filter",
        payload={"questions": [q["text"] for q in pool]})
    res = (judge_obj or get_judge(judge, db=db)).generate([req])[0]
    if res.error:
        return {"decisions": [], "problems": [f"the judge failed: {res.error}"], "removed": 0}
    decisions = parse_decisions(res.text)
    if decisions is None:
        return {"decisions": [], "problems": ["the judge's answer is not the JSON asked for; "
                                              "nothing was changed: " + res.text[:200]],
                "removed": 0}
    problems, out, removed = [], [], 0
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
            db.execute("UPDATE question SET filter_verdict = ?, filter_criterion = ?, "
                       "filter_reason = ?, duplicate_of_id = ?, filter_model = ? WHERE id = ?",
                       ["keep" if keep else "remove", crit, str(d.get("reason", ""))[:500],
                        dup_id, judge, q["id"]])
            if not keep:
                db.execute("UPDATE question SET status = 'filtered', reason = ? WHERE id = ?",
                           [f"filter ({crit}): {d.get('reason', '')}"[:500], q["id"]])
                removed += 1
            out.append({"id": q["id"], "text": q["text"], "keep": keep, "criterion": crit,
                        "reason": d.get("reason", ""), "duplicate_of": dup_id})
    missing = len(pool) - len(out)
    if missing:
        problems.append(f"{missing} question(s) got no decision and were left unchanged")
    return {"decisions": out, "problems": problems, "removed": removed}


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
