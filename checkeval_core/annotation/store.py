"""Importing and exporting human checklist answers (``annotation`` rows of kind ``answer``).

File columns: ``annotator``, ``item_id`` (the item's user id), ``question`` (the exact text or
the question's id) and ``answer`` (``yes`` / ``no`` / ``unsure``). Imports are atomic: every
row is checked first and any problem (unknown item or question, bad answer, missing field) is
reported with the file, line and field; nothing is written then.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import sqlite_utils

from checkeval_core.store import now_iso, rows, task_id, transaction

ANSWERS = ("yes", "no", "unsure")
FIELDS = ("annotator", "item_id", "question", "answer")


class AnnotationFileError(ValueError):
    """Invalid annotation file; the message names file, line and field."""


def _records(path: Path, data: bytes) -> list[tuple[str, dict[str, Any]]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise AnnotationFileError(f"{path.name}: invalid UTF-8 at byte {e.start}") from None
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        missing = [f for f in FIELDS if f not in (reader.fieldnames or [])]
        if missing:
            raise AnnotationFileError(f"{path.name}, line 1: missing column(s) "
                                      f"{', '.join(missing)}")
        return [(f"{path.name}, line {reader.line_num}", r) for r in reader]
    if path.suffix.lower() == ".jsonl":
        out = []
        for i, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise AnnotationFileError(f"{path.name}, line {i}: not valid JSON "
                                              f"({e.msg})") from None
                if not isinstance(obj, dict):
                    raise AnnotationFileError(f"{path.name}, line {i}: expected an object")
                out.append((f"{path.name}, line {i}", obj))
        return out
    raise AnnotationFileError(f"{path.name}: use a .csv or .jsonl file")


def import_annotations(db: sqlite_utils.Database, task: str, path: str | Path,
                       data: bytes | None = None) -> dict[str, Any]:
    p = Path(path)
    recs = _records(p, data if data is not None else p.read_bytes())
    tid = task_id(db, task)
    items = {r[0]: r[1] for r in db.execute("SELECT item_id, id FROM item WHERE task_id = ?",
                                            [tid])}
    qs = rows(db, "SELECT id, text, item_id FROM question WHERE task_id = ?", [tid])
    by_text: dict[str, list[dict]] = {}
    for q in qs:
        by_text.setdefault(" ".join(q["text"].split()), []).append(q)
    by_id = {str(q["id"]): q for q in qs}
    good, errors = [], []
    for loc, r in recs:
        ann = str(r.get("annotator") or "").strip()
        iid = str(r.get("item_id") or "").strip()
        qv = " ".join(str(r.get("question") or "").split())
        av = str(r.get("answer") or "").strip().lower()
        if not ann:
            errors.append(f"{loc}, field 'annotator': missing")
        if iid not in items:
            errors.append(f"{loc}, field 'item_id': unknown item {iid!r} in task {task!r}")
        cand = by_text.get(qv) or ([by_id[qv]] if qv in by_id else [])
        cand = [q for q in cand if q["item_id"] in (None, items.get(iid))]
        if not cand:
            errors.append(f"{loc}, field 'question': no question {qv[:60]!r} in task {task!r}")
        if av not in ANSWERS:
            errors.append(f"{loc}, field 'answer': {av!r} is not yes, no or unsure")
        if ann and iid in items and cand and av in ANSWERS:
            good.append((ann, items[iid], cand[0]["id"], av))
        if len(errors) >= 20:
            break
    if errors:
        raise AnnotationFileError("\n".join(errors))
    now = now_iso()
    with transaction(db):
        for ann, item, qid, av in good:
            db.execute("INSERT INTO annotation (task_id, annotator, kind, item_id, question_id, "
                       "value, created_at, updated_at) VALUES (?, ?, 'answer', ?, ?, ?, ?, ?) "
                       "ON CONFLICT DO UPDATE SET value = excluded.value, "
                       "updated_at = excluded.updated_at", [tid, ann, item, qid, av, now, now])
    return {"n_annotations": len(good),
            "annotators": sorted({g[0] for g in good})}


def export_annotations(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    return rows(db, "SELECT a.annotator, i.item_id, q.text AS question, a.question_id, "
                    "a.value AS answer, a.created_at, a.updated_at FROM annotation a "
                    "JOIN item i ON i.id = a.item_id JOIN question q ON q.id = a.question_id "
                    "WHERE a.task_id = ? AND a.kind = 'answer' ORDER BY i.position, "
                    "a.question_id, a.annotator", [task_id(db, task)])
