"""Frozen checklist versions: immutable snapshots of the kept questions, with a content hash.

The hash is sha256 over the canonical JSON of the sorted (dimension, sub-dimension, text,
item[, query group]) tuples of the kept questions (per-query checklists carry ``group_id``):
the same questions give the same hash whatever their ids
or order. Freezing content identical to an existing version of the task returns that version
instead of creating a new one. Runs always point to a version.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Any

import sqlite_utils

from checkeval_core.checklists.editing import dimensions, questions
from checkeval_core.store import NotFound, dumps, loads, now_iso, rows, task_id, transaction
from checkeval_core.team import guarded


def _key(q: dict[str, Any]) -> tuple:
    """A question's identity in a version; the query's group only when it has one, so the
    hashes of versions without per-query questions are unchanged."""
    k = (q["dimension"] or "", q["sub_dimension"] or "", q["text"], q["item_id"] or 0)
    return (*k, q["group_id"]) if q.get("group_id") else k


def content_hash(qs: list[dict[str, Any]]) -> str:
    key = sorted(_key(q) for q in qs)
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode("utf-8")).hexdigest()


def build_content(db: sqlite_utils.Database, task: str, kind: str = "global",
                  origins: list[str] | None = None,
                  exclude: list[int] | None = None) -> dict[str, Any]:
    """The kept questions of ``kind`` (optionally only those with one of ``origins``, and
    without the question ids in ``exclude``) and the task's dimensions, as a version holds
    them. The working checklist is not changed: a version can be a subset of it."""
    kept = [q for q in questions(db, task, status="kept", instance=(kind == "instance"))
            if (not origins or {q["origin"], *(q.get("origins") or [])} & set(origins))
            and q["id"] not in set(exclude or ())]
    dims = [{"name": d["name"], "definition": d["definition"],
             "sub_dimensions": [{"name": s["name"], "description": s["description"]}
                                for s in d["sub_dimensions"]]} for d in dimensions(db, task)]
    return {"dimensions": dims, "questions": [
        {"id": q["id"], "dimension": q["dimension"], "sub_dimension": q["sub_dimension"],
         "text": q["text"], "origin": q["origin"], "item_id": q["item_id"],
         **({"group_id": q["group_id"]} if q.get("group_id") else {})} for q in kept]}


@guarded("checklist.edit")
def freeze(db: sqlite_utils.Database, task: str, note: str = "",
           kind: str = "global", origins: list[str] | None = None,
           exclude: list[int] | None = None) -> dict[str, Any]:
    """Freeze the kept questions (all, or those of ``origins`` without ``exclude``, see
    :func:`build_content`); returns ``{"id", "version", "hash", "n_questions", "new"}``."""
    tid = task_id(db, task)
    content = build_content(db, task, kind, origins=origins, exclude=exclude)
    if not content["questions"]:
        what = f" of origin {', '.join(origins)}" if origins else ""
        raise ValueError(f"task {task!r} has no kept {kind} questions{what} to freeze")
    h = content_hash(content["questions"])
    with transaction(db):
        same = db.execute("SELECT id, version, n_questions FROM checklist_version WHERE "
                          "task_id = ? AND kind = ? AND hash = ?", [tid, kind, h]).fetchone()
        if same:
            return {"id": same[0], "version": same[1], "hash": h, "n_questions": same[2],
                    "new": False}
        version = db.execute("SELECT COALESCE(MAX(version), 0) + 1 FROM checklist_version "
                             "WHERE task_id = ?", [tid]).fetchone()[0]
        vid = db.execute("INSERT INTO checklist_version (task_id, version, kind, hash, content, "
                         "n_questions, note, created_at) VALUES (?,?,?,?,?,?,?,?)",
                         [tid, version, kind, h, dumps(content), len(content["questions"]),
                          note, now_iso()]).lastrowid
    return {"id": vid, "version": version, "hash": h, "n_questions": len(content["questions"]),
            "new": True}


def list_versions(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    return rows(db, "SELECT id, version, kind, hash, n_questions, note, created_at FROM "
                    "checklist_version WHERE task_id = ? ORDER BY version", [task_id(db, task)])


def get_version(db: sqlite_utils.Database, task: str, version: int | str = "latest",
                kind: str | None = None) -> dict[str, Any]:
    """A version by number (or ``"latest"``, optionally of one ``kind``) with its content."""
    tid = task_id(db, task)
    if version in ("latest", None):
        sql = "SELECT * FROM checklist_version WHERE task_id = ?"
        params: list[Any] = [tid]
        if kind:
            sql += " AND kind = ?"
            params.append(kind)
        r = rows(db, sql + " ORDER BY version DESC LIMIT 1", params)
    else:
        try:
            number = int(version)
        except ValueError:
            raise NotFound(f"checklist version {version!r}: give a number or 'latest'") from None
        r = rows(db, "SELECT * FROM checklist_version WHERE task_id = ? AND version = ?",
                 [tid, number])
    if not r:
        raise NotFound(f"task {task!r} has no checklist version {version}"
                       + ("" if version not in ("latest", None) else
                          " (freeze one on the Checklist page or with checkeval checklist freeze)"))
    v = r[0]
    v["content"] = loads(v["content"])
    return v


def version_by_id(db: sqlite_utils.Database, version_id: int) -> dict[str, Any]:
    r = rows(db, "SELECT * FROM checklist_version WHERE id = ?", [version_id])
    if not r:
        raise NotFound(f"no checklist version with id {version_id}")
    r[0]["content"] = loads(r[0]["content"])
    return r[0]


def diff_versions(db: sqlite_utils.Database, task: str, a: int | str,
                  b: int | str) -> dict[str, list[dict[str, Any]]]:
    """Added / removed / edited questions from version ``a`` to ``b``.

    *Edited*: a question of ``b`` whose parent chain (``question.parent_id``) reaches a
    question of ``a`` that is not in ``b``, or, failing that, one in the same sub-dimension
    whose text is at least 80 % similar to a removed one.
    """
    qa = {_key(q): q for q in get_version(db, task, a)["content"]["questions"]}
    qb = {_key(q): q for q in get_version(db, task, b)["content"]["questions"]}
    removed = {k: v for k, v in qa.items() if k not in qb}
    added = {k: v for k, v in qb.items() if k not in qa}
    removed_ids = {v["id"]: k for k, v in removed.items()}
    edited = []
    for k, q in list(added.items()):
        origin_key = None
        cur = q["id"]
        for _ in range(50):
            r = db.execute("SELECT parent_id FROM question WHERE id = ?", [cur]).fetchone()
            if not r or r[0] is None:
                break
            cur = r[0]
            if cur in removed_ids:
                origin_key = removed_ids[cur]
                break
        if origin_key is None:
            for rk in removed:
                if rk[:2] == k[:2] and difflib.SequenceMatcher(None, rk[2], k[2]).ratio() >= 0.8:
                    origin_key = rk
                    break
        if origin_key is not None and origin_key in removed:
            edited.append({"dimension": k[0], "sub_dimension": k[1],
                           "before": removed.pop(origin_key)["text"], "after": q["text"]})
            added.pop(k)
    return {"added": list(added.values()), "removed": list(removed.values()), "edited": edited}
