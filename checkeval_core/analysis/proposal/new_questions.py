"""New questions for a proposal (only when asked): where the kept questions order a dev pair
of answers against the evidence (largest label gap first), a judge is shown the better- and
worse-rated answer and the kept questions and writes one question (prompt in
:mod:`checkeval_core.prompts.proposal`). Their cost — generation calls, then judge calls on the
task's items — is reported before anything is asked (:func:`new_question_plan`).

The fake judge writes a question about a word the better answer has and the worse lacks
(registered here, so a proposal with the fake judge works offline).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.analysis.proposal.evidence import Evidence, ProposalError, subset_scores
from checkeval_core.checklists.augment import near_copy, subject_noun
from checkeval_core.checklists.parse import question_flags
from checkeval_core.judges.base import GenerateRequest
from checkeval_core.judges.fake import register_fake_generator
from checkeval_core.judges.registry import get_judge
from checkeval_core.prompts import proposal as PP
from checkeval_core.store import rows, task_id
from checkeval_core.tasks import get_task

MAX_NEW = 20
EXCERPT = 1500  # characters of each answer shown to the question writer


def _disagreements(ev: Evidence, keep: np.ndarray, weights: np.ndarray | None
                   ) -> list[tuple[str, str, int, int]]:
    """Dev groups the kept questions explain worst, as ``(dimension, group, better row,
    worse row)``: the pair of dev answers with the largest label gap that the kept
    questions' score orders the wrong way (or ties), largest gap first."""
    dev = ev.items["dev"].to_numpy(bool)
    sc = subset_scores(ev, keep, weights)
    gcol = ev.items["group"].to_numpy()
    out = []
    for dim, s in sc.items():
        if ev.kind == "human_scores":
            label = ev.human.get(dim)
            if label is None:
                continue
        elif ev.kind == "reference_ratings":
            label = ev.items["system"].map(ev.ratings).to_numpy(float)
        else:
            continue
        for g in sorted(set(gcol[dev])):
            rows_ = np.where(dev & (gcol == g) & ~np.isnan(label) & ~np.isnan(s))[0]
            best = None
            for i in rows_:
                for j in rows_:
                    gap = label[i] - label[j]
                    if gap > 0 and s[i] <= s[j] and (best is None or gap > best[0]):
                        best = (gap, i, j)
            if best:
                out.append((best[0], dim, g, best[1], best[2]))
    return [(d, g, int(i), int(j)) for _, d, g, i, j in sorted(out, key=lambda x: -x[0])]


def _per_query(ev: Evidence) -> bool:
    """Whether the checklist is per query (a new question then goes to its source's query):
    a question of one query, or one asked of every query as a copy per query."""
    return any(q["group_id"] or len(q.get("ids", ())) > 1 for q in ev.questions)


def new_question_plan(db: sqlite_utils.Database, ev: Evidence, keep: np.ndarray,
                      weights: np.ndarray | None, n: int) -> dict[str, Any]:
    """Where ``n`` new questions would come from and what they cost, before anything is asked:
    ``{"n", "sources": [{dimension, group, better, worse}], "generation_calls",
    "judge_calls", "judge_calls_note", "reason"}`` (``judge_calls``: answers a run of the
    revised version needs for them — only these are new, the kept ones are answered)."""
    if not 0 <= n <= MAX_NEW:
        raise ProposalError(f"--new-questions {n}: ask for 0 to {MAX_NEW}")
    pairs = _disagreements(ev, keep, weights)[:n] if n else []
    per_query = _per_query(ev)
    tid = task_id(db, ev.task)
    calls = 0
    for _dim, g, _i, _j in pairs:
        calls += db.execute("SELECT COUNT(*) FROM item WHERE task_id = ?" + (
            " AND group_id = ?" if per_query else ""),
            [tid, g] if per_query else [tid]).fetchone()[0]
    pk = ev.items["item_pk"].to_numpy()
    return {"n": len(pairs), "asked": n,
            "sources": [{"dimension": d, "group": g, "better_item": int(pk[i]),
                         "worse_item": int(pk[j])} for d, g, i, j in pairs],
            "generation_calls": len(pairs), "judge_calls": calls,
            "judge_calls_note": ("per run of the revised version: each new question on "
                                 + ("its query's items" if per_query else "every item of the "
                                    "task") + "; kept questions are already answered"),
            "reason": None if len(pairs) >= n else (
                f"only {len(pairs)} dev group(s) have a pair of answers the kept questions "
                "order against the evidence")}


def generate_new_questions(db: sqlite_utils.Database, ev: Evidence, plan: dict[str, Any],
                           judge: str, judge_obj: Any = None) -> list[dict[str, Any]]:
    """Ask ``judge`` for one question per planned source; ``[{text, dimension, group_id,
    source, problem}]`` (a question that is not Yes/No or copies a kept one has a problem and
    is not queued)."""
    j = judge_obj or get_judge(judge, db)
    noun = subject_noun(get_task(db, ev.task)["kind"])
    per_query = _per_query(ev)
    out = []
    for src in plan["sources"]:
        it = {r["id"]: r for r in rows(db, "SELECT id, output, context, source FROM item "
                                           "WHERE id IN (?, ?)",
                                       [src["better_item"], src["worse_item"]])}
        better, worse = it[src["better_item"]], it[src["worse_item"]]
        kept = [q["text"] for q in ev.questions
                if q["dimension"] == src["dimension"]
                and (not per_query or q["group_id"] in ("", src["group"]))]
        query = (f"Query: {better['context'] or better['source']}\n\n"[:EXCERPT + 10]
                 if (better["context"] or better["source"]) else "")
        user = PP.PROPOSE_QUESTION.format(
            dimension=src["dimension"], query=query, better=better["output"][:EXCERPT],
            worse=worse["output"][:EXCERPT], noun=noun,
            kept="\n".join(f"- {t}" for t in kept) or "(nothing yet)")
        req = GenerateRequest.chat(PP.PROPOSE_SYSTEM.format(noun=noun), user, max_tokens=80,
                                   purpose="propose_question",
                                   payload={"better": better["output"], "worse":
                                            worse["output"], "noun": noun,
                                            "dimension": src["dimension"]})
        res = j.generate([req])[0]
        text = " ".join((res.text or "").split()).lstrip("-*0123456789. ").strip()
        problem = res.error or None
        if not problem and not text:
            problem = "the judge returned an empty answer"
        elif not problem and "not_yes_no" in question_flags(text):
            problem = "not a yes/no question"
        elif not problem and near_copy(text, set(kept) | {o["text"] for o in out}):
            problem = "a near-copy of a question already there"
        out.append({"text": text, "dimension": src["dimension"],
                    "group_id": src["group"] if per_query else "", "source": src,
                    "problem": problem, "judge": judge, "prompt_version": PP.PROMPT_VERSION})
    return out


def _fake_propose(req: Any) -> str:
    """The fake judge's question: about a word the better answer has and the worse lacks."""
    p = req.payload
    worse = set(str(p.get("worse", "")).lower().split())
    words = [w.strip(".,;:!?\"'()").lower() for w in str(p.get("better", "")).split()]
    new = [w for w in words if len(w) > 3 and w not in worse] or ["detail"]
    return f"Does the {p.get('noun', 'text')} mention {new[0]}?"


register_fake_generator("propose_question", _fake_propose)
