"""Importing and exporting human checklist answers (``annotation`` rows of kind ``answer``).

File columns: ``annotator``, ``item_id`` (the item's user id), ``question`` (the exact text or
the question's id) and ``answer`` (``yes`` / ``no`` / ``unsure``). Imports are atomic: every
row is checked first and any problem (unknown item or question, bad answer, missing field) is
reported with the file, line and field; nothing is written then. A question must be on the
item's own checklist: on a per-query checklist, an answer to another query's question is
refused. Uploads are parsed from
memory (``data=``); sizes and JSON nesting are bounded by :mod:`checkeval_core.safeio`.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path, PurePosixPath
from typing import Any

import sqlite_utils

from checkeval_core.checklists.instance import group_key, question_applies
from checkeval_core.fields import check_name
from checkeval_core.safeio import (
    LIMITS,
    InputError,
    check_size,
    decode_text,
    load_json_text,
    read_bytes,
)
from checkeval_core.store import now_iso, rows, task_id, transaction
from checkeval_core.team import guarded

ANSWERS = ("yes", "no", "unsure")
FIELDS = ("annotator", "item_id", "question", "answer")
MAX_ERRORS = 20


class AnnotationFileError(ValueError):
    """Invalid annotation file; the message names file, line and field."""


def _records(name: str, data: bytes) -> list[tuple[str, dict[str, Any]]]:
    try:
        check_size(data, name)
        text = decode_text(data, name)
    except InputError as e:
        raise AnnotationFileError(str(e)) from None
    if not text.strip():
        raise AnnotationFileError(f"{name}: the file is empty")
    if "\x00" in text[:8192]:
        raise AnnotationFileError(f"{name}: not a text file (it contains NUL bytes)")
    suffix = PurePosixPath(name).suffix.lower()
    out: list[tuple[str, dict[str, Any]]] = []
    if suffix == ".csv":
        reader = csv.reader(io.StringIO(text, newline=""))
        try:
            header = [h.strip() for h in next(reader)]
            missing = [f for f in FIELDS if f not in header]
            if missing:
                raise AnnotationFileError(f"{name}, line 1: missing column(s) "
                                          f"{', '.join(missing)}")
            dup = sorted({h for h in header if header.count(h) > 1})
            if dup:
                raise AnnotationFileError(f"{name}, line 1: duplicate column(s) "
                                          f"{', '.join(dup)}")
            for row in reader:
                loc = f"{name}, line {reader.line_num}"
                if not row or all(not c.strip() for c in row):
                    continue
                if len(row) != len(header):
                    raise AnnotationFileError(f"{loc}: has {len(row)} fields, the header has "
                                              f"{len(header)}")
                if len(out) >= LIMITS["rows"]:
                    raise AnnotationFileError(f"{loc}: more than {LIMITS['rows']:,} rows in one "
                                              "import (the limit)")
                out.append((loc, dict(zip(header, row))))
        except csv.Error as e:
            raise AnnotationFileError(f"{name}, line {reader.line_num}: malformed CSV "
                                      f"({e})") from None
        return out
    if suffix == ".jsonl":
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            if len(out) >= LIMITS["rows"]:
                raise AnnotationFileError(f"{name}, line {i}: more than {LIMITS['rows']:,} rows "
                                          "in one import (the limit)")
            try:
                obj = load_json_text(line, name, where=f"line {i}")
            except InputError as e:
                raise AnnotationFileError(str(e)) from None
            if not isinstance(obj, dict):
                raise AnnotationFileError(f"{name}, line {i}: expected an object, got "
                                          f"{type(obj).__name__}")
            out.append((f"{name}, line {i}", obj))
        return out
    raise AnnotationFileError(f"{name}: use a .csv or .jsonl file")


def _field(r: dict[str, Any], f: str, loc: str, errors: list[str]) -> str:
    v = r.get(f)
    if v is None:
        return ""
    if isinstance(v, (dict, list, bool)):
        errors.append(f"{loc}, field {f!r}: expected text, got {type(v).__name__}")
        return ""
    return str(v)


@guarded("data.import")
def import_annotations(db: sqlite_utils.Database, task: str, path: str | Path,
                       data: bytes | None = None) -> dict[str, Any]:
    """Import answers from ``path`` (or from ``data``, an upload's bytes, ``path`` then being
    only the client's file name for the format and messages). All or nothing.

    The same (annotator, item, question) twice in one file with the same answer is counted
    once (``n_duplicates``); with different answers the file is refused (both lines named).
    A stored answer is never replaced: a row giving the answer already stored for that
    person, item and question (imported before, or given in the app) is counted as a
    duplicate, a row giving another answer refuses the file (its line named).
    """
    name = PurePosixPath(str(path).replace("\\", "/")).name or "upload"
    if data is None:
        try:
            data = read_bytes(path)
        except InputError as e:
            raise AnnotationFileError(str(e)) from None
    recs = _records(name, data)
    if not recs:
        raise AnnotationFileError(f"{name}: no annotation rows")
    tid = task_id(db, task)
    item_rows = {r["item_id"]: r for r in rows(db, "SELECT id, item_id, group_id FROM item "
                                                   "WHERE task_id = ?", [tid])}
    items = {k: r["id"] for k, r in item_rows.items()}
    qs = rows(db, "SELECT id, text, item_id, group_id FROM question WHERE task_id = ?", [tid])
    by_text: dict[str, list[dict]] = {}
    for q in qs:
        by_text.setdefault(" ".join(q["text"].split()), []).append(q)
    by_id = {str(q["id"]): q for q in qs}
    good: dict[tuple[str, int, int], tuple[str, str]] = {}
    errors: list[str] = []
    n_dup = 0
    for loc, r in recs:
        ann = _field(r, "annotator", loc, errors).strip()
        iid = _field(r, "item_id", loc, errors).strip()
        qv = " ".join(_field(r, "question", loc, errors).split())
        av = _field(r, "answer", loc, errors).strip().lower()
        if not ann:
            errors.append(f"{loc}, field 'annotator': missing")
        else:
            try:  # the app's name rule: a name the Annotate page would refuse is refused here
                check_name(ann, f"{loc}, field 'annotator'", "annotator name")
            except InputError as e:
                errors.append(str(e))
                ann = ""
        if iid not in items:
            errors.append(f"{loc}, field 'item_id': unknown item {iid[:60]!r} in task {task!r}")
        found = by_text.get(qv) or ([by_id[qv]] if qv in by_id else [])
        # only a question on the item's own checklist (a per-query checklist holds every
        # query's questions; an answer to another query's question is refused)
        cand = [q for q in found if iid in item_rows and question_applies(q, item_rows[iid])]
        if not found:
            errors.append(f"{loc}, field 'question': no question {qv[:60]!r} in task {task!r}")
        elif iid in item_rows and not cand:
            g = found[0]["group_id"]
            owner = f"query {g[:60]!r}" if g else "another item"
            errors.append(f"{loc}, field 'question': {qv[:60]!r} is not on the checklist of "
                          f"item {iid[:60]!r} (it belongs to {owner}; the item answers query "
                          f"{group_key(item_rows[iid])[:60]!r})")
        if av not in ANSWERS:
            errors.append(f"{loc}, field 'answer': {av[:30]!r} is not yes, no or unsure")
        if ann and iid in items and cand and av in ANSWERS:
            key = (ann, items[iid], cand[0]["id"])
            if key in good:
                first_loc, first = good[key]
                if first != av:
                    errors.append(f"{loc}, field 'answer': {av!r} conflicts with {first!r} "
                                  f"given by {ann!r} for the same item and question at "
                                  f"{first_loc.split(', ', 1)[-1]}")
                else:
                    n_dup += 1
            else:
                good[key] = (loc, av)
        if len(errors) >= MAX_ERRORS:
            break
    # a person's answer already stored (imported before, or given in the app) is never
    # replaced by a file: the same answer is already there, another one is refused
    stored = _stored_answers(db, tid, {k[0] for k in good})
    for key, (loc, av) in list(good.items()):
        if key not in stored or len(errors) >= MAX_ERRORS:
            continue
        if stored[key] == av:
            del good[key]
            n_dup += 1
        else:
            errors.append(f"{loc}, field 'answer': {av!r} conflicts with {stored[key]!r} "
                          f"already stored for {key[0]!r} on this item and question (an "
                          "import never replaces a person's answer)")
    if errors:
        raise AnnotationFileError("\n".join(errors[:MAX_ERRORS]))
    now = now_iso()
    with transaction(db):
        for (ann, item, qid), (_, av) in good.items():
            db.execute("INSERT INTO annotation (task_id, annotator, kind, item_id, question_id, "
                       "value, created_at, updated_at) VALUES (?, ?, 'answer', ?, ?, ?, ?, ?)",
                       [tid, ann, item, qid, av, now, now])
    return {"n_annotations": len(good), "n_duplicates": n_dup,
            "annotators": sorted({k[0] for k in good})}


def _stored_answers(db: sqlite_utils.Database, tid: int, annotators: set[str]
                    ) -> dict[tuple[str, int, int], str]:
    """The latest stored answer of each (annotator, item, question) of ``annotators``, in a
    job or imported."""
    out: dict[tuple[str, int, int], str] = {}
    for a, item, q, v in db.execute(  # the names as one JSON parameter: no bound-parameter limit
            "SELECT annotator, item_id, question_id, value FROM annotation WHERE task_id = ? AND "
            "kind = 'answer' AND annotator IN (SELECT value FROM json_each(?)) "
            "ORDER BY updated_at, id", [tid, json.dumps(sorted(annotators))]):
        out[(a, item, q)] = v  # rows come oldest first: the latest wins
    return out


@guarded("answers.export", audit=False)
def export_annotations(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    return rows(db, "SELECT a.annotator, i.item_id, q.text AS question, a.question_id, "
                    "a.value AS answer, a.created_at, a.updated_at FROM annotation a "
                    "JOIN item i ON i.id = a.item_id JOIN question q ON q.id = a.question_id "
                    "WHERE a.task_id = ? AND a.kind = 'answer' ORDER BY i.position, "
                    "a.question_id, a.annotator", [task_id(db, task)])
