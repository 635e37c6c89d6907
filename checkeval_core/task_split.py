"""Dev / held-out split of a task, by group (and, for ranking tasks, by system).

Anything fitted or chosen on a task — which questions to keep, weights, thresholds, which
checklist version is better — over-fits the items it was chosen on. Splitting the task's
groups (source documents, dialogue contexts, queries) into a *dev* part, where choices are
made, and a *held-out* part, where they are only reported, keeps the reported agreement
honest. Items of one group always fall on the same side, because items of a group share their
source and are not independent. On a ranking task (one with reference ratings of systems) the
systems are split the same way: the systems used for fitting vs the systems ranked; an item then
belongs to a part when both its group and its system do.

Assignment is a pure function of the keys, the share and a seed: each key gets a position from
a seeded SHA-256 hash, the lowest ``round(share · n)`` positions go to held-out (at least one
key on each side when there are two or more). Re-applying the same seed and share to a task
whose groups grew keeps every stored assignment and places only the new keys (balanced among
themselves), so adding data never moves a group from one side to the other.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
import sqlite_utils

from checkeval_core.fields import check_seed
from checkeval_core.store import NotFound, now_iso, rows, task_id, transaction
from checkeval_core.team import guarded

PARTS = ("dev", "heldout")
WHICH = ("dev", "heldout", "all")
DEFAULT_SHARE = 0.5
DEFAULT_SEED = 0


class SplitError(ValueError):
    """A split that cannot be made or read (the message says why and what to do)."""


# -- pure functions --------------------------------------------------------------------------
def key_position(key: str, seed: int) -> float:
    """A key's place in ``[0, 1)``: the first 8 bytes of ``sha256(seed, key)``."""
    h = hashlib.sha256(f"{int(seed)}\x1f{key}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2.0 ** 64


def heldout_count(n: int, share: float) -> int:
    """How many of ``n`` keys go to held-out: ``round(share · n)``, halves up, with at least
    one key on each side when ``n ≥ 2`` (a lone key stays in dev, where choices are made)."""
    if n < 2:
        return 0
    return min(max(int(math.floor(share * n + 0.5)), 1), n - 1)


def check_share(share: float) -> float:
    share = float(share)
    if not (0.0 < share < 1.0) or math.isnan(share):
        raise SplitError(f"--heldout-share {share:g}: give a share between 0 and 1 (exclusive), "
                         "e.g. 0.5")
    return share


def assign(keys: Iterable[str], heldout_share: float = DEFAULT_SHARE, seed: int = DEFAULT_SEED,
           existing: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{key: "dev" | "heldout"}`` for ``keys`` (and every key of ``existing``).

    Keys already in ``existing`` keep their part. The new keys are ordered by
    :func:`key_position` (ties by key) and the first ones go to held-out until the held-out
    share of all keys is as close to ``heldout_share`` as the new keys allow."""
    share = check_share(heldout_share)
    out = dict(existing or {})
    bad = {k: v for k, v in out.items() if v not in PARTS}
    if bad:
        raise SplitError(f"unknown part(s) {sorted(set(bad.values()))}; use dev or heldout")
    new = sorted({str(k) for k in keys} - set(out), key=lambda k: (key_position(k, seed), k))
    if not new:
        return out
    total = len(out) + len(new)
    have = sum(1 for v in out.values() if v == "heldout")
    need = heldout_count(total, share) - have if out else heldout_count(total, share)
    need = min(max(need, 0), len(new))
    for i, k in enumerate(new):
        out[k] = "heldout" if i < need else "dev"
    return out


def parts_of(assignment: Mapping[str, str]) -> dict[str, list[str]]:
    """``{"dev": [...], "heldout": [...]}`` (keys sorted)."""
    return {p: sorted(k for k, v in assignment.items() if v == p) for p in PARTS}


def in_part(group: str, system: str, which: str, groups: Mapping[str, str],
            systems: Mapping[str, str] | None) -> bool:
    """Whether an item of ``group`` / ``system`` belongs to ``which`` (``all`` → always)."""
    if which == "all":
        return True
    if groups.get(str(group)) != which:
        return False
    return systems is None or systems.get(str(system)) == which


def check_which(which: str) -> str:
    if which not in WHICH:
        raise SplitError(f"--split {which!r}: use dev, heldout or all")
    return which


# -- the store -------------------------------------------------------------------------------
def _task_groups(db: sqlite_utils.Database, tid: int) -> list[str]:
    return [r[0] for r in db.execute("SELECT group_id FROM item WHERE task_id = ? GROUP BY "
                                     "group_id ORDER BY MIN(position)", [tid])]


def _task_systems(db: sqlite_utils.Database, tid: int) -> list[str]:
    return [r[0] for r in db.execute("SELECT DISTINCT system_id FROM item WHERE task_id = ? "
                                     "AND system_id != '' ORDER BY system_id", [tid])]


def has_reference_ratings(db: sqlite_utils.Database, task: str) -> bool:
    """A ranking task: one with reference ratings of its systems (then systems are split too)."""
    return db.execute("SELECT 1 FROM system_rating WHERE task_id = ? LIMIT 1",
                      [task_id(db, task)]).fetchone() is not None


def members(db: sqlite_utils.Database, task: str
            ) -> tuple[dict[str, str], dict[str, str] | None] | None:
    """``(group → part, system → part or None)`` of the stored split; None without a split."""
    tid = task_id(db, task)
    cfg = db.execute("SELECT by_system FROM task_split WHERE task_id = ?", [tid]).fetchone()
    if cfg is None:
        return None
    groups: dict[str, str] = {}
    systems: dict[str, str] = {}
    for kind, key, part in db.execute("SELECT kind, key, part FROM task_split_member WHERE "
                                      "task_id = ?", [tid]):
        (groups if kind == "group" else systems)[key] = part
    return groups, (systems if cfg[0] else None)


def get_split(db: sqlite_utils.Database, task: str) -> dict[str, Any]:
    """The task's split: ``{"task", "defined", "seed", "explicit", "heldout_share", "by_system",
    "created_at", "updated_at", "dev", "heldout", "unassigned", "systems"}``.

    ``dev`` / ``heldout`` list group ids; ``unassigned`` the groups imported after the split
    was made (in no part until the split is applied again); ``systems`` is
    ``{"dev", "heldout", "unassigned"}`` for a split by system, else None. Without a split:
    ``defined`` False and empty lists."""
    tid = task_id(db, task)
    cfg = rows(db, "SELECT seed, heldout_share, by_system, created_at, updated_at FROM "
                   "task_split WHERE task_id = ?", [tid])
    all_groups = _task_groups(db, tid)
    if not cfg:
        return {"task": task, "defined": False, "seed": None, "explicit": False,
                "heldout_share": None,
                "by_system": False, "created_at": None, "updated_at": None, "dev": [],
                "heldout": [], "unassigned": all_groups, "systems": None,
                "n_groups": len(all_groups)}
    c = cfg[0]
    groups, systems = members(db, task)  # type: ignore[misc]
    out = {"task": task, "defined": True, "seed": c["seed"],
           "explicit": c["seed"] == EXPLICIT_SEED, "heldout_share": c["heldout_share"],
           "by_system": bool(c["by_system"]), "created_at": c["created_at"],
           "updated_at": c["updated_at"], **parts_of(groups),
           "unassigned": [g for g in all_groups if g not in groups], "systems": None,
           "n_groups": len(all_groups)}
    if systems is not None:
        out["systems"] = {**parts_of(systems), "unassigned": [
            s for s in _task_systems(db, tid) if s not in systems]}
    return out


@guarded("data.import")
def set_split(db: sqlite_utils.Database, task: str, heldout_share: float = DEFAULT_SHARE,
              seed: int = DEFAULT_SEED, by_system: bool | None = None) -> dict[str, Any]:
    """Split ``task`` and store it; returns :func:`get_split` plus ``"changed"``.

    Same seed, share and by-system setting as the stored split: every stored assignment is
    kept and only groups (systems) added since are placed — pressing it twice changes nothing.
    Otherwise the split is made afresh. ``by_system`` None: split systems too when the task
    has reference ratings."""

    share = check_share(heldout_share)
    try:
        seed = check_seed(seed)
    except ValueError as e:
        raise SplitError(str(e)) from None
    tid = task_id(db, task)
    if by_system is None:
        by_system = has_reference_ratings(db, task)
    groups = _task_groups(db, tid)
    if not groups:
        raise SplitError(f"task {task!r} has no items to split")
    if len(groups) < 2:  # one side would be empty: every held-out figure undefined
        raise SplitError(f"task {task!r} has 1 group ({groups[0]!r}); a dev / held-out split "
                         "needs ≥ 2 groups (documents, contexts or queries)")
    systems = _task_systems(db, tid) if by_system else []
    if by_system and len(systems) < 2:
        raise SplitError(f"task {task!r} has {len(systems)} system(s); a split by system "
                         "needs ≥ 2 (give items a system id, or split by group only)")
    with transaction(db):
        old = db.execute("SELECT seed, heldout_share, by_system FROM task_split WHERE "
                         "task_id = ?", [tid]).fetchone()
        keep = old is not None and (int(old[0]), float(old[1]), bool(old[2])) == (
            int(seed), share, bool(by_system))
        cur = members(db, task) if keep else None
        g_old, s_old = (cur[0], cur[1] or {}) if cur else ({}, {})
        g_new = assign(groups, share, seed, g_old)
        s_new = assign(systems, share, seed, s_old) if by_system else {}
        changed = not keep or g_new != g_old or s_new != s_old
        if changed:
            _write(db, tid, int(seed), share, bool(by_system), g_new, s_new, fresh=not keep)
    return {**get_split(db, task), "changed": changed}


def _write(db: sqlite_utils.Database, tid: int, seed: int, share: float, by_system: bool,
           groups: Mapping[str, str], systems: Mapping[str, str], fresh: bool) -> None:
    """Replace the task's stored split (inside the caller's transaction); ``fresh`` also
    resets ``created_at`` (a split made anew rather than extended)."""
    now = now_iso()
    db.execute("DELETE FROM task_split_member WHERE task_id = ?", [tid])
    db.execute("INSERT INTO task_split (task_id, seed, heldout_share, by_system, created_at, "
               "updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET "
               "seed = excluded.seed, heldout_share = excluded.heldout_share, by_system = "
               "excluded.by_system, updated_at = excluded.updated_at"
               + (", created_at = excluded.created_at" if fresh else ""),
               [tid, seed, share, int(by_system), now, now])
    db.conn.executemany(
        "INSERT INTO task_split_member (task_id, kind, key, part) VALUES (?, ?, ?, ?)",
        [(tid, "group", k, p) for k, p in groups.items()]
        + [(tid, "system", k, p) for k, p in systems.items()])


EXPLICIT_SEED = -1  # stored as the seed of a split given by name, not drawn from a hash


@guarded("data.import")
def set_explicit_split(db: sqlite_utils.Database, task: str, heldout_groups: Iterable[str],
                       heldout_systems: Iterable[str] | None = None) -> dict[str, Any]:
    """Store a split given by name: ``heldout_groups`` held out and every other group dev; with
    ``heldout_systems``, a split by system too (every other system dev). For a layout fixed in
    advance — a benchmark's documents 1–16 vs 17–32, its train vs test models — that a hashed
    split cannot reproduce. Stored with seed :data:`EXPLICIT_SEED` (``get_split`` reports
    ``"explicit": True``), so a later :func:`set_split` makes a fresh hashed split. A key the
    task does not have is refused, as is a part left empty (on a split by system, the groups
    may all be dev: every query is then asked of both parts' systems). Returns
    :func:`get_split`."""
    tid = task_id(db, task)
    groups = _task_groups(db, tid)
    held_g = {str(g) for g in heldout_groups}
    unknown = sorted(held_g - set(groups))
    if unknown:
        raise SplitError(f"task {task!r} has no group {unknown[0]!r}")
    by_system = heldout_systems is not None
    g_new = {g: "heldout" if g in held_g else "dev" for g in groups}
    s_new: dict[str, str] = {}
    if by_system:
        systems = _task_systems(db, tid)
        held_s = {str(s) for s in heldout_systems or ()}
        unknown = sorted(held_s - set(systems))
        if unknown:
            raise SplitError(f"task {task!r} has no system {unknown[0]!r}")
        s_new = {s: "heldout" if s in held_s else "dev" for s in systems}
        parts = set(s_new.values())
    else:
        parts = set(g_new.values())
    if parts != set(PARTS):
        raise SplitError(f"task {task!r}: a split needs ≥ 1 {'system' if by_system else 'group'}"
                         " in each part")
    share = sum(p == "heldout" for p in (s_new or g_new).values()) / len(s_new or g_new)
    with transaction(db):
        _write(db, tid, EXPLICIT_SEED, share, by_system, g_new, s_new, fresh=True)
    return get_split(db, task)


@guarded("data.import")
def clear_split(db: sqlite_utils.Database, task: str) -> bool:
    """Remove the task's split (every figure then reads all groups); True if there was one.
    Nothing else is touched: runs, scores and annotations stay."""
    tid = task_id(db, task)
    with transaction(db):
        db.execute("DELETE FROM task_split_member WHERE task_id = ?", [tid])
        return db.execute("DELETE FROM task_split WHERE task_id = ?", [tid]).rowcount > 0


def part_members(db: sqlite_utils.Database, task: str, which: str
                 ) -> tuple[dict[str, str], dict[str, str] | None] | None:
    """The stored split's ``(groups, systems)`` for reading ``which`` (None for ``all``);
    raises :class:`SplitError` for dev / heldout without a split."""
    check_which(which)
    if which == "all":
        return None
    m = members(db, task)
    if m is None:
        raise SplitError(f"task {task!r} has no dev / held-out split: make one with "
                         f"`checkeval split --task {task}` (or on the Versions page), or read "
                         "--split all")
    return m


def filter_items_by_split(db: sqlite_utils.Database, task: str,
                          items: Iterable[Mapping[str, Any]], which: str
                          ) -> list[Mapping[str, Any]]:
    """The items (dicts with ``group_id``/``system_id``, or ``group``/``system``) of one part.

    ``which``: ``dev``, ``heldout`` or ``all`` (everything, split or not). Raises
    :class:`SplitError` for dev / heldout on a task without a split."""
    lst = list(items)
    m = part_members(db, task, which)
    if m is None:
        return lst
    groups, systems = m
    return [it for it in lst if in_part(it.get("group_id", it.get("group", "")),
                                        it.get("system_id", it.get("system", "")),
                                        which, groups, systems)]


def filter_frame(db: sqlite_utils.Database, task: str, df: pd.DataFrame,
                 which: str) -> pd.DataFrame:
    """:func:`filter_items_by_split` for a DataFrame with ``group`` (and ``system``) columns."""
    m = part_members(db, task, which)
    if m is None or df.empty:
        return df
    groups, systems = m
    keep = df["group"].astype(str).map(groups).eq(which)
    if systems is not None and "system" in df:
        keep &= df["system"].astype(str).map(systems).eq(which)
    return df[keep]


def split_note(db: sqlite_utils.Database, task: str, which: str) -> dict[str, Any]:
    """What a figure read on ``which`` says about it (the ``split`` block of CLI JSON)."""
    check_which(which)
    s = get_split(db, task)
    out: dict[str, Any] = {"which": which, "defined": s["defined"], "seed": s["seed"],
                           "heldout_share": s["heldout_share"], "by_system": s["by_system"]}
    if which == "all":
        out["n_groups"] = s["n_groups"]
    else:
        out["n_groups"] = len(s[which])
        if s["systems"] is not None:
            out["n_systems"] = len(s["systems"][which])
    return out


def task_of_run(db: sqlite_utils.Database, run_id: int) -> str:
    r = db.execute("SELECT t.name FROM run r JOIN task t ON t.id = r.task_id WHERE r.id = ?",
                   [run_id]).fetchone()
    if r is None:
        raise NotFound(f"no run {run_id}")
    return r[0]
