"""Which runs a page opens on when the person has not chosen yet, which run stands for a
checklist version × judge × method (its *reference run*), and which runs can be compared
with a selection.

Runs are compared on the items they share, so the defaults must not put a large run beside a
3-item one (the first chart would then rest on 3 items), and a comparison should open on two
runs that differ by one thing (the checklist version) rather than on whatever ran last.

The reference run of a checklist version × judge × method is the one a person pinned
(``checkeval runs --pin R``, or the Versions / Run page), else the completed run covering the
most items (the newest of equals). A routine small run therefore never replaces a full one in
Versions, Compare runs or Improve checklist: a run over a subset of another run's items is
never a default while that run exists.
"""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils

from checkeval_core.store import NotFound, now_iso, rows, transaction
from checkeval_core.team import guarded


def item_counts(db: sqlite_utils.Database, run_ids: list[int]) -> dict[int, int]:
    """``{run id: number of items it covers}``."""
    if not run_ids:
        return {}
    got = dict(db.execute(
        "SELECT id, json_array_length(item_ids) FROM run WHERE id IN (SELECT value FROM "
        "json_each(?))", [f"[{','.join(str(int(i)) for i in run_ids)}]"]).fetchall())
    return {i: int(got.get(i) or 0) for i in run_ids}


def item_sets(db: sqlite_utils.Database, run_ids: list[int]) -> dict[int, frozenset[int]]:
    """``{run id: the item keys it covers}``."""
    if not run_ids:
        return {}
    got = {r[0]: frozenset(json.loads(r[1] or "[]")) for r in db.execute(
        "SELECT id, item_ids FROM run WHERE id IN (SELECT value FROM json_each(?))",
        [json.dumps(sorted({int(i) for i in run_ids}))])}
    return {i: got.get(i, frozenset()) for i in run_ids}


# -- reference runs ------------------------------------------------------------------------
def _candidates(db: sqlite_utils.Database, task_id: int) -> list[dict[str, Any]]:
    return rows(db, "SELECT r.id, COALESCE(r.checklist_version_id, 0) AS version_id, "
                    "v.version, r.judge_spec, r.method, json_array_length(r.item_ids) AS "
                    "n_items, p.run_id IS NOT NULL AS pinned FROM run r LEFT JOIN "
                    "checklist_version v ON v.id = r.checklist_version_id LEFT JOIN "
                    "reference_run p ON p.run_id = r.id WHERE r.task_id = ? AND r.status = "
                    "'completed' ORDER BY r.id DESC", [task_id])


def reference_runs(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    """One entry per checklist version × judge × method with a completed run: ``version``,
    ``judge``, ``method``, ``run`` (the reference), ``n_items``, ``pinned`` and ``why`` (a
    sentence), and ``others`` (the key's other completed runs, newest first)."""
    tid = _task_id(db, task)
    by: dict[tuple, list[dict[str, Any]]] = {}
    for r in _candidates(db, tid):
        by.setdefault((r["version_id"], r["judge_spec"], r["method"]), []).append(r)
    out = []
    for runs in by.values():
        pinned = [r for r in runs if r["pinned"]]
        ref = pinned[0] if pinned else max(runs, key=lambda r: (r["n_items"] or 0, r["id"]))
        why = ("pinned as the reference" if pinned else
               f"covers the most items ({ref['n_items']})" if len(runs) > 1 else "the only run")
        out.append({"version": ref["version"], "judge": ref["judge_spec"],
                    "method": ref["method"], "run": ref["id"], "n_items": ref["n_items"],
                    "pinned": bool(pinned), "why": why,
                    "others": [r["id"] for r in runs if r["id"] != ref["id"]]})
    return sorted(out, key=lambda r: -r["run"])


def reference_ids(db: sqlite_utils.Database, task: str) -> set[int]:
    """The reference run of every checklist version × judge × method of ``task``."""
    return {r["run"] for r in reference_runs(db, task)}


def _task_id(db: sqlite_utils.Database, task: str) -> int:
    row = db.execute("SELECT id FROM task WHERE name = ?", [task]).fetchone()
    if row is None:
        raise NotFound(f"task {task!r}: no such task")
    return int(row[0])


def _run_key(db: sqlite_utils.Database, run_id: int) -> dict[str, Any]:
    got = rows(db, "SELECT r.id, r.task_id, t.name AS task, COALESCE(r.checklist_version_id, 0) "
                   "AS version_id, v.version, r.judge_spec, r.method, r.status FROM run r JOIN "
                   "task t ON t.id = r.task_id LEFT JOIN checklist_version v ON v.id = "
                   "r.checklist_version_id WHERE r.id = ?", [int(run_id)])
    if not got:
        raise NotFound(f"run {run_id}: no such run")
    return got[0]


@guarded("run.start")
def pin_reference(db: sqlite_utils.Database, run_id: int) -> dict[str, Any]:
    """Pin a completed run as the reference of its checklist version × judge × method (the
    previous pin of that key, if any, is replaced). Returns ``{"run", "task", "version",
    "judge", "method", "replaced"}`` (``replaced``: the run pinned before, or None)."""
    k = _run_key(db, run_id)
    if k["status"] != "completed":
        raise ValueError(f"run {run_id} is {k['status']}: only a completed run can be the "
                         "reference")
    where = [k["task_id"], k["version_id"], k["judge_spec"], k["method"]]
    with transaction(db):
        old = db.execute("SELECT run_id FROM reference_run WHERE task_id = ? AND "
                         "checklist_version_id = ? AND judge_spec = ? AND method = ?",
                         where).fetchone()
        db.execute("DELETE FROM reference_run WHERE task_id = ? AND checklist_version_id = ? "
                   "AND judge_spec = ? AND method = ?", where)
        db.execute("INSERT INTO reference_run (task_id, checklist_version_id, judge_spec, "
                   "method, run_id, pinned_at) VALUES (?, ?, ?, ?, ?, ?)",
                   [*where, int(run_id), now_iso()])
    return {"run": int(run_id), "task": k["task"], "version": k["version"],
            "judge": k["judge_spec"], "method": k["method"],
            "replaced": None if old is None or old[0] == int(run_id) else int(old[0])}


@guarded("run.start")
def unpin_reference(db: sqlite_utils.Database, run_id: int) -> bool:
    """Remove a run's pin (its key goes back to the run covering the most items); False
    when the run was not pinned."""
    _run_key(db, run_id)
    with transaction(db):
        n = db.execute("DELETE FROM reference_run WHERE run_id = ?", [int(run_id)]).rowcount
    return bool(n)


def is_pinned(db: sqlite_utils.Database, run_id: int) -> bool:
    return db.execute("SELECT 1 FROM reference_run WHERE run_id = ?",
                      [int(run_id)]).fetchone() is not None


def maximal(db: sqlite_utils.Database, run_ids: list[int]) -> list[int]:
    """The runs (in the given order) whose items are not a strict subset of another given
    run's items: a 3-item run beside a 160-item run over the same documents drops out."""
    sets = item_sets(db, run_ids)
    return [r for r in run_ids if not any(sets[r] < sets[o] for o in run_ids if o != r)]


# -- defaults --------------------------------------------------------------------------------
def _task_of(runs: list[dict[str, Any]]) -> str | None:
    return runs[0].get("task") if runs else None


def default_runs(db: sqlite_utils.Database, runs: list[dict[str, Any]], n: int = 4) -> list[int]:
    """Analysis: the completed runs covering the most items, in the given order (newest
    first), at most ``n``."""
    size = item_counts(db, [r["id"] for r in runs])
    top = max(size.values(), default=0)
    return [r["id"] for r in runs if size[r["id"]] == top][:n]


def default_pair(db: sqlite_utils.Database, runs: list[dict[str, Any]]) -> tuple[int, int]:
    """Compare runs: ``(A, B)``. B is the newest reference run not covering a strict subset of
    another reference run's items; A the reference run of the same judge and method sharing
    the most items with B (a version comparison), else the reference run sharing the most
    items with B. Fewer than two reference runs: among all the given runs. ``runs``: newest
    first, ≥ 2, of one task."""
    task = _task_of(runs)
    refs = reference_ids(db, task) if task else set()
    pool = [r for r in runs if r["id"] in refs]
    if len(pool) < 2:
        pool = list(runs)
    ids = [r["id"] for r in pool]
    top = maximal(db, ids)
    b = next(r for r in pool if r["id"] == (top[0] if top else ids[0]))
    sets = item_sets(db, ids)
    others = [r for r in pool if r["id"] != b["id"]]
    same = [r for r in others if r["judge_spec"] == b["judge_spec"]
            and r["method"] == b["method"]]
    best = max(same or others, key=lambda r: (len(sets[r["id"]] & sets[b["id"]]),
                                              len(sets[r["id"]]), r["id"]))
    return best["id"], b["id"]


def default_reference(db: sqlite_utils.Database, task: str, run_ids: list[int]) -> int | None:
    """Improve checklist: among ``run_ids`` (newest first), the newest reference run that does
    not cover a strict subset of another reference run's items (None when ``run_ids`` is
    empty; the newest when none of them is a reference)."""
    refs = reference_ids(db, task)
    pool = [r for r in run_ids if r in refs] or list(run_ids)
    top = maximal(db, pool)
    return top[0] if top else (pool[0] if pool else None)


# -- what can be compared with a selection -----------------------------------------------------
def comparability(db: sqlite_utils.Database, selected: list[int],
                  candidates: list[int]) -> dict[int, str | None]:
    """``{candidate: None when it can join the selection, else why not}``: a run of another
    task, or one sharing no item with the items every selected run covers (the runs are
    compared on those items). A selected run is always comparable."""
    sel = [int(r) for r in selected]
    everything = list(dict.fromkeys([*sel, *map(int, candidates)]))
    sets = item_sets(db, everything)
    task = dict(db.execute("SELECT r.id, t.name FROM run r JOIN task t ON t.id = r.task_id "
                           "WHERE r.id IN (SELECT value FROM json_each(?))",
                           [json.dumps(everything)]).fetchall())
    sel = [r for r in sel if r in task]
    sel_tasks = {task[r] for r in sel}
    shared = frozenset.intersection(*[sets[r] for r in sel]) if sel else None
    out: dict[int, str | None] = {}
    for c in map(int, candidates):
        if c in sel or not sel:
            out[c] = None
        elif c not in task:
            out[c] = "no such run"
        elif task[c] not in sel_tasks:
            out[c] = f"another task ({task[c]})"
        elif not shared:
            out[c] = "the selected runs share no item"
        elif not sets[c] & shared:
            out[c] = (f"shares no item with the {len(shared)} item(s) the selected runs share")
        else:
            out[c] = None
    return out


def judge_series(db: sqlite_utils.Database, run_ids: list[int]) -> list[dict[str, Any]]:
    """The selected runs as one series per judge, in selection order: ``{"judge", "runs",
    "items" (the items all of that judge's selected runs cover), "n_items", "n_groups"}``.
    Per-question statistics read one series at a time, so selecting another judge's run
    never changes them."""
    ids = [int(r) for r in run_ids]
    spec = dict(db.execute("SELECT id, judge_spec FROM run WHERE id IN (SELECT value FROM "
                           "json_each(?))", [json.dumps(ids)]).fetchall())
    sets = item_sets(db, ids)
    by: dict[str, list[int]] = {}
    for r in ids:
        if r in spec:
            by.setdefault(spec[r], []).append(r)
    out = []
    for judge, runs in by.items():
        items = frozenset.intersection(*[sets[r] for r in runs])
        n_groups = db.execute("SELECT COUNT(DISTINCT group_id) FROM item WHERE id IN (SELECT "
                              "value FROM json_each(?))",
                              [json.dumps(sorted(items))]).fetchone()[0]
        out.append({"judge": judge, "runs": runs, "items": items, "n_items": len(items),
                    "n_groups": int(n_groups)})
    return out
