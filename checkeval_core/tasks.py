"""Reading tasks, items and human scores back out of the store (for pages, CLI and exports)."""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils

from checkeval_core.store import NotFound, loads, rows, task_id

ITEM_COLUMNS = ("item_id", "group_id", "system_id", "source", "context", "fact", "reference",
                "output")


def list_tasks(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """Every task with ``name, kind, n_items, dimensions`` (dimensions: human-scored + defined)."""
    out = []
    for t in rows(db, "SELECT id, name, kind FROM task ORDER BY name"):
        n = db.execute("SELECT COUNT(*) FROM item WHERE task_id = ?", [t["id"]]).fetchone()[0]
        dims = [r[0] for r in db.execute(
            "SELECT name FROM dimension WHERE task_id = ? ORDER BY position, name", [t["id"]])]
        for r in db.execute(
                "SELECT DISTINCT hs.dimension FROM human_score hs JOIN item i ON i.id = hs.item_id "
                "WHERE i.task_id = ? ORDER BY hs.dimension", [t["id"]]):
            if r[0] not in dims:
                dims.append(r[0])
        out.append({"name": t["name"], "kind": t["kind"], "n_items": n, "dimensions": dims})
    return out


def default_task(db: sqlite_utils.Database, prefer_kind: str | None = None,
                 with_human_scores: bool = False) -> str | None:
    """The task a page opens on when the user has not picked one: the first task of
    ``prefer_kind`` if given and any, else the task with the most completed runs, the most
    recent run breaking ties (a demo visitor lands on the task with the most evidence; with
    ``with_human_scores``, only tasks that have human scores count), else the first task by
    name; None without tasks."""
    if prefer_kind:
        r = db.execute("SELECT name FROM task WHERE kind = ? ORDER BY name LIMIT 1",
                       [prefer_kind]).fetchone()
        if r:
            return r[0]
    scored = (" AND EXISTS (SELECT 1 FROM item i JOIN human_score h ON h.item_id = i.id "
              "WHERE i.task_id = t.id)") if with_human_scores else ""
    r = db.execute("SELECT t.name FROM run r JOIN task t ON t.id = r.task_id WHERE "
                   f"r.status = 'completed'{scored} GROUP BY t.id ORDER BY COUNT(*) DESC, "
                   "MAX(r.id) DESC LIMIT 1").fetchone()
    if r:
        return r[0]
    r = db.execute("SELECT name FROM task ORDER BY name LIMIT 1").fetchone()
    return r[0] if r else None


def get_task(db: sqlite_utils.Database, name: str) -> dict[str, Any]:
    """One task row (``id, name, kind, field_map, description, created_at``)."""
    r = rows(db, "SELECT * FROM task WHERE name = ?", [name])
    if not r:
        raise NotFound(f"no task named {name!r}")
    t = r[0]
    t["field_map"] = loads(t["field_map"], {})
    return t


_CHUNK = 900  # SQLite's default limit is 999 bound parameters per statement


def items(db: sqlite_utils.Database, task: str, limit: int | None = None,
          item_ids: list[str] | None = None, group_id: str | None = None,
          offset: int = 0, pks: list[int] | None = None) -> list[dict[str, Any]]:
    """Items of ``task`` in import order, each with ``pk`` and a ``scores`` dict (human scores).

    Only the rows asked for are read: ``limit``/``offset`` page through the task, ``item_ids``
    (the user's ids) or ``pks`` (internal ids) pick items, ``group_id`` one group — a page or a
    2-item run of a 100,000-item task never loads the whole task.
    """
    tid = task_id(db, task)
    if item_ids is not None or pks is not None:
        col, wanted = ("item_id", list(item_ids)) if item_ids is not None else ("id", list(pks))
        out = []
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i:i + _CHUNK]
            out += _item_rows(db, tid, f" AND {col} IN ({','.join('?' * len(chunk))})", chunk,
                              group_id, None, 0)
        out.sort(key=lambda r: (r["position"], r["id"]))
        out = out[offset:offset + limit] if limit is not None else out[offset:]
    else:
        out = _item_rows(db, tid, "", [], group_id, limit, offset)
    _attach_scores(db, out)
    return out


def _item_rows(db: sqlite_utils.Database, tid: int, where: str, params: list[Any],
               group_id: str | None, limit: int | None, offset: int) -> list[dict[str, Any]]:
    sql = "SELECT * FROM item WHERE task_id = ?" + where
    args: list[Any] = [tid, *params]
    if group_id is not None:
        sql += " AND group_id = ?"
        args.append(group_id)
    sql += " ORDER BY position, id"
    if limit is not None or offset:
        sql += " LIMIT ? OFFSET ?"
        args += [-1 if limit is None else int(limit), int(offset)]
    return rows(db, sql, args)


def _attach_scores(db: sqlite_utils.Database, out: list[dict[str, Any]]) -> None:
    by_pk = {r["id"]: r for r in out}
    for r in out:
        r["pk"] = r["id"]
        r["metadata"] = loads(r["metadata"], {})
        r["scores"] = {}
    pks = list(by_pk)
    for i in range(0, len(pks), _CHUNK):
        chunk = pks[i:i + _CHUNK]
        for s in rows(db, f"SELECT item_id, dimension, value FROM human_score WHERE annotator = '' "
                          f"AND item_id IN ({','.join('?' * len(chunk))})", chunk):
            by_pk[s["item_id"]]["scores"][s["dimension"]] = s["value"]


def count_items(db: sqlite_utils.Database, task: str, group_id: str | None = None) -> int:
    """Number of items of ``task`` (in ``group_id`` if given), counted in SQL."""
    tid = task_id(db, task)
    if group_id is None:
        return db.execute("SELECT COUNT(*) FROM item WHERE task_id = ?", [tid]).fetchone()[0]
    return db.execute("SELECT COUNT(*) FROM item WHERE task_id = ? AND group_id = ?",
                      [tid, group_id]).fetchone()[0]


def groups(db: sqlite_utils.Database, task: str) -> list[str]:
    """Distinct group ids of a task, in import order."""
    tid = task_id(db, task)
    return [r[0] for r in db.execute(
        "SELECT group_id FROM item WHERE task_id = ? GROUP BY group_id ORDER BY MIN(position)",
        [tid])]


def human_scores(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    """Long table of human scores: ``item_id`` (user id), ``item_pk``, group, system, dim, value."""
    tid = task_id(db, task)
    return rows(db, "SELECT i.item_id, i.id AS item_pk, i.group_id, i.system_id, hs.dimension, "
                    "hs.value, hs.annotator FROM human_score hs JOIN item i ON i.id = hs.item_id "
                    "WHERE i.task_id = ? ORDER BY i.position, i.id, hs.dimension", [tid])


def export_rows(db: sqlite_utils.Database, task: str, what: str) -> list[dict[str, Any]]:
    """Rows for ``checkeval export --task``: ``items`` (one per item, scores as columns) or
    ``scores`` (long format)."""
    if what == "items":
        out = []
        for it in items(db, task):
            row = {"id": it["item_id"], **{c: it[c] for c in ITEM_COLUMNS[1:]}}
            for dim, v in sorted(it["scores"].items()):
                row[f"human_{dim}"] = v
            out.append(row)
        return out
    if what == "scores":
        return [{"item_id": r["item_id"], "group_id": r["group_id"], "system_id": r["system_id"],
                 "dimension": r["dimension"], "value": r["value"], "annotator": r["annotator"]}
                for r in human_scores(db, task)]
    raise ValueError(f"--what {what!r}: use items or scores for a task")


def item_groups(db: sqlite_utils.Database, item_pks: set[int] | list[int]
                ) -> dict[int, tuple[str, str]]:
    """``{item pk: (group id, system id)}`` of the given items."""
    if not item_pks:
        return {}
    return {r[0]: (r[1], r[2]) for r in db.execute(
        "SELECT id, group_id, system_id FROM item WHERE id IN (SELECT value FROM json_each(?))",
        [json.dumps(sorted(int(i) for i in item_pks))])}
