"""RocketEval instance checklists: a judge writes 5–10 Yes/No questions for each item.

Questions are stored per item (origin ``instance``, status ``kept`` so they can be frozen
and run at once; reviewers can still reject or edit them in the same queue) under a
dimension ``overall`` / sub-dimension ``instance checklist``.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.checklists.model import add_question, ensure_dimension, ensure_sub
from checkeval_core.checklists.parse import parse_questions, question_flags
from checkeval_core.judges.base import GenerateRequest
from checkeval_core.judges.fake import register_fake_generator
from checkeval_core.judges.registry import get_judge
from checkeval_core.prompts import checklist as P
from checkeval_core.store import task_id
from checkeval_core.tasks import items

DIMENSION = "overall"
SUB = "instance checklist"


def generate_instance_checklists(db: sqlite_utils.Database, task: str, judge: str,
                                 limit: int | None = None, judge_obj: Any = None,
                                 include_reference: bool = True) -> dict[str, Any]:
    tid = task_id(db, task)
    its = [it for it in items(db, task, limit=limit)
           if not db.execute("SELECT 1 FROM question WHERE item_id = ?", [it["id"]]).fetchone()]
    if not its:
        return {"items": 0, "questions": 0, "problems": []}
    reqs = []
    for it in its:
        material = it["source"] or it["context"] or it["fact"]
        ref = it["reference"] if include_reference else ""
        reqs.append(GenerateRequest.chat(P.GEN_SYSTEM, P.INSTANCE.format(
            input=material, with_reference=" and a reference answer" if ref else "",
            reference=f"\nReference answer:\n{ref}\n" if ref else ""), max_tokens=500,
            purpose="instance_checklist", payload={"input": material}))
    results = (judge_obj or get_judge(judge, db=db)).generate(reqs)
    dim_id = ensure_dimension(db, tid, DIMENSION, "Overall quality of the answer to this request")
    sub_id = ensure_sub(db, dim_id, SUB, "Questions written for one item (RocketEval)")
    n, problems = 0, []
    for it, res in zip(its, results):
        if res.error:
            problems.append(f"item {it['item_id']}: the judge failed: {res.error}")
            continue
        qs, probs = parse_questions(res.text)
        problems += [f"item {it['item_id']}: {p}" for p in probs]
        if not 5 <= len(qs) <= 10:
            problems.append(f"item {it['item_id']}: {len(qs)} questions (5–10 asked)")
        for text in qs[:10]:
            add_question(db, tid, dim_id, sub_id, text, origin="instance", status="kept",
                         author="llm", model=judge, prompt_version=P.PROMPT_VERSION,
                         flags=question_flags(text), item_id=it["id"])
            n += 1
    return {"items": len(its), "questions": n, "problems": problems}


def _fake_instance(req: GenerateRequest) -> str:
    words = [w for w in req.payload.get("input", "").split() if len(w) > 4][:6] or ["request"]
    lines = [f"{i + 1}. Does the answer address '{w.strip('.,;:')}' correctly?"
             for i, w in enumerate(words)]
    extra = ["Is the answer complete?", "Is the answer accurate?", "Is the answer concise?",
             "Does the answer follow the requested format?", "Is the answer polite?"]
    while len(lines) < 5:
        lines.append(f"{len(lines) + 1}. {extra[len(lines) - len(words)]}")
    return "Checklist:\n" + "\n".join(lines)


register_fake_generator("instance_checklist", _fake_instance)
