"""RocketEval per-query (instance) checklists: one Yes/No list per query, shared by its answers.

In RocketEval's setting many models answer the same query; the checklist belongs to the query
(the items' ``group_id``) so every model's answer is graded on the same questions and the
answers can be compared and ranked. A query's checklist is written by any judge from the
query (and, when the items carry one, the reference answer), or imported from JSONL
(``{"group_id" | "instruction_id": ..., "questions": [...]}``; ``"group_id": "*"`` gives the
same questions to every query, e.g. the paper's "Fixed" baseline in
``data/checklists/rocketeval_fixed.jsonl``).

Questions are stored with ``item_id`` NULL and ``group_id`` = the query's group (origin
``instance``, status ``kept`` so they can be frozen and run at once; reviewers can still
reject or edit them in the Checklist review queue) under the dimension ``overall`` /
sub-dimension ``instance checklist``, with their provenance: the judge spec and
``INSTANCE_PROMPT_VERSION``, or ``author='import'`` and ``prompt_version='import:<file>'``.
Items without a ``group_id`` are each their own query (the key is their ``item_id``).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import sqlite_utils

from checkeval_core.checklists.augment import MODES, SAMPLE_TEMPERATURE, default_mode, near_copy
from checkeval_core.checklists.editing import add_question, ensure_dimension, ensure_sub, norm
from checkeval_core.checklists.io import display_name
from checkeval_core.checklists.parse import parse_questions, question_flags
from checkeval_core.checklists.review import retire_query_questions
from checkeval_core.checklists.versions import get_version
from checkeval_core.config import data_dir
from checkeval_core.fields import check_question
from checkeval_core.judges.base import GenerateRequest
from checkeval_core.judges.fake import register_fake_generator
from checkeval_core.judges.registry import get_judge
from checkeval_core.prompts import checklist as P
from checkeval_core.safeio import (
    LIMITS,
    InputError,
    check_count,
    check_size,
    decode_text,
    load_json_text,
    read_bytes,
)
from checkeval_core.store import task_id, transaction
from checkeval_core.team import guarded

DIMENSION = "overall"
SUB = "instance checklist"
MIN_QUESTIONS, MAX_QUESTIONS = 5, 10
SINGLE_N = 8  # questions asked per query in single mode (near-copies are dropped)
MAX_IMPORT_QUESTIONS = 30  # an imported list longer than this is refused (not cut)
MAX_ERRORS = 20
FIXED_FILE = "checklists/rocketeval_fixed.jsonl"


class InstanceChecklistError(ValueError):
    """A per-query checklist file that cannot be imported; one line per problem
    (file, line, field)."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("\n".join(errors[:MAX_ERRORS]) + (
            f"\n(stopped after {MAX_ERRORS} problems)" if len(errors) > MAX_ERRORS else ""))


def group_key(item: dict[str, Any]) -> str:
    """The query an item answers: its ``group_id``, or its own id when it has none."""
    return item.get("group_id") or item.get("item_id") or ""


def question_applies(q: dict[str, Any], item: dict[str, Any]) -> bool:
    """Whether ``q`` is on ``item``'s checklist: a global question (no item, no query), the
    item's own (legacy per-item lists: ``item_id`` = the item's internal id) or its query's
    (``group_id`` = :func:`group_key` of the item). ``item`` needs ``id``, ``item_id`` and
    ``group_id``; ``q`` needs ``item_id`` and (on per-query questions) ``group_id``."""
    return q.get("item_id") in (None, item.get("id")) and \
        (q.get("group_id") or "") in ("", group_key(item))


def questions_of_item(qs: list[dict[str, Any]], item: dict[str, Any]) -> list[dict[str, Any]]:
    """The questions of ``qs`` on ``item``'s checklist (:func:`question_applies`), in order:
    the one rule used by runs, annotation jobs, agreement and the annotation importer."""
    return [q for q in qs if question_applies(q, item)]


def query_groups(db: sqlite_utils.Database, task: str) -> dict[str, dict[str, Any]]:
    """Every query of ``task`` in import order: ``{group: {"input", "reference", "n_items"}}``
    (the query text and reference of the group's first item)."""
    out: dict[str, dict[str, Any]] = {}
    for r in db.execute("SELECT item_id, group_id, source, context, fact, reference FROM item "
                        "WHERE task_id = ? ORDER BY position, id", [task_id(db, task)]):
        g = r[1] or r[0]
        if g not in out:
            out[g] = {"input": r[2] or r[3] or r[4] or "", "reference": r[5] or "", "n_items": 0}
        out[g]["n_items"] += 1
    return out


def _groups_with_questions(db: sqlite_utils.Database, tid: int) -> set[str]:
    return {r[0] for r in db.execute(
        "SELECT DISTINCT group_id FROM question WHERE task_id = ? AND group_id != '' AND "
        "item_id IS NULL AND status != 'rejected'", [tid])}


def _bucket(db: sqlite_utils.Database, tid: int) -> tuple[int, int]:
    dim_id = ensure_dimension(db, tid, DIMENSION, "Overall quality of the answer to this request")
    return dim_id, ensure_sub(db, dim_id, SUB, "Questions written for one query (RocketEval), "
                                               "shared by every answer to it")


def instance_request(query: str, reference: str = "", sampling: dict[str, Any] | None = None
                     ) -> GenerateRequest:
    """The generation request for one query's checklist (reference optional)."""
    return GenerateRequest.chat(P.GEN_SYSTEM, P.INSTANCE.format(
        input=query, with_reference=" and a reference answer" if reference else "",
        reference=f"\nReference answer:\n{reference}\n" if reference else "",
        reference_hint=P.INSTANCE_REFERENCE_HINT if reference else ""),
        max_tokens=500, purpose="instance_checklist", payload={"input": query},
        **(sampling or {}))


def _single_group(j: Any, query: str, reference: str, n: int, base_seed: int,
                  fresh: bool) -> list[tuple[GenerateRequest, Any]]:
    """``n`` one-question generations for one query, one after the other: each prompt lists
    the questions written so far and the k-th answer is held by a grammar to start with the
    k-th of ``INSTANCE_OPENINGS`` (a small model asked for a list enumerates one pattern —
    "Does it include a song? … an album? … a film?"). Greedy and cached unless ``fresh``."""
    out: list[tuple[GenerateRequest, Any]] = []
    written: list[str] = []
    ref = P.INSTANCE_ONE_REFERENCE.format(reference=reference) if reference else ""
    for i in range(n):
        user = P.INSTANCE_ONE.format(input=query, reference=ref, written=P.INSTANCE_ONE_WRITTEN
                                     .format(questions="\n".join(f"- {t}" for t in written))
                                     if written else "")
        opening = P.INSTANCE_OPENINGS[(base_seed + i) % len(P.INSTANCE_OPENINGS)]
        req = GenerateRequest.chat(
            P.INSTANCE_ONE_SYSTEM, user, max_tokens=80, grammar=P.opening_grammar(opening),
            purpose="instance_question", payload={"input": query, "i": base_seed + i},
            **({"temperature": SAMPLE_TEMPERATURE, "seed": base_seed + i + 1} if fresh else {}))
        res = j.generate([req])[0]
        out.append((req, res))
        if not res.error and res.text.strip():
            written.append(" ".join(res.text.split())[:300])
    return out


@guarded("checklist.edit")  # before any judge call: a refused person spends nothing
def generate_group_checklists(db: sqlite_utils.Database, task: str, judge: str,
                              limit: int | None = None, include_reference: bool = True,
                              judge_obj: Any = None, fresh: bool = False,
                              mode: str | None = None, n: int = SINGLE_N) -> dict[str, Any]:
    """Write one 5–10 question checklist per query with ``judge``.

    ``mode``: ``list`` asks for the whole list in one answer (a large judge); ``single`` asks
    ``n`` times for one question (:func:`_single_group`, the default for the small embedded
    judges), dropping near-copies. Queries that already have live questions are skipped unless
    ``fresh``: their old questions are then marked rejected (reason "regenerated") and the
    judge is asked afresh with a new sampling seed, not served from the cache. ``limit``: the
    first N queries. Returns ``{"groups", "items", "questions", "skipped", "problems", "mode",
    "requests", "from_cache"}``.
    """
    mode = mode or default_mode(judge)
    if mode not in MODES:
        raise ValueError(f"--mode {mode!r}: use list or single")
    if not MIN_QUESTIONS <= n <= MAX_QUESTIONS:
        raise ValueError(f"--n {n}: ask for {MIN_QUESTIONS} to {MAX_QUESTIONS} questions")
    tid = task_id(db, task)
    groups = query_groups(db, task)
    chosen = list(groups.items())[:limit] if limit is not None else list(groups.items())
    have = _groups_with_questions(db, tid)
    todo = [(g, info) for g, info in chosen if fresh or g not in have]
    skipped = len(chosen) - len(todo)
    done = {"groups": 0, "items": 0, "questions": 0, "skipped": skipped, "problems": [],
            "mode": mode, "requests": 0, "from_cache": 0}
    if not todo:
        return done
    base_seed = random.SystemRandom().randrange(1, 2**31) if fresh else 0
    j = judge_obj or get_judge(judge, db=db)
    spec = getattr(j, "spec", judge) or judge
    refs = [info["reference"] if include_reference else "" for _, info in todo]
    answers: list[list[Any]] = []  # per query: its judge results
    if mode == "list":
        sampling = {"temperature": SAMPLE_TEMPERATURE, "seed": base_seed} if fresh else {}
        answers = [[r] for r in j.generate([instance_request(info["input"], ref, sampling)
                                            for (_, info), ref in zip(todo, refs)])]
    else:
        answers = [[res for _, res in _single_group(j, info["input"], ref, n, base_seed, fresh)]
                   for (_, info), ref in zip(todo, refs)]
    version = (P.INSTANCE_PROMPT_VERSION if mode == "list" else P.INSTANCE_SINGLE_PROMPT_VERSION)
    n_q, problems, written = 0, [], []
    with transaction(db):
        dim_id, sub_id = _bucket(db, tid)
        for (g, _), ref, results in zip(todo, refs, answers):
            qs: list[str] = []
            for res in results:
                if res.error:
                    problems.append(f"query {g}: the judge failed: {res.error}")
                    continue
                got, probs = parse_questions(res.text)
                problems += [f"query {g}: {p}" for p in probs]
                for q in (got if mode == "list" else got[:1]):
                    q = norm(q)
                    if q in qs:
                        continue
                    if mode == "single" and near_copy(q, set(qs)):
                        problems.append(f"query {g}: repeats a question already written: {q}")
                        continue
                    qs.append(q)
            if not qs:
                problems.append(f"query {g}: no question in the judge's answer (nothing stored)")
                continue
            if not MIN_QUESTIONS <= len(qs) <= MAX_QUESTIONS:
                problems.append(f"query {g}: {len(qs)} questions ({MIN_QUESTIONS}–"
                                f"{MAX_QUESTIONS} asked)" + (f", kept the first {MAX_QUESTIONS}"
                                                            if len(qs) > MAX_QUESTIONS else ""))
            if fresh:
                retire_query_questions(db, tid, [g], "regenerated")
            for text in qs[:MAX_QUESTIONS]:
                add_question(db, tid, dim_id, sub_id, text, origin="instance", status="kept",
                             author="llm", model=spec, prompt_version=version
                             + ("+reference" if ref else ""), flags=question_flags(text),
                             group_id=g)
                n_q += 1
            written.append(g)
    flat = [r for results in answers for r in results]
    return {**done, "groups": len(written), "items": sum(groups[g]["n_items"] for g in written),
            "questions": n_q, "problems": problems, "requests": len(flat),
            "from_cache": sum(bool(getattr(r, "cached", False)) for r in flat)}


def parse_group_file(text: str, name: str, known: set[str]) -> dict[str, list[str]]:
    """``{group: [question, ...]}`` from JSONL text; every problem is collected with its file,
    line and field and raised together (:class:`InstanceChecklistError`)."""
    errors: list[str] = []
    out: dict[str, list[str]] = {}
    first_line: dict[str, int] = {}
    n_rows = 0
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        loc = f"{name}:{n}"
        n_rows += 1
        if n_rows > LIMITS["rows"]:
            errors.append(f"{loc}: more than {LIMITS['rows']:,} rows in one import (the limit)")
            break
        try:  # depth, duplicate keys and lone surrogates refused as in every JSON import
            row = load_json_text(line, name, where=f"line {n}")
        except InputError as e:
            errors.append(str(e))
            continue
        if not isinstance(row, dict):
            errors.append(f"{loc}: expected an object {{\"group_id\": ..., \"questions\": [...]}}")
            continue
        field = "group_id" if "group_id" in row else "instruction_id"
        g = row.get(field)
        if g is None:
            errors.append(f"{loc}: field group_id (or instruction_id) is missing")
        elif not isinstance(g, (str, int)) or isinstance(g, bool) or not str(g).strip():
            errors.append(f"{loc}: field {field}: expected a non-empty text, got {g!r}")
            g = None
        else:
            g = str(g).strip()
            if g != "*" and g not in known:
                errors.append(f"{loc}: field {field}: no query {g!r} in the task")
                g = None
            elif g in first_line:
                errors.append(f"{loc}: field {field}: {g!r} already given on line "
                              f"{first_line[g]}")
                g = None
        qs = row.get("questions")
        clean: list[str] = []
        if not isinstance(qs, list) or not qs:
            errors.append(f"{loc}: field questions: expected a non-empty list of texts")
        elif len(qs) > MAX_IMPORT_QUESTIONS:
            errors.append(f"{loc}: field questions: {len(qs)} questions (at most "
                          f"{MAX_IMPORT_QUESTIONS})")
        else:
            for k, q in enumerate(qs):
                if isinstance(q, str) and not norm(q):
                    errors.append(f"{loc}: field questions[{k}]: expected a non-empty text, "
                                  f"got {q!r}")
                    continue
                try:  # the same question rule as `checklist import` (fields.py)
                    clean.append(norm(check_question(q, f"{loc}: field questions[{k}]")))
                except InputError as e:
                    errors.append(str(e))
            dup = [q for q in set(clean) if clean.count(q) > 1]
            if dup:
                errors.append(f"{loc}: field questions: {dup[0]!r} is repeated")
        if g is not None:
            first_line[g] = n
            out[g] = clean
    if not out and not errors:
        errors.append(f"{name}: no checklist rows")
    try:
        check_count(sum(len(qs) for qs in out.values()), name, "questions")
    except InputError as e:
        errors.append(str(e))
    if "*" in out and len(out) > 1:
        errors.append(f"{name}:{first_line['*']}: field group_id: '*' (every query) cannot be "
                      "mixed with per-query rows")
    if errors:
        raise InstanceChecklistError(errors)
    return out


@guarded("checklist.edit")
def import_group_checklists(db: sqlite_utils.Database, task: str, path: str | Path | None = None,
                            data: bytes | str | None = None,
                            filename: str | None = None) -> dict[str, Any]:
    """Import per-query checklists from a JSONL file (or its bytes), all or nothing.

    Each row gives one query's questions; a query that already has live questions has them
    replaced (the old ones are marked rejected, reason "replaced by import of <file>").
    ``"group_id": "*"`` gives the row's questions to every query of the task.
    Returns ``{"groups", "questions", "replaced", "file"}``.
    """
    if path is None and data is None:
        raise ValueError("give a file path or its contents")
    # a client's file name is only a label: keep its last component (never a path) for the
    # messages and the questions' provenance
    name = display_name(filename or (Path(path).name if path is not None else "upload.jsonl"))
    try:  # the byte limit of every import (CHECKEVAL_MAX_IMPORT_MB)
        if data is None:
            data = read_bytes(path)
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        check_size(data, name)
        text = decode_text(data, name)
    except InputError as e:
        raise InstanceChecklistError([str(e)]) from None
    tid = task_id(db, task)
    groups = query_groups(db, task)
    parsed = parse_group_file(text, name, set(groups))
    if "*" in parsed:
        parsed = {g: parsed["*"] for g in groups}
    n = 0
    with transaction(db):
        dim_id, sub_id = _bucket(db, tid)
        replaced = retire_query_questions(db, tid, list(parsed), f"replaced by import of {name}")
        for g, qs in parsed.items():
            for text_ in qs:
                add_question(db, tid, dim_id, sub_id, text_, origin="instance", status="kept",
                             author="import", model="", prompt_version=f"import:{name}",
                             flags=question_flags(text_), group_id=g)
                n += 1
    return {"groups": len(parsed), "questions": n, "replaced": replaced, "file": name}


def fixed_checklist_path() -> Path:
    """The paper's "Fixed" baseline: six general questions (our wording) for every query."""
    return data_dir() / FIXED_FILE


def group_questions(db: sqlite_utils.Database, task: str,
                    version: int | str = "latest") -> dict[str, list[dict[str, Any]]]:
    """``{group: [{"id", "text", "dimension"}, ...]}`` from a frozen instance checklist
    version (``"latest"``: the latest version of kind ``instance``)."""
    v = get_version(db, task, version, kind="instance")
    out: dict[str, list[dict[str, Any]]] = {}
    for q in v["content"]["questions"]:
        if q.get("group_id"):
            out.setdefault(q["group_id"], []).append(
                {"id": q["id"], "text": q["text"], "dimension": q["dimension"]})
    return out


# Kept for callers of the per-item API (checklists are per query now).
generate_instance_checklists = generate_group_checklists


def _fake_instance(req: GenerateRequest) -> str:
    words = [w for w in req.payload.get("input", "").split() if len(w) > 4][:6] or ["request"]
    lines = [f"{i + 1}. Does the answer address '{w.strip('.,;:')}' correctly?"
             for i, w in enumerate(words)]
    extra = ["Is the answer complete?", "Is the answer accurate?", "Is the answer concise?",
             "Does the answer follow the requested format?", "Is the answer polite?"]
    while len(lines) < 5:
        lines.append(f"{len(lines) + 1}. {extra[len(lines) - len(words)]}")
    return "Checklist:\n" + "\n".join(lines)


def _fake_instance_one(req: GenerateRequest) -> str:
    """The ``i``-th question about the request's long words (same request, same text)."""
    words = [w.strip(".,;:?!") for w in req.payload.get("input", "").split() if len(w) > 4]
    words = words or ["request"]
    i = int(req.payload.get("i", 0))
    stems = ("Does the response mention '{w}'?", "Is '{w}' used correctly in the response?",
             "Does the response explain why '{w}' matters?",
             "Is the part about '{w}' accurate and complete?",
             "Does the response keep '{w}' in the requested format?",
             "Would a reader of the response understand '{w}' afterwards?")
    return stems[i % len(stems)].format(w=words[i % len(words)])


register_fake_generator("instance_checklist", _fake_instance)
register_fake_generator("instance_question", _fake_instance_one)
