"""LLM augmentation of seed questions (CheckEval stage 2): diversification and elaboration.

Both strategies start from the human seed questions only — never from each other's output —
so they can run in any order or in parallel. Each generated question is stored as
``proposed`` with its origin, parent seed (elaboration: the seed it refines;
diversification: none, the sub-dimension's seeds are its context), the generating judge spec
and the prompt version, and flags for questions that are not Yes/No or not positive.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.checklists.model import add_question, norm, questions
from checkeval_core.checklists.parse import parse_questions, question_flags
from checkeval_core.judges.base import GenerateRequest
from checkeval_core.judges.fake import register_fake_generator, stable_unit
from checkeval_core.judges.registry import get_judge
from checkeval_core.prompts import checklist as P
from checkeval_core.store import task_id

STRATEGIES = {"diversify": "diversification", "elaborate": "elaboration"}


def _seeds_by_sub(db: sqlite_utils.Database, task: str, dimension: str) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for q in questions(db, task, dimension=dimension):
        if "seed" in q["origins"] and q["status"] != "rejected" and q["sub_dimension_id"]:
            out.setdefault(q["sub_dimension_id"], []).append(q)
    return out


def augment(db: sqlite_utils.Database, task: str, dimension: str, strategy: str, judge: str,
            n: int = 4, judge_obj: Any = None) -> dict[str, Any]:
    """Run ``diversify`` or ``elaborate`` for every sub-dimension (or seed) of ``dimension``.

    Returns ``{"added": [...], "problems": [...], "flagged": n}``; nothing already present in
    the dimension is added twice.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"--strategy {strategy!r}: use diversify or elaborate")
    origin = STRATEGIES[strategy]
    tid = task_id(db, task)
    dim = db.execute("SELECT id, definition FROM dimension WHERE task_id = ? AND name = ?",
                     [tid, dimension]).fetchone()
    if dim is None:
        raise ValueError(f"task {task!r} has no dimension {dimension!r}")
    seeds = _seeds_by_sub(db, task, dimension)
    if not seeds:
        raise ValueError(f"dimension {dimension!r} has no seed questions to start from")
    subs = {r[0]: r[1] for r in db.execute(
        "SELECT id, name FROM sub_dimension WHERE dimension_id = ?", [dim[0]])}
    jobs: list[tuple[int, int | None, GenerateRequest]] = []
    for sub_id, qs in seeds.items():
        base = dict(dimension=dimension, definition=dim[1] or "(none given)",
                    sub_dimension=subs[sub_id], n=n)
        if strategy == "diversify":
            user = P.DIVERSIFY.format(seeds="\n".join(f"- {q['text']}" for q in qs), **base)
            jobs.append((sub_id, None, GenerateRequest.chat(
                P.GEN_SYSTEM, user, max_tokens=400, purpose="diversify",
                payload={"sub_dimension": subs[sub_id], "seeds": [q["text"] for q in qs],
                         "n": n})))
        else:
            for q in qs:
                user = P.ELABORATE.format(seed=q["text"], **base)
                jobs.append((sub_id, q["id"], GenerateRequest.chat(
                    P.GEN_SYSTEM, user, max_tokens=400, purpose="elaborate",
                    payload={"seed": q["text"], "n": n})))
    j = judge_obj or get_judge(judge, db=db)
    results = j.generate([r for _, _, r in jobs])
    existing = {q["text"] for q in questions(db, task, dimension=dimension)}
    added, problems, flagged = [], [], 0
    for (sub_id, parent, _), res in zip(jobs, results):
        where = subs[sub_id] + (f" / seed #{parent}" if parent else "")
        if res.error:
            problems.append(f"{where}: the judge failed: {res.error}")
            continue
        qs, probs = parse_questions(res.text)
        problems += [f"{where}: {p}" for p in probs]
        if not qs:
            problems.append(f"{where}: no question could be read from the answer")
        for text in qs:
            text = norm(text)
            if text in existing:
                continue
            flags = question_flags(text)
            flagged += bool(flags)
            qid = add_question(db, tid, dim[0], sub_id, text, origin=origin, status="proposed",
                               parent_id=parent, author="llm", model=judge,
                               prompt_version=P.PROMPT_VERSION, flags=flags)
            existing.add(text)
            added.append({"id": qid, "text": text, "sub_dimension": subs[sub_id],
                          "parent_id": parent, "flags": flags})
    return {"added": added, "problems": problems, "flagged": flagged}


# -- the fake judge's deterministic answers (tests, UI development) -----------------------------
def _fake_list(req: GenerateRequest) -> str:
    p = req.payload
    topic = p.get("sub_dimension") or p.get("seed", "the text")
    base = p.get("seed") or (p.get("seeds") or ["the text"])[0]
    stems = ["Is the {t} handled consistently in every sentence?",
             "Does the text keep the {t} clear for a reader who skipped the source?",
             "Are all claims related to the {t} supported?",
             "Does the text contain any errors about the {t}?",
             "Summarize the {t} in one line."]
    k = int(stable_unit(base) * len(stems))
    chosen = [stems[(k + i) % len(stems)].format(t=topic.lower().rstrip("?"))
              for i in range(min(int(p.get("n", 3)), 4))]
    return "Here are the questions:\n" + "\n".join(f"{i + 1}. {q}" for i, q in
                                                  enumerate(chosen)) + "\nI hope this helps!"


register_fake_generator("diversify", _fake_list)
register_fake_generator("elaborate", _fake_list)
