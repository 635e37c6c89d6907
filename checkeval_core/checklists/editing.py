"""Reading and editing dimensions, sub-dimensions and questions of a task."""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.store import NotFound, dumps, loads, now_iso, rows, task_id
from checkeval_core.team import guarded


def norm(text: str) -> str:
    """Whitespace-normalised question text (the identity used for de-duplication)."""
    return " ".join(str(text).split())


@guarded("checklist.edit")
def ensure_dimension(db: sqlite_utils.Database, tid: int, name: str, definition: str = "") -> int:
    r = db.execute("SELECT id, definition FROM dimension WHERE task_id = ? AND name = ?",
                   [tid, name]).fetchone()
    if r:
        if definition and not r[1]:
            db.execute("UPDATE dimension SET definition = ? WHERE id = ?", [definition, r[0]])
        return r[0]
    pos = db.execute("SELECT COUNT(*) FROM dimension WHERE task_id = ?", [tid]).fetchone()[0]
    return db.execute("INSERT INTO dimension (task_id, name, definition, position) "
                      "VALUES (?, ?, ?, ?)", [tid, name, definition, pos]).lastrowid


@guarded("checklist.edit")
def ensure_sub(db: sqlite_utils.Database, dim_id: int, name: str, description: str = "") -> int:
    r = db.execute("SELECT id FROM sub_dimension WHERE dimension_id = ? AND name = ?",
                   [dim_id, name]).fetchone()
    if r:
        return r[0]
    pos = db.execute("SELECT COUNT(*) FROM sub_dimension WHERE dimension_id = ?",
                     [dim_id]).fetchone()[0]
    return db.execute("INSERT INTO sub_dimension (dimension_id, name, description, position) "
                      "VALUES (?, ?, ?, ?)", [dim_id, name, description, pos]).lastrowid


ORIGINS = ("seed", "diversification", "elaboration", "instance", "edited", "proposal",
           "contrastive", "inductive")
"""Where a question can come from: a person, the two augmentation steps, a per-query list,
an edit of another question, a checklist proposal fitted on evidence, or a question written
from examples — pairs of outputs people scored differently (contrastive) or people's own
notes (inductive)."""


@guarded("checklist.edit")
def add_question(db: sqlite_utils.Database, tid: int, dim_id: int | None, sub_id: int | None,
                 text: str, origin: str = "seed", status: str = "proposed",
                 parent_id: int | None = None, author: str = "", model: str = "",
                 prompt_version: str = "", flags: list[str] | None = None,
                 item_id: int | None = None, reason: str = "", group_id: str = "",
                 provenance: dict[str, Any] | None = None) -> int:
    """A new question; ``provenance`` says what a question written from examples was written
    from (stored as JSON; ``{}`` for the others)."""
    if origin not in ORIGINS:
        raise ValueError(f"Unknown question origin {origin!r}. Available: {', '.join(ORIGINS)}")
    pos = db.execute("SELECT COUNT(*) FROM question WHERE task_id = ?", [tid]).fetchone()[0]
    qid = db.execute(
        "INSERT INTO question (task_id, dimension_id, sub_dimension_id, item_id, text, origin, "
        "origins, parent_id, status, reason, author, model, prompt_version, flags, position, "
        "created_at, group_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [tid, dim_id, sub_id, item_id, norm(text), origin, dumps([origin]), parent_id, status,
         reason, author, model, prompt_version, dumps(flags or []), pos, now_iso(),
         group_id]).lastrowid
    if provenance:
        db.execute("INSERT INTO question_provenance (question_id, provenance) VALUES (?, ?)",
                   [qid, dumps(provenance)])
    return qid


def provenance_of(db: sqlite_utils.Database, question_ids: list[int]) -> dict[int, dict]:
    """``{id: provenance}`` of the questions written from examples among ``question_ids``."""
    out: dict[int, dict] = {}
    ids = list(question_ids)
    for i in range(0, len(ids), 900):  # SQLite's bound-parameter limit
        chunk = ids[i:i + 900]
        for qid, p in db.execute("SELECT question_id, provenance FROM question_provenance "
                                 f"WHERE question_id IN ({','.join('?' * len(chunk))})", chunk):
            out[qid] = loads(p, {})
    return out


def dimensions(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    """Dimensions with their sub-dimensions, in order."""
    tid = task_id(db, task)
    dims = rows(db, "SELECT id, name, definition, position FROM dimension WHERE task_id = ? "
                    "ORDER BY position, id", [tid])
    for d in dims:
        d["sub_dimensions"] = rows(db, "SELECT id, name, description, position FROM sub_dimension "
                                       "WHERE dimension_id = ? ORDER BY position, id", [d["id"]])
    return dims


def dimension_id(db: sqlite_utils.Database, task: str, name: str) -> int:
    r = db.execute("SELECT id FROM dimension WHERE task_id = ? AND name = ?",
                   [task_id(db, task), name]).fetchone()
    if r is None:
        raise NotFound(f"task {task!r} has no dimension {name!r}")
    return r[0]


def questions(db: sqlite_utils.Database, task: str, dimension: str | None = None,
              status: str | None = None, instance: bool | None = False) -> list[dict[str, Any]]:
    """Questions with their dimension/sub-dimension names (instance=None: both kinds)."""
    sql = ("SELECT q.*, d.name AS dimension, s.name AS sub_dimension FROM question q "
           "LEFT JOIN dimension d ON d.id = q.dimension_id "
           "LEFT JOIN sub_dimension s ON s.id = q.sub_dimension_id WHERE q.task_id = ?")
    params: list[Any] = [task_id(db, task)]
    if dimension is not None:
        sql += " AND d.name = ?"
        params.append(dimension)
    if status is not None:
        sql += " AND q.status = ?"
        params.append(status)
    if instance is True:  # per item (legacy) or per query (group_id)
        sql += " AND (q.item_id IS NOT NULL OR q.group_id != '')"
    elif instance is False:
        sql += " AND q.item_id IS NULL AND q.group_id = ''"
    sql += " ORDER BY d.position, s.position, q.position, q.id"
    out = rows(db, sql, params)
    for q in out:
        q["origins"] = loads(q["origins"], [])
        q["flags"] = loads(q["flags"], [])
    return out


@guarded("checklist.edit")
def update_dimension(db: sqlite_utils.Database, dim_id: int, name: str, definition: str) -> None:
    db.execute("UPDATE dimension SET name = ?, definition = ? WHERE id = ?",
               [name.strip(), definition, dim_id])


class InUse(ValueError):
    """Deleting would also delete human work (annotations, review decisions, settled answers)."""


def human_work(db: sqlite_utils.Database, where: str, params: list[Any]) -> dict[str, int]:
    """Human records on the questions selected by ``where`` (an SQL condition on ``question``):
    answers, review decisions, their distinct annotators, and settled disagreements."""
    sub = f"SELECT id FROM question WHERE {where}"
    r = db.execute("SELECT SUM(kind = 'answer'), SUM(kind = 'validation'), "
                   f"COUNT(DISTINCT annotator) FROM annotation WHERE question_id IN ({sub})",
                   params).fetchone()
    adj = db.execute(f"SELECT COUNT(*) FROM adjudication WHERE question_id IN ({sub})",
                     params).fetchone()[0] if _has_table(db, "adjudication") else 0
    return {"answers": r[0] or 0, "decisions": r[1] or 0, "annotators": r[2] or 0,
            "settled": adj}


def _has_table(db: sqlite_utils.Database, name: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                      [name]).fetchone() is not None


def _refuse_if_used(what: str, work: dict[str, int], editing: bool = False) -> None:
    if not (work["answers"] or work["decisions"] or work["settled"]):
        return
    parts = []
    if work["answers"]:
        parts.append(f"{work['answers']} human answer(s)")
    if work["decisions"]:
        parts.append(f"{work['decisions']} review decision(s)")
    text = " and ".join(parts)
    if work["annotators"]:
        text += f" by {work['annotators']} annotator(s)"
    if work["settled"]:
        text += f"{' and ' if parts else ''}{work['settled']} settled disagreement(s)"
    if editing:  # the people's records would silently become answers to other words
        raise InUse(f"{text} reference {what}: its text was not changed (people answered "
                    "or reviewed the words they read). Edit it on the Checklist review page "
                    "instead: the edit becomes a new question and the old one keeps its "
                    "records.")
    raise InUse(f"{text} reference {what}: nothing was deleted (human "
                "annotations are never deleted silently). Reject its questions on the "
                "Checklist review page to leave them out of the next version instead.")


@guarded("checklist.edit")
def delete_dimension(db: sqlite_utils.Database, dim_id: int) -> None:
    """Delete a dimension with its sub-dimensions and questions — refused (``InUse``, with
    counts) when any human annotation, review decision or settled answer references them."""
    _refuse_if_used("this dimension's questions",
                    human_work(db, "dimension_id = ?", [dim_id]))
    db.execute("DELETE FROM dimension WHERE id = ?", [dim_id])


@guarded("checklist.edit")
def update_sub(db: sqlite_utils.Database, sub_id: int, name: str, description: str) -> None:
    db.execute("UPDATE sub_dimension SET name = ?, description = ? WHERE id = ?",
               [name.strip(), description, sub_id])


@guarded("checklist.edit")
def set_question_text(db: sqlite_utils.Database, qid: int, text: str) -> None:
    """Reword a question in place; refused (``InUse``) when humans answered or reviewed it
    (their records would then be about words they never read)."""
    _refuse_if_used(f"question #{qid}", human_work(db, "id = ?", [qid]), editing=True)
    db.execute("UPDATE question SET text = ? WHERE id = ?", [norm(text), qid])


@guarded("checklist.edit")
def delete_question(db: sqlite_utils.Database, qid: int) -> None:
    """Delete a question; refused (``InUse``) when humans answered or reviewed it."""
    _refuse_if_used(f"question #{qid}", human_work(db, "id = ?", [qid]))
    db.execute("DELETE FROM question WHERE id = ?", [qid])


@guarded("checklist.edit")
def add_seed(db: sqlite_utils.Database, tid: int, dim_id: int, sub_id: int, text: str,
             author: str = "") -> tuple[int, bool]:
    """Add a kept seed question unless the sub-dimension already has one with the same
    (whitespace-normalised) text; ``(question id, created)`` — saving twice adds it once."""
    r = db.execute("SELECT id FROM question WHERE task_id = ? AND sub_dimension_id = ? AND "
                   "item_id IS NULL AND text = ? ORDER BY id LIMIT 1",
                   [tid, sub_id, norm(text)]).fetchone()
    if r:
        return r[0], False
    return add_question(db, tid, dim_id, sub_id, text, origin="seed", status="kept",
                        author=author), True


@guarded("checklist.edit")
def move(db: sqlite_utils.Database, table: str, row_id: int, delta: int) -> None:
    """Reorder a dimension / sub-dimension / question among its siblings by ``delta``."""
    parent = {"dimension": "task_id", "sub_dimension": "dimension_id",
              "question": "sub_dimension_id"}[table]
    pid = db.execute(f"SELECT {parent} FROM {table} WHERE id = ?", [row_id]).fetchone()[0]
    ids = [r[0] for r in db.execute(
        f"SELECT id FROM {table} WHERE {parent} IS ? ORDER BY position, id", [pid])]
    i = ids.index(row_id)
    j = max(0, min(len(ids) - 1, i + delta))
    ids.insert(j, ids.pop(i))
    for pos, rid in enumerate(ids):
        db.execute(f"UPDATE {table} SET position = ? WHERE id = ?", [pos, rid])
