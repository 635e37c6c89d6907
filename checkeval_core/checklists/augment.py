"""LLM augmentation of seed questions (CheckEval stage 2): diversification and elaboration.

Both strategies start from the human seed questions only — never from each other's output —
so they can run in any order or in parallel. Each generated question is stored as
``proposed`` with its origin, parent seed (elaboration: the seed it refines;
diversification: none, the sub-dimension's seeds are its context), the generating judge spec
and the prompt version, and flags for questions that are not Yes/No or not positive.

Two ways to ask (``mode``): ``list`` — one prompt per sub-dimension (or seed) returning a
numbered list, what a large judge does well; ``single`` — one question per generation, the
output held to a question's shape by a grammar (the embedded backend enforces it) and ``n``
samples drawn with different seeds — what a 0.5–1.5B local judge needs (asked for a list, it
repeats the seed and lists answer options). ``single`` is the default for ``embedded*`` judges.
``fresh=True`` asks afresh with new seeds instead of returning the cached answers.
"""

from __future__ import annotations

import random
import re
from difflib import SequenceMatcher
from typing import Any

import sqlite_utils

from checkeval_core.checklists.editing import add_question, norm, questions
from checkeval_core.checklists.parse import parse_questions, question_flags
from checkeval_core.judges.base import GenerateRequest
from checkeval_core.judges.fake import register_fake_generator, stable_unit
from checkeval_core.judges.model_files import quality_model_installed
from checkeval_core.judges.registry import get_judge
from checkeval_core.judges.spec import is_small_model
from checkeval_core.prompts import checklist as P
from checkeval_core.prompts.judge import OUTPUT_LABEL
from checkeval_core.store import task_id
from checkeval_core.tasks import get_task
from checkeval_core.team import guarded

STRATEGIES = {"diversify": "diversification", "elaborate": "elaboration"}
MODES = ("list", "single")
SAMPLE_TEMPERATURE = 0.7
_SUBJECTS = {"summary", "response", "answer", "reply", "output", "translation", "story"}



def read_questions(where: str, res: Any, problems: list[str]) -> list[str]:
    """The questions a generator's answer ``res`` holds; what went wrong (the call failed, a
    line could not be read, nothing could) is appended to ``problems`` under ``where``."""
    if res.error:
        problems.append(f"{where}: the judge failed: {res.error}")
        return []
    qs, probs = parse_questions(res.text)
    problems += [f"{where}: {p}" for p in probs]
    if not qs:
        snippet = " ".join(res.text.split())[:200]
        problems.append(f"{where}: no question could be read from the answer: {snippet!r}")
    return qs

def default_mode(judge: str) -> str:
    """``single`` for a backend declaring a small local model, ``list`` for every other."""
    return "single" if is_small_model(judge) else "list"


def generation_judge() -> str:
    """The judge preselected for writing questions: the 1.5B embedded model when its package
    is installed (it writes clearly better questions), else the 0.5B one."""
    return "embedded:quality" if quality_model_installed() else "embedded"


def subject_noun(kind: str) -> str:
    """What a task of this kind judges, as a noun for prompts: summary, response, output."""
    return OUTPUT_LABEL.get(kind, "Output").lower()


def wrong_subject(text: str, noun: str) -> bool:
    """True when a question names another kind of text than the task judges (a summary task
    asked "Does the answer…?") — such a question is off-topic for the task."""
    words = set(re.findall(r"[a-z]+", text.lower()))
    allowed = {noun, "text"} | ({"response", "reply"} if noun == "response" else set())
    return bool((words & _SUBJECTS) - allowed) and noun not in words


def usable(text: str, noun: str) -> bool:
    """A generated question a reviewer could keep as is: a positive Yes/No question about the
    task's own kind of text (no flag, no other subject)."""
    return not question_flags(text) and not wrong_subject(text, noun)


def _seeds_by_sub(db: sqlite_utils.Database, task: str, dimension: str) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for q in questions(db, task, dimension=dimension):
        if "seed" in q["origins"] and q["status"] != "rejected" and q["sub_dimension_id"]:
            out.setdefault(q["sub_dimension_id"], []).append(q)
    return out


@guarded("checklist.edit")
def augment(db: sqlite_utils.Database, task: str, dimension: str, strategy: str, judge: str,
            n: int = 4, judge_obj: Any = None, mode: str | None = None,
            fresh: bool = False) -> dict[str, Any]:
    """Run ``diversify`` or ``elaborate`` for every sub-dimension (or seed) of ``dimension``.

    Returns ``{"added": [...], "dropped": [...], "problems": [...], "flagged": n, "mode",
    "requests", "from_cache", "seed"}``: ``from_cache`` counts the answers served by the
    request cache (asking again without ``fresh`` returns them); nothing already present in
    the dimension is added twice — each question read but not added is in ``dropped``
    (``{"sub_dimension", "text", "why", "copy_of"}``: a copy, or in ``single`` mode a
    near-copy, of a seed or a question already there or written in this run).
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"--strategy {strategy!r}: use diversify or elaborate")
    mode = mode or default_mode(judge)
    if mode not in MODES:
        raise ValueError(f"--mode {mode!r}: use list or single")
    if not 1 <= n <= 20:
        raise ValueError(f"--n {n}: ask for 1 to 20 questions")
    origin = STRATEGIES[strategy]
    noun = subject_noun(get_task(db, task)["kind"])
    base_seed = random.SystemRandom().randrange(1, 2**31) if fresh else 0
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
    singles: list[tuple[int, list[dict], dict[str, Any]]] = []
    for sub_id, qs in seeds.items():
        base = dict(dimension=dimension, definition=dim[1] or "(none given)",
                    sub_dimension=subs[sub_id], n=n)
        if mode == "single":
            singles.append((sub_id, qs, base))
            continue
        sampling = ({"temperature": SAMPLE_TEMPERATURE, "seed": base_seed} if fresh else {})
        if strategy == "diversify":
            user = P.DIVERSIFY.format(seeds="\n".join(f"- {q['text']}" for q in qs), **base)
            jobs.append((sub_id, None, GenerateRequest.chat(
                P.GEN_SYSTEM, user, max_tokens=400, purpose="diversify", **sampling,
                payload={"sub_dimension": subs[sub_id], "seeds": [q["text"] for q in qs],
                         "n": n})))
        else:
            for q in qs:
                user = P.ELABORATE.format(seed=q["text"], **base)
                jobs.append((sub_id, q["id"], GenerateRequest.chat(
                    P.GEN_SYSTEM, user, max_tokens=400, purpose="elaborate", **sampling,
                    payload={"seed": q["text"], "n": n})))
    j = judge_obj or get_judge(judge, db=db)
    results = j.generate([r for _, _, r in jobs])
    for sub_id, qs, base in singles:
        for parent, req, res in _single_generate(j, strategy, qs, subs[sub_id], base, noun, n,
                                                 base_seed, fresh):
            jobs.append((sub_id, parent, req))
            results.append(res)
    existing = {q["text"] for q in questions(db, task, dimension=dimension)}
    # the prompt's worked example, which a small model likes to copy
    example = {P.ELABORATE_EXAMPLE_BROAD.format(noun=noun),
               P.ELABORATE_EXAMPLE_SPECIFIC.format(noun=noun)} if mode == "single" else set()
    added, dropped, problems, flagged = [], [], [], 0
    for (sub_id, parent, _), res in zip(jobs, results):
        where = subs[sub_id] + (f" / seed #{parent}" if parent else "")
        qs = read_questions(where, res, problems)
        if mode == "single":
            qs = qs[:1]
        for text in qs:
            text = norm(text)
            like = text if text in existing else (
                closest_copy(text, existing | example) if mode == "single" else None)
            if like is not None:  # said, never dropped silently
                dropped.append({"sub_dimension": where, "text": text, "copy_of": like,
                                "why": "the same as an existing question" if like == text
                                else "a near-copy (≥ 90 % the same characters) of "
                                     + ("the prompt's example" if like in example
                                        else "an existing question")})
                problems.append(f"{where}: copies an existing question, not added: {text}"
                                if like == text else
                                f"{where}: repeats an existing question: {text}")
                continue
            flags = question_flags(text)
            flagged += bool(flags)
            qid = add_question(db, tid, dim[0], sub_id, text, origin=origin, status="proposed",
                               parent_id=parent, author="llm", model=judge,
                               prompt_version=P.SINGLE_PROMPT_VERSION if mode == "single"
                               else P.PROMPT_VERSION, flags=flags)
            existing.add(text)
            added.append({"id": qid, "text": text, "sub_dimension": subs[sub_id],
                          "parent_id": parent, "flags": flags,
                          "usable": usable(text, noun)})
    return {"added": added, "dropped": dropped, "problems": problems, "flagged": flagged,
            "mode": mode,
            "requests": len(jobs), "from_cache": sum(bool(r.cached) for r in results),
            "seed": base_seed}


def request_count(db: sqlite_utils.Database, task: str, dimension: str, strategy: str,
                  n: int, mode: str) -> dict[str, int]:
    """What :func:`augment` will ask, before it asks: ``{"requests", "sub_dimensions",
    "seeds"}``. ``list`` mode sends one request per sub-dimension (diversify) or per seed
    question (elaborate), each asking for ``n`` questions; ``single`` mode sends ``n``
    one-question requests for each of them."""
    seeds = _seeds_by_sub(db, task, dimension)
    n_subs, n_seeds = len(seeds), sum(len(qs) for qs in seeds.values())
    targets = n_subs if strategy == "diversify" else n_seeds
    return {"requests": targets * (n if mode == "single" else 1), "sub_dimensions": n_subs,
            "seeds": n_seeds}


def questions_asked_text(count: dict[str, int], strategy: str, n: int, mode: str) -> str:
    """The Generate section's sentence: what "Questions asked" multiplies and how many
    requests the judge gets."""
    per = (f"{count['sub_dimensions']} sub-dimension(s)" if strategy == "diversify"
           else f"{count['seeds']} seed question(s)")
    each = "one request each" if mode == "list" else f"{n} one-question requests each"
    up_to = n * (count["sub_dimensions"] if strategy == "diversify" else count["seeds"])
    return (f"{n} question(s) asked for each of the dimension's {per} ({each}): "
            f"**{count['requests']} request(s)** to the judge, up to {up_to} new questions.")


def near_copy(text: str, existing: set[str], threshold: float = 0.9) -> bool:
    """True when ``text`` is an almost verbatim copy of a question already there."""
    return closest_copy(text, existing, threshold) is not None


def closest_copy(text: str, existing: set[str], threshold: float = 0.9) -> str | None:
    """The question of ``existing`` that ``text`` is an almost verbatim copy of (the most
    similar at ≥ ``threshold``), or None."""
    low = text.lower()
    best, score = None, threshold
    for e in sorted(existing):
        r = SequenceMatcher(None, low, e.lower()).ratio()
        if r >= score:
            best, score = e, r
    return best


def _single_generate(j: Any, strategy: str, seeds: list[dict], sub_name: str,
                     base: dict[str, Any], noun: str, n: int, base_seed: int,
                     fresh: bool) -> list[tuple[int | None, GenerateRequest, Any]]:
    """``n`` one-question generations per sub-dimension (diversify) or per seed (elaborate),
    one after the other: each prompt lists the questions written so far, and the k-th answer
    is made to start with the k-th of ``QUESTION_OPENINGS`` (a small model otherwise copies
    the question it was shown, greedy or sampled). Greedy, so asking again returns the cached
    questions; ``fresh`` samples, with other openings. Near-copies of existing questions are
    dropped and reported."""
    system = P.SINGLE_SYSTEM.format(noun=noun)
    sampling: dict[str, Any] = {"temperature": SAMPLE_TEMPERATURE} if fresh else {}
    if strategy == "diversify":
        targets = [(None, None)]
    else:
        targets = [(q["id"], q["text"]) for q in seeds]
    out: list[tuple[int | None, GenerateRequest, Any]] = []
    for parent, seed_text in targets:
        written: list[str] = []
        for i in range(n):
            if strategy == "diversify":
                asked = [q["text"] for q in seeds] + written
                user = P.DIVERSIFY_ONE.format(noun=noun, seeds="\n".join(
                    f"- {t}" for t in asked), **base)
                payload = {"sub_dimension": sub_name, "seeds": asked}
            else:
                user = P.ELABORATE_ONE.format(noun=noun, seed=seed_text, written="".join(
                    f"Already written (do not repeat): {t}\n" for t in written), **base)
                payload = {"seed": seed_text}
            opening = P.QUESTION_OPENINGS[(base_seed + i) % len(P.QUESTION_OPENINGS)]
            req = GenerateRequest.chat(
                system, user, max_tokens=80, grammar=P.opening_grammar(opening.format(noun=noun)),
                purpose="one_question",
                payload={**payload, "noun": noun, "i": base_seed + i},
                **({**sampling, "seed": base_seed + i + 1} if fresh else {}))
            res = j.generate([req])[0]
            out.append((parent, req, res))
            if not res.error and res.text.strip():
                written.append(" ".join(res.text.split())[:300])
    return out


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


def _fake_one(req: GenerateRequest) -> str:
    """One question (the ``i``-th of a fixed list about the seed's topic); like the embedded
    judge, the same request (seed included) gives the same question."""
    p = req.payload
    topic = (p.get("sub_dimension") or p.get("seed") or "the text").lower().rstrip("?")
    noun = p.get("noun", "text")
    stems = ["Is the {n}'s {t} consistent from start to end?",
             "Does the {n} keep its {t} clear for a new reader?",
             "Are the {n}'s claims about {t} supported?",
             "Does the {n} handle {t} without repeating itself?",
             "Is every sentence of the {n} relevant to {t}?"]
    k = int(stable_unit(topic) * len(stems)) + int(p.get("i", 0))
    return stems[k % len(stems)].format(n=noun, t=topic)


def augment_summary(res: dict[str, Any]) -> tuple[str, str]:
    """What :func:`augment` did, in words: ``(summary, cache note)``; the note (empty when
    every answer was new) says why nothing new may appear and how to ask afresh."""
    summary = (f"{len(res['added'])} questions proposed ({res['flagged']} flagged) from "
               f"{res['requests']} request(s)")
    dropped = res.get("dropped") or []
    if dropped:
        near = sum(d["copy_of"] != d["text"] for d in dropped)
        summary += (f"; {len(dropped)} dropped as copies of questions already there"
                    + (f" ({near} near-copies)" if near else "") + ": listed below")
    note = (f"{res['from_cache']} of {res['requests']} answers came from the cache (the same "
            "request was asked before), so nothing new may appear: press *Generate again (new "
            "samples)* to ask afresh." if res["from_cache"] else "")
    return summary, note


register_fake_generator("diversify", _fake_list)
register_fake_generator("elaborate", _fake_list)
register_fake_generator("one_question", _fake_one)
