"""Questions grounded in examples (AutoChecklist's contrastive and inductive generators, started
from what people did rather than from a model's idea of quality), and the one entry point of
every generation strategy (:func:`generate`).

* **contrastive** — per dimension, pairs of outputs on the same source (group) whose people's
  scores differ most: in each **dev** group (the task's split; held-out groups are never read)
  the highest and the lowest scored output, the groups with the largest difference first; the
  judge is shown the pair and asked what the better one does that the worse one does not, as
  Yes/No questions. ``n`` = the number of pairs.
* **inductive** — from people's own words about the dimension: reviewers' reasons for
  rejecting its questions, annotators' notes (skip reasons), and coordinators' notes when they
  settled a disagreement on its questions (:func:`people_notes`); ``n`` = questions asked.

Every question lands in the review queue as ``proposed`` (origin ``contrastive`` /
``inductive``) in the dimension's sub-dimension :data:`SUB_NAME`, with its ``provenance``: the
pair (items, people's scores, group) or the notes it was written from. An answer that copies
an existing question (exactly or nearly) is not added but reported with what it copied; a
question that is not a positive Yes/No question about the task's kind of text is added with
its flags and reported. Nothing is dropped without a word.
"""

from __future__ import annotations

import random
from typing import Any

import sqlite_utils

from checkeval_core.checklists import augment as A
from checkeval_core.checklists.editing import add_question, ensure_sub, norm, questions
from checkeval_core.checklists.parse import question_flags
from checkeval_core.judges.base import GenerateRequest
from checkeval_core.judges.fake import register_fake_generator, stable_unit
from checkeval_core.judges.registry import get_judge
from checkeval_core.prompts import checklist as P
from checkeval_core.store import rows, task_id
from checkeval_core.task_split import in_part, part_members
from checkeval_core.tasks import get_task, items
from checkeval_core.team import guarded

GROUNDED = ("contrastive", "inductive")
#: Every strategy a person can pick: the two from the seeds, the two from examples.
STRATEGIES = (*A.STRATEGIES, *GROUNDED)
#: What each strategy starts from (the Dimensions page's help).
HELP = ("diversify: new facets of each sub-dimension's seeds; elaborate: sub-questions of each "
        "seed; contrastive: what the better output of a dev pair people scored apart does "
        "that the worse one does not; inductive: what people's notes object to")
SUB_NAME = "From people's examples"
SUB_DESCRIPTION = ("Questions written from pairs of outputs people scored differently "
                   "(contrastive) or from people's notes (inductive)")
#: Questions asked per pair in ``list`` mode.
PER_PAIR = 3
#: Notes shown in one prompt (the most recent first), and characters kept of each.
MAX_NOTES, NOTE_CHARS = 12, 300
#: Characters kept of the source and of each output in a contrastive prompt.
SOURCE_CHARS, OUTPUT_CHARS = 1500, 900
NEAR_COPY = 0.9


def copied_from(text: str, existing: dict[str, int], threshold: float = NEAR_COPY
                ) -> tuple[int, str] | None:
    """``(id, text)`` of the existing question ``text`` copies — the same text, else the most
    similar one at a lexical similarity ≥ ``threshold`` (:func:`augment.closest_copy`) — or
    None."""
    like = text if text in existing else A.closest_copy(text, set(existing), threshold)
    return None if like is None else (existing[like], like)


def _dimension(db: sqlite_utils.Database, task: str, dimension: str) -> tuple[int, str]:
    dim = db.execute("SELECT id, definition FROM dimension WHERE task_id = ? AND name = ?",
                     [task_id(db, task), dimension]).fetchone()
    if dim is None:
        raise ValueError(f"task {task!r} has no dimension {dimension!r}")
    return dim[0], dim[1] or "(none given)"


def contrast_pairs(db: sqlite_utils.Database, task: str, dimension: str, n: int
                   ) -> list[dict[str, Any]]:
    """The ``n`` dev groups whose best and worst outputs people scored furthest apart on
    ``dimension``: ``{"group", "better", "worse", "better_score", "worse_score"}`` (item
    pks), largest difference first. Raises ``ValueError`` without a split or scores."""
    groups, systems = part_members(db, task, "dev")  # type: ignore[misc]
    by: dict[str, list[tuple[float, int, str]]] = {}
    for r in rows(db, "SELECT i.id, i.item_id, i.group_id, i.system_id, hs.value FROM "
                      "human_score hs JOIN item i ON i.id = hs.item_id WHERE i.task_id = ? "
                      "AND hs.annotator = '' AND lower(hs.dimension) = lower(?) ORDER BY "
                      "i.position, i.id", [task_id(db, task), dimension]):
        if in_part(r["group_id"], r["system_id"], "dev", groups, systems):
            by.setdefault(r["group_id"], []).append((float(r["value"]), r["id"], r["item_id"]))
    pairs = []
    for g, its in by.items():
        hi, lo = max(its), min(its)
        if hi[0] > lo[0]:
            pairs.append({"group": g, "better": hi[1], "worse": lo[1], "better_item": hi[2],
                          "worse_item": lo[2], "better_score": hi[0], "worse_score": lo[0]})
    if not pairs:
        raise ValueError(f"no dev group of task {task!r} has two outputs that people scored "
                         f"differently on {dimension!r}: contrastive generation needs them")
    pairs.sort(key=lambda p: (-(p["better_score"] - p["worse_score"]), p["group"]))
    return pairs[:n]


def people_notes(db: sqlite_utils.Database, task: str, dimension: str) -> list[dict[str, str]]:
    """People's words about ``dimension``, most recent first: ``{"kind", "where", "text"}``
    — a reviewer's reason for rejecting one of its questions, a coordinator's note settling a
    disagreement on one, and annotators' skip reasons (about an item, any dimension)."""
    tid = task_id(db, task)
    out = []
    for r in rows(db, "SELECT e.reason, e.action, q.id FROM review_event e JOIN question q ON "
                      "q.id = e.question_id JOIN dimension d ON d.id = q.dimension_id WHERE "
                      "e.task_id = ? AND d.name = ? AND e.reason != '' AND (e.action = 'reject' "
                      "OR e.action = 'settle') ORDER BY e.id DESC", [tid, dimension]):
        kind = "reviewer's reason" if r["action"] == "reject" else "settled disagreement"
        out.append({"kind": kind, "where": f"question #{r['id']}", "text": r["reason"]})
    for r in rows(db, "SELECT a.skip_reason, i.item_id FROM annotation_assignment a JOIN "
                      "annotation_job j ON j.id = a.job_id JOIN item i ON i.id = a.item_id "
                      "WHERE j.task_id = ? AND a.skip_reason != '' ORDER BY a.updated_at DESC",
                  [tid]):
        out.append({"kind": "annotator's note", "where": f"item {r['item_id']}",
                    "text": r["skip_reason"]})
    seen: set[str] = set()
    uniq = []
    for n_ in out:  # the same words twice are one note
        if n_["text"].strip().lower() not in seen:
            seen.add(n_["text"].strip().lower())
            uniq.append({**n_, "text": " ".join(n_["text"].split())[:NOTE_CHARS]})
    return uniq


def _cut(text: str, n: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= n else text[:n].rsplit(" ", 1)[0] + " …"


def _targets(db: sqlite_utils.Database, task: str, dimension: str, strategy: str, n: int
             ) -> list[dict[str, Any]]:
    """One entry per prompt: its material and its provenance."""
    kind = get_task(db, task)["kind"]
    if strategy == "contrastive":
        pairs = contrast_pairs(db, task, dimension, n)
        its = {it["pk"]: it for it in items(db, task, pks=[p[k] for p in pairs
                                                            for k in ("better", "worse")])}
        out = []
        for p in pairs:
            b, w = its[p["better"]], its[p["worse"]]
            src = b.get("source") or b.get("context") or ""
            out.append({"material": {"better": _cut(b["output"], OUTPUT_CHARS),
                                     "worse": _cut(w["output"], OUTPUT_CHARS),
                                     "source": P.CONTRASTIVE_SOURCE.format(
                                         source=_cut(src, SOURCE_CHARS)) if src else ""},
                        "provenance": {"strategy": "contrastive", "pairs": [
                            {k: p[k] for k in ("group", "better_item", "worse_item",
                                               "better_score", "worse_score")}]},
                        "kind": kind})
        return out
    notes = people_notes(db, task, dimension)[:MAX_NOTES]
    if not notes:
        raise ValueError(f"no people's notes about {dimension!r} yet (reviewers' reasons for "
                         "rejecting its questions, settled-disagreement notes, annotators' "
                         "skip reasons): inductive generation needs them")
    return [{"material": {"notes": "\n".join(f"- {x['text']}" for x in notes)},
             "provenance": {"strategy": "inductive", "notes": notes}, "kind": kind}]


def _request(strategy: str, base: dict[str, Any], material: dict[str, Any], noun: str,
             n_ask: str, written: list[str], opening: str | None, sampling: dict[str, Any],
             payload: dict[str, Any]) -> GenerateRequest:
    tpl = P.CONTRASTIVE if strategy == "contrastive" else P.INDUCTIVE
    user = tpl.format(noun=noun, n_ask=n_ask, **base, **material, written=P.GROUNDED_WRITTEN
                      .format(questions="\n".join(f"- {t}" for t in written)) if written else "",
                      lead=P.GROUNDED_LEAD_ONE if opening else P.GROUNDED_LEAD_LIST)
    extra: dict[str, Any] = {"grammar": P.opening_grammar(opening), "max_tokens": 80} if opening \
        else {"max_tokens": 400}
    return GenerateRequest.chat(P.GROUNDED_SYSTEM.format(noun=noun), user, **extra, **sampling,
                                purpose="one_question" if opening else "grounded",
                                payload=payload)


def grounded(db: sqlite_utils.Database, task: str, dimension: str, strategy: str, judge: str,
             n: int = 4, judge_obj: Any = None, mode: str | None = None,
             fresh: bool = False) -> dict[str, Any]:
    """Run ``contrastive`` or ``inductive`` for ``dimension`` (see the module doc); returns what
    :func:`checkeval_core.checklists.augment.augment` returns, each added question with its
    ``provenance``, and ``copies``: every answer not added because it copied a question."""
    if strategy not in GROUNDED:
        raise ValueError(f"--strategy {strategy!r}: use contrastive or inductive")
    mode = mode or A.default_mode(judge)
    if mode not in A.MODES:
        raise ValueError(f"--mode {mode!r}: use list or single")
    if not 1 <= n <= 20:
        raise ValueError(f"--n {n}: ask for 1 to 20 questions")
    dim_id, definition = _dimension(db, task, dimension)
    noun = A.subject_noun(get_task(db, task)["kind"])
    targets = _targets(db, task, dimension, strategy, n)
    base = {"dimension": dimension, "definition": definition}
    base_seed = random.SystemRandom().randrange(1, 2**31) if fresh else 0
    sampling: dict[str, Any] = ({"temperature": A.SAMPLE_TEMPERATURE} if fresh else {})
    j = judge_obj or get_judge(judge, db=db)
    asked: list[tuple[dict[str, Any], Any]] = []
    for t in targets:
        topic = f"{dimension} {json_key(t['provenance'])}"
        if mode == "list":
            k = PER_PAIR if strategy == "contrastive" else n
            req = _request(strategy, base, t["material"], noun,
                           f"up to {k} yes/no questions, one per line", [], None,
                           {**sampling, "seed": base_seed} if fresh else {},
                           {"topic": topic, "noun": noun, "n": k})
            asked.append((t, j.generate([req])[0]))
            continue
        written: list[str] = []
        for i in range(1 if strategy == "contrastive" else n):
            opening = P.QUESTION_OPENINGS[(base_seed + i + len(asked)) % len(
                P.QUESTION_OPENINGS)].format(noun=noun)
            req = _request(strategy, base, t["material"], noun, "ONE yes/no question", written,
                           opening,
                           {**sampling, "seed": base_seed + i + 1} if fresh else {},
                           {"sub_dimension": topic, "noun": noun, "i": base_seed + i})
            res = j.generate([req])[0]
            asked.append((t, res))
            if not res.error and res.text.strip():
                written.append(" ".join(res.text.split())[:300])
    existing = {q["text"]: q["id"] for q in questions(db, task, dimension=dimension)}
    sub_id = None
    added, problems, copies, flagged = [], [], [], 0
    tid = task_id(db, task)
    for t, res in asked:
        where = _where(t["provenance"])
        qs = A.read_questions(where, res, problems)
        for text in qs[:1] if mode == "single" else qs:
            text = norm(text)
            hit = copied_from(text, existing)
            if hit:
                copies.append({"text": text, "copied_id": hit[0], "copied_text": hit[1],
                               "provenance": t["provenance"]})
                problems.append(f"{where}: copies question #{hit[0]} ({hit[1]!r}), not "
                                f"added: {text}")
                continue
            flags = question_flags(text)
            ok = A.usable(text, noun)
            if not ok:
                problems.append(f"{where}: added but not usable as is "
                                f"({', '.join(flags) or 'about another kind of text'}): {text}")
            flagged += bool(flags)
            sub_id = sub_id or ensure_sub(db, dim_id, SUB_NAME, SUB_DESCRIPTION)
            qid = add_question(db, tid, dim_id, sub_id, text, origin=strategy,
                               status="proposed", author="llm", model=judge,
                               prompt_version=P.GROUNDED_PROMPT_VERSION, flags=flags,
                               provenance=t["provenance"])
            existing[text] = qid
            added.append({"id": qid, "text": text, "sub_dimension": SUB_NAME, "parent_id": None,
                          "flags": flags, "usable": ok, "provenance": t["provenance"]})
    return {"added": added, "problems": problems, "copies": copies, "flagged": flagged,
            "mode": mode, "requests": len(asked),
            "from_cache": sum(bool(r.cached) for _, r in asked), "seed": base_seed}


def json_key(prov: dict[str, Any]) -> str:
    """A short stable key of a provenance (the fake judge's topic)."""
    if prov.get("pairs"):
        return prov["pairs"][0]["group"]
    return str(len(prov.get("notes", [])))


def _where(prov: dict[str, Any]) -> str:
    if prov.get("pairs"):
        p = prov["pairs"][0]
        return (f"pair {p['better_item']} ({p['better_score']:g}) vs {p['worse_item']} "
                f"({p['worse_score']:g}) on {p['group']}")
    return f"{len(prov.get('notes', []))} people's note(s)"


@guarded("checklist.edit")
def generate(db: sqlite_utils.Database, task: str, dimension: str, strategy: str, judge: str,
             n: int = 4, judge_obj: Any = None, mode: str | None = None,
             fresh: bool = False) -> dict[str, Any]:
    """Any :data:`STRATEGIES` entry: from the seeds (:func:`~checkeval_core.checklists.
    augment.augment`) or from examples (:func:`grounded`)."""
    if strategy in GROUNDED:
        return grounded(db, task, dimension, strategy, judge, n, judge_obj, mode, fresh)
    if strategy not in A.STRATEGIES:
        raise ValueError(f"--strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
    return A.augment(db, task, dimension, strategy, judge, n, judge_obj, mode, fresh)


def asked_text(db: sqlite_utils.Database, task: str, dimension: str, strategy: str, n: int,
               mode: str) -> str:
    """The Generate section's sentence on what will be asked, for any strategy."""
    if strategy not in GROUNDED:
        return A.questions_asked_text(A.request_count(db, task, dimension, strategy, n, mode),
                                      strategy, n, mode)
    if strategy == "contrastive":
        try:
            k = len(contrast_pairs(db, task, dimension, n))
        except ValueError as e:
            return str(e)
        each = f"up to {PER_PAIR} questions each" if mode == "list" else "one question each"
        return (f"The {k} dev pair(s) of outputs on one source that people scored furthest "
                f"apart ({each}): **{k} request(s)** to the judge.")
    k = len(people_notes(db, task, dimension)[:MAX_NOTES])
    if not k:
        return (f"No people's notes about {dimension} yet: inductive generation reads reviewers' "
                "reasons, settled-disagreement notes and annotators' skip reasons.")
    reqs = 1 if mode == "list" else n
    return (f"{n} question(s) from {k} of people's notes: **{reqs} request(s)** to the judge.")


# -- the fake judge's deterministic answer to a list request (tests, UI development) -----------
def _fake_grounded(req: GenerateRequest) -> str:
    p = req.payload
    topic, noun = str(p.get("topic", "the text")), p.get("noun", "text")
    stems = ["Does the {n} state the main point of the source about {t}?",
             "Is every claim in the {n} about {t} supported by the source?",
             "Does the {n} keep the order of events clear ({t})?",
             "Does the {n} avoid repeating the same point ({t})?"]
    k = int(stable_unit(topic) * len(stems))
    return "\n".join(f"{i + 1}. " + stems[(k + i) % len(stems)].format(n=noun, t=topic)
                     for i in range(min(int(p.get("n", 3)), len(stems))))


register_fake_generator("grounded", _fake_grounded)
