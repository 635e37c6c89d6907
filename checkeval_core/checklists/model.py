"""Reading and editing dimensions, sub-dimensions and questions of a task."""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.store import NotFound, dumps, loads, now_iso, rows, task_id


def norm(text: str) -> str:
    """Whitespace-normalised question text (the identity used for de-duplication)."""
    return " ".join(str(text).split())


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


def ensure_sub(db: sqlite_utils.Database, dim_id: int, name: str, description: str = "") -> int:
    r = db.execute("SELECT id FROM sub_dimension WHERE dimension_id = ? AND name = ?",
                   [dim_id, name]).fetchone()
    if r:
        return r[0]
    pos = db.execute("SELECT COUNT(*) FROM sub_dimension WHERE dimension_id = ?",
                     [dim_id]).fetchone()[0]
    return db.execute("INSERT INTO sub_dimension (dimension_id, name, description, position) "
                      "VALUES (?, ?, ?, ?)", [dim_id, name, description, pos]).lastrowid


def add_question(db: sqlite_utils.Database, tid: int, dim_id: int | None, sub_id: int | None,
                 text: str, origin: str = "seed", status: str = "proposed",
                 parent_id: int | None = None, author: str = "", model: str = "",
                 prompt_version: str = "", flags: list[str] | None = None,
                 item_id: int | None = None, reason: str = "") -> int:
    pos = db.execute("SELECT COUNT(*) FROM question WHERE task_id = ?", [tid]).fetchone()[0]
    return db.execute(
        "INSERT INTO question (task_id, dimension_id, sub_dimension_id, item_id, text, origin, "
        "origins, parent_id, status, reason, author, model, prompt_version, flags, position, "
        "created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [tid, dim_id, sub_id, item_id, norm(text), origin, dumps([origin]), parent_id, status,
         reason, author, model, prompt_version, dumps(flags or []), pos, now_iso()]).lastrowid


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
    if instance is True:
        sql += " AND q.item_id IS NOT NULL"
    elif instance is False:
        sql += " AND q.item_id IS NULL"
    sql += " ORDER BY d.position, s.position, q.position, q.id"
    out = rows(db, sql, params)
    for q in out:
        q["origins"] = loads(q["origins"], [])
        q["flags"] = loads(q["flags"], [])
    return out


def update_dimension(db: sqlite_utils.Database, dim_id: int, name: str, definition: str) -> None:
    db.execute("UPDATE dimension SET name = ?, definition = ? WHERE id = ?",
               [name.strip(), definition, dim_id])


def delete_dimension(db: sqlite_utils.Database, dim_id: int) -> None:
    db.execute("DELETE FROM dimension WHERE id = ?", [dim_id])


def update_sub(db: sqlite_utils.Database, sub_id: int, name: str, description: str) -> None:
    db.execute("UPDATE sub_dimension SET name = ?, description = ? WHERE id = ?",
               [name.strip(), description, sub_id])


def delete_sub(db: sqlite_utils.Database, sub_id: int) -> None:
    db.execute("DELETE FROM sub_dimension WHERE id = ?", [sub_id])


def set_question_text(db: sqlite_utils.Database, qid: int, text: str) -> None:
    db.execute("UPDATE question SET text = ? WHERE id = ?", [norm(text), qid])


def delete_question(db: sqlite_utils.Database, qid: int) -> None:
    db.execute("DELETE FROM question WHERE id = ?", [qid])


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
