"""Human pairwise preferences and reference ratings of systems, imported into the store.

RocketEval's own setting judges a pointwise checklist judge against *human
preferences*: votes between two answers to one query (instance level) and a reference
rating of each model such as Chatbot Arena Elo (list level). This module brings both into
the store so :mod:`checkeval_core.analysis.rankings` can compare a run with them.

Preferences, CSV / JSONL / JSON, two shapes:

* **item ids** — ``item_a``, ``item_b``, ``winner`` (optional ``group_id``, ``annotator``).
  ``item_a``/``item_b`` are item ids of the task, or system ids when ``group_id`` is given
  (the answer of that system to that query). ``winner``: ``a``/``b``/``tie``, ``1``/``2``/``0``,
  ``model_a``/``model_b``/``tie`` (also ``tie (bothbad)``); ``label`` is accepted for ``winner``.
* **self-contained pairs** — ``input``, ``output_1``, ``output_2``, ``label`` (1 or 2, 0 or
  ``tie`` for a tie), as in ``../shared/benchmarks/pairwise/*.jsonl``; optional system ids in
  ``model_1``/``model_2`` (or ``model_a``/``model_b``, ``system_1``/``system_2``). These create
  the items in a task of kind ``instruction``: one group per distinct input (``group_id`` =
  ``q`` + 10 hex digits of the input's sha256), one item per distinct answer in the group
  (``<group_id>:<system>``, or ``<group_id>:<sha of the answer>`` without a system id).

Reference ratings, CSV / JSON / JSONL: ``system_id``, ``rating``, optional ``lower``/``upper``
(source = the file name), or the ``models.json`` shape with ``arena_elo``,
``arena_elo_lower``, ``arena_elo_upper`` (source ``arena_elo``); ``rating_field`` picks another
numeric column (e.g. ``alpacaeval2_lc_winrate``; the source is then that column's name).
Ratings of systems the task does not have are kept (a reference file usually lists more
models than one data set) and reported as ``unmatched``.

Both imports validate everything first (every problem names the file, line and field), then
write in one transaction; re-importing a file replaces its rows (same source) instead of
duplicating them.

Every vote has a stable id (``vote_id``, unique within a task): the file's ``vote_id`` column,
else :func:`derived_vote_id` of the row's ``source`` column (else the file name), its
annotator and its pair in canonical order. A vote whose id is already stored is not stored
again — exporting the app's votes (``checkeval preferences export``) and importing the file
into the same database changes nothing; only a re-import of the same file updates its own
votes' winners. One annotator's two votes on one pair (in either order) are two votes only
with two different ids (the annotator was asked twice); without ids the second is refused.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import sqlite_utils

from checkeval_core.datasets import MAX_ERRORS, DatasetError, _decode, _read_records, as_number
from checkeval_core.fields import check_name, check_text
from checkeval_core.safeio import (
    InputError,
    WouldReplace,
    check_count,
    check_size,
    load_json_text,
    read_bytes,
)
from checkeval_core.store import dumps, now_iso, rows, task_id, transaction
from checkeval_core.team import guarded

WINNERS = {"a": "a", "b": "b", "tie": "tie", "1": "a", "2": "b", "0": "tie", "model_a": "a",
           "model_b": "b", "tie (bothbad)": "tie", "both": "tie", "draw": "tie",
           "1.0": "a", "2.0": "b", "0.0": "tie"}
SYSTEM_KEYS = (("model_1", "model_2"), ("model_a", "model_b"), ("system_1", "system_2"),
               ("system_a", "system_b"))


class PreferenceError(DatasetError):
    """Invalid preference / rating input; ``errors`` lists each problem (file, line, field)."""


def _load(path: str | Path | None, data: bytes | None, filename: str | None
          ) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """Records of a CSV / JSONL / JSON file as ``(location, record)``; size, rows and JSON
    depth bounded by :data:`checkeval_core.safeio.LIMITS`."""
    if path is None and data is None:
        raise PreferenceError(["give a file path or the file's bytes"])
    p = Path(filename) if filename else Path(str(path))
    try:
        if data is None:
            if not Path(str(path)).exists():
                raise PreferenceError([f"{path}: no such file"])
            data = read_bytes(path)
        check_size(data, p.name)
        text = _decode(p, data)
        if p.suffix.lower() == ".json":
            obj = load_json_text(text, p.name)
            if isinstance(obj, dict) and not isinstance(obj.get("items"), list):
                # {"models": [...]} or {"system": rating, ...}
                lst = next((v for v in obj.values() if isinstance(v, list)), None)
                if lst is not None:
                    text = json.dumps(lst)
                elif obj and all(isinstance(v, (int, float)) for v in obj.values()):
                    text = json.dumps([{"system_id": k, "rating": v} for k, v in obj.items()])
        recs, _ = _read_records(p, text)
        check_count(len(recs), p.name)
    except InputError as e:
        raise PreferenceError([str(e)]) from None
    except PreferenceError:
        raise
    except DatasetError as e:
        raise PreferenceError(e.errors) from None
    return p.name, recs


def _text(rec: dict[str, Any], key: str) -> str:
    v = rec.get(key)
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip()


def _annotator(rec: dict[str, Any], loc: str, default: str, errors: list[str]) -> str:
    """The row's annotator (the app's name rule) or ``default`` when the row names none."""
    raw = _text(rec, "annotator")
    if not raw:
        return default
    try:
        return check_name(raw, f"{loc}, field 'annotator'", "annotator name")
    except InputError as e:
        errors.append(str(e))
        return default


def _winner(rec: dict[str, Any], loc: str, errors: list[str]) -> str | None:
    key = "winner" if "winner" in rec else "label" if "label" in rec else None
    if key is None:
        errors.append(f"{loc}, field 'winner': missing (use a, b or tie)")
        return None
    raw = _text(rec, key).lower()
    if raw not in WINNERS:
        errors.append(f"{loc}, field {key!r}: {raw!r} is not a winner; use a/b/tie, 1/2/0 "
                      f"or model_a/model_b/tie")
        return None
    return WINNERS[raw]


def derived_vote_id(source: str, annotator: str, item_a: str, item_b: str) -> str:
    """The id of a vote given without one: a hash of its source (``app`` or the file name),
    annotator and the two item ids in canonical (sorted) order — the same vote shown or
    listed in the other order has the same id."""
    lo, hi = sorted((str(item_a), str(item_b)))
    return "v" + hashlib.sha256(f"{source}\x1f{annotator}\x1f{lo}\x1f{hi}".encode()
                                ).hexdigest()[:20]


def _vote_id(rec: dict[str, Any], loc: str, name: str, ann: str, a: str, b: str,
             errors: list[str], occurrences: dict[str, int]) -> str | None:
    """The row's ``vote_id`` (the name rule), else the id derived from its ``source`` column
    (an exported file names where each vote came from), else the file name. Votes without an
    annotator's name are anonymous people's: the k-th on one pair gets ``-k`` (k ≥ 2) — a named
    annotator's second vote on a pair needs its own id."""
    raw = _text(rec, "vote_id")
    if raw:
        try:
            return check_name(raw, f"{loc}, field 'vote_id'", "vote id")
        except InputError as e:
            errors.append(str(e))
            return None
    vid = derived_vote_id(_text(rec, "source") or name, ann, a, b)
    if not ann:
        k = occurrences[vid] = occurrences.get(vid, 0) + 1
        vid = vid if k == 1 else f"{vid}-{k}"
    return vid


def _repeated(rec: dict[str, Any], loc: str, vid: str, first: str, what: str) -> str:
    """The message for a vote id met twice in one file: a ``vote_id`` given twice, or a
    second vote without an id on the same pair by the same annotator."""
    if _text(rec, "vote_id"):
        return f"{loc}, field 'vote_id': {vid!r} is given twice (first on {first})"
    return (f"{loc}: the same {what} as {first} (in either order; a second vote on one pair "
            "needs its own vote_id)")


def _stored_votes(db: sqlite_utils.Database, tid: int) -> dict[str, dict[str, Any]]:
    return {r["vote_id"]: r for r in rows(
        db, "SELECT vote_id, item_a, item_b, annotator, source FROM preference WHERE "
            "task_id = ?", [tid])}


def _check_stored(stored: dict[str, dict[str, Any]], loc: str, vid: str, a: int, b: int,
                  ann: str, errors: list[str]) -> None:
    """A vote id already stored must name the same vote (pair in either order, annotator)."""
    s = stored.get(vid)
    if s is not None and ({s["item_a"], s["item_b"]} != {a, b} or s["annotator"] != ann):
        errors.append(f"{loc}, field 'vote_id': {vid!r} is already the id of another vote "
                      f"of this task (annotator {s['annotator']!r}, other items)")


def _short(text: str, n: int = 10) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def group_id_for_input(text: str) -> str:
    """The group id that self-contained pairs give a query (stable across imports)."""
    return "q" + _short(text.strip())


@guarded("data.import")
def import_preferences(db: sqlite_utils.Database, task: str, path: str | Path | None = None,
                       data: bytes | None = None, filename: str | None = None,
                       annotator: str = "") -> dict[str, Any]:
    """Import pairwise preferences into ``task`` (created, kind ``instruction``, for
    self-contained pairs); all or nothing. Returns ``{"task", "source", "shape",
    "n_preferences", "n_items_created", "n_groups", "winners": {a, b, tie}}``."""
    if not task or not task.strip():
        raise PreferenceError(["--task: a task name is required"])
    try:
        task = check_name(task, "--task", "task name")
        if annotator:
            annotator = check_name(annotator, "--annotator", "annotator name")
    except InputError as e:
        raise PreferenceError([str(e)]) from None
    name, recs = _load(path, data, filename)
    keys = {k for _, r in recs for k in r}
    if {"input", "output_1", "output_2"} <= keys:
        return _import_pairs(db, task, name, recs, annotator)
    if {"item_a", "item_b"} <= keys:
        return _import_item_prefs(db, task, name, recs, annotator)
    raise PreferenceError([f"{name}: unknown shape; expected columns item_a, item_b, winner "
                           f"(optional group_id) or input, output_1, output_2, label "
                           f"(columns seen: {', '.join(sorted(keys)[:12])})"])


def _import_item_prefs(db: sqlite_utils.Database, task: str, name: str,
                       recs: list[tuple[str, dict[str, Any]]], annotator: str) -> dict[str, Any]:
    tid = task_id(db, task)
    by_id: dict[str, tuple[int, str, str]] = {}
    by_sys: dict[tuple[str, str], int] = {}
    for r in db.execute("SELECT id, item_id, group_id, system_id FROM item WHERE task_id = ?",
                        [tid]):
        by_id[r[1]] = (r[0], r[2], r[3])
        by_sys[(r[2], r[3])] = r[0]
    group_of = {pk: g for pk, g, _ in by_id.values()}
    item_of = {v[0]: k for k, v in by_id.items()}
    stored = _stored_votes(db, tid)
    errors: list[str] = []
    out: list[tuple[str, int, int, str, str, str]] = []
    seen: dict[str, str] = {}
    occurrences: dict[str, int] = {}
    for loc, rec in recs:
        g = _text(rec, "group_id")
        ann = _annotator(rec, loc, annotator, errors)
        pks = []
        for field in ("item_a", "item_b"):
            v = _text(rec, field)
            if not v:
                errors.append(f"{loc}, field {field!r}: empty")
                pks.append(None)
                continue
            pk = by_id[v][0] if v in by_id else by_sys.get((g, v)) if g else None
            if pk is None:
                where = f" (nor a system of group {g!r})" if g else ""
                errors.append(f"{loc}, field {field!r}: task {task!r} has no item {v!r}{where}")
            pks.append(pk)
        w = _winner(rec, loc, errors)
        a, b = pks
        if a is not None and b is not None:
            if a == b:
                errors.append(f"{loc}, field 'item_b': the same item as item_a")
            elif group_of[a] != group_of[b]:
                errors.append(f"{loc}, field 'item_b': item_a is in group {group_of[a]!r}, "
                              f"item_b in {group_of[b]!r}; a preference compares two answers "
                              f"to the same query")
            elif g and group_of[a] != g:
                errors.append(f"{loc}, field 'group_id': {g!r} but the items are in group "
                              f"{group_of[a]!r}")
            elif w is not None:
                vid = _vote_id(rec, loc, name, ann, item_of[a], item_of[b], errors,
                               occurrences)
                if vid is not None and vid in seen:
                    errors.append(_repeated(rec, loc, vid, seen[vid], "pair and annotator"))
                elif vid is not None:
                    seen[vid] = loc
                    _check_stored(stored, loc, vid, a, b, ann, errors)
                    out.append((group_of[a], a, b, w, ann, vid))
        if len(errors) >= MAX_ERRORS:
            break
    if errors:
        raise PreferenceError(errors[:MAX_ERRORS])
    with transaction(db):
        n_new = _write_prefs(db, tid, name, out, stored)
    return _summary(task, name, "item_ids", out, 0, n_new)


def _write_prefs(db: sqlite_utils.Database, tid: int, source: str,
                 prefs: list[tuple[str, int, int, str, str, str]],
                 stored: dict[str, dict[str, Any]]) -> int:
    """Insert the votes whose id is new; a vote this file stored before takes the file's
    winner (a re-import); a vote stored from elsewhere (the app, another file) is left as it
    is. Returns the number inserted."""
    now = now_iso()
    new = [(tid, g, a, b, w, source, ann, now, vid) for g, a, b, w, ann, vid in prefs
           if vid not in stored]
    again = [(w, g, now, tid, vid) for g, a, b, w, ann, vid in prefs
             if vid in stored and stored[vid]["source"] == source]
    db.conn.executemany(
        "INSERT INTO preference (task_id, group_id, item_a, item_b, winner, source, annotator, "
        "created_at, vote_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", new)
    db.conn.executemany(
        "UPDATE preference SET winner = ?, group_id = ?, created_at = ? WHERE task_id = ? "
        "AND vote_id = ?", again)
    return len(new)


def _summary(task: str, source: str, shape: str, prefs: list[tuple], created: int,
             n_new: int | None = None) -> dict[str, Any]:
    """``n_preferences``: votes in the file; ``n_new``: stored now; ``n_already_stored``:
    votes whose id the task already had (a re-import, or an export of this database)."""
    winners = {"a": 0, "b": 0, "tie": 0}
    for p in prefs:
        winners[p[3]] += 1
    n_new = len(prefs) if n_new is None else n_new
    return {"task": task, "source": source, "shape": shape, "n_preferences": len(prefs),
            "n_new": n_new, "n_already_stored": len(prefs) - n_new,
            "n_items_created": created, "n_groups": len({p[0] for p in prefs}),
            "winners": winners}


def _import_pairs(db: sqlite_utils.Database, task: str, name: str,
                  recs: list[tuple[str, dict[str, Any]]], annotator: str) -> dict[str, Any]:
    existing = db.execute("SELECT id, kind FROM task WHERE name = ?", [task]).fetchone()
    if existing and existing[1] != "instruction":
        raise PreferenceError([f"task {task!r} has kind {existing[1]!r}; self-contained pairs "
                               f"(input, output_1, output_2) create items of an 'instruction' "
                               f"task — import them into a new task name"])
    have: dict[str, tuple[str, str, str]] = {}  # item_id -> (group, system, output)
    if existing:
        for r in db.execute("SELECT item_id, group_id, system_id, output FROM item WHERE "
                            "task_id = ?", [existing[0]]):
            have[r[0]] = (r[1], r[2], r[3])
    sys_keys = next((k for k in SYSTEM_KEYS if any(k[0] in r for _, r in recs)), None)
    errors: list[str] = []
    new_items: dict[str, dict[str, str]] = {}
    pairs: list[tuple[str, str, str, str, str, str]] = []
    seen: dict[str, str] = {}
    occurrences: dict[str, int] = {}
    for loc, rec in recs:
        query = rec.get("input")
        if not isinstance(query, str) or not query.strip():
            errors.append(f"{loc}, field 'input': missing or empty")
            continue
        try:  # the same rule as a dataset's fields (datasets.py)
            check_text(query, f"{loc}, field 'input'", required=True)
        except InputError as e:
            errors.append(str(e))
            continue
        g = group_id_for_input(query)
        ids = []
        for n in (1, 2):
            out = rec.get(f"output_{n}")
            if not isinstance(out, str):
                errors.append(f"{loc}, field 'output_{n}': missing or not text")
                ids.append(None)
                continue
            try:  # an answer is an item's output: required and bounded as in a dataset
                check_text(out, f"{loc}, field 'output_{n}'", required=True)
            except InputError as e:
                errors.append(str(e))
                ids.append(None)
                continue
            system = _text(rec, sys_keys[n - 1]) if sys_keys else ""
            iid = f"{g}:{system}" if system else f"{g}:{_short(out, 8)}"
            prev = new_items.get(iid) or (dict(zip(("group_id", "system_id", "output"),
                                                   have[iid])) if iid in have else None)
            if prev is not None and prev["output"] != out:
                errors.append(f"{loc}, field 'output_{n}': system {system!r} already has a "
                              f"different answer to this input (item {iid!r})")
                ids.append(None)
                continue
            if prev is None:
                new_items[iid] = {"group_id": g, "system_id": system, "output": out,
                                  "source": query, "pair_id": _text(rec, "pair_id")}
            ids.append(iid)
        w = _winner(rec, loc, errors)
        if None not in ids and w is not None:
            if ids[0] == ids[1]:
                errors.append(f"{loc}, field 'output_2': the same answer as output_1")
            else:
                ann = _annotator(rec, loc, annotator, errors)
                vid = _vote_id(rec, loc, name, ann, ids[0], ids[1], errors, occurrences)
                if vid is not None and vid in seen:
                    errors.append(_repeated(rec, loc, vid, seen[vid], "pair of answers"))
                elif vid is not None:
                    seen[vid] = loc
                    pairs.append((g, ids[0], ids[1], w, ann, vid))
        if len(errors) >= MAX_ERRORS:
            break
    if errors:
        raise PreferenceError(errors[:MAX_ERRORS])
    created = [k for k in new_items if k not in have]
    with transaction(db):
        if existing:
            tid = existing[0]
        else:
            tid = db.execute("INSERT INTO task (name, kind, field_map, description, created_at) "
                             "VALUES (?, 'instruction', '{}', ?, ?)",
                             [task, f"pairwise preferences from {name}", now_iso()]).lastrowid
        start = db.execute("SELECT COALESCE(MAX(position), -1) + 1 FROM item WHERE task_id = ?",
                           [tid]).fetchone()[0]
        db.conn.executemany(
            "INSERT INTO item (task_id, item_id, group_id, system_id, source, output, metadata, "
            "position) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(tid, iid, new_items[iid]["group_id"], new_items[iid]["system_id"],
              new_items[iid]["source"], new_items[iid]["output"],
              dumps({"pair_id": new_items[iid]["pair_id"], "imported_from": name}), start + i)
             for i, iid in enumerate(created)])
        pk = {r[0]: r[1] for r in db.execute("SELECT item_id, id FROM item WHERE task_id = ?",
                                             [tid])}
        resolved = [(g, pk[a], pk[b], w, ann, vid) for g, a, b, w, ann, vid in pairs]
        stored = _stored_votes(db, tid)
        bad: list[str] = []
        for _g, a, b, _w, ann, vid in resolved:
            _check_stored(stored, f"{name}, vote {vid!r}", vid, a, b, ann, bad)
        if bad:  # rolls the transaction back: nothing written
            raise PreferenceError(bad[:MAX_ERRORS])
        n_new = _write_prefs(db, tid, name, resolved, stored)
    return _summary(task, name, "pairs", resolved, len(created), n_new)


# -- reference ratings ------------------------------------------------------------------------
def _num(rec: dict[str, Any], key: str, loc: str, errors: list[str],
         required: bool) -> float | None:
    x = as_number(rec.get(key), loc, key, errors)
    if x is None and required and not any(e.startswith(f"{loc}, field {key!r}")
                                           for e in errors):
        errors.append(f"{loc}, field {key!r}: missing")
    return x


@guarded("data.import")
def import_ratings(db: sqlite_utils.Database, task: str, path: str | Path | None = None,
                   data: bytes | None = None, filename: str | None = None,
                   rating_field: str | None = None, source: str | None = None,
                   replace: bool = True) -> dict[str, Any]:
    """Import reference ratings per system into ``task``; all or nothing. Ratings of the same
    source are replaced (``replaced``: how many went), or with ``replace=False`` the import is
    refused with :class:`~checkeval_core.safeio.WouldReplace` (the page asks first).

    Returns ``{"task", "source", "n_ratings", "matched", "unmatched", "replaced"}`` (systems
    without / with no item in the task)."""
    tid = task_id(db, task)
    if source is not None:
        try:  # a source is a name shown in menus and stored: the shared name rule
            source = check_name(source, "--source", "source name")
        except InputError as e:
            raise PreferenceError([str(e)]) from None
    name, recs = _load(path, data, filename)
    keys = {k for _, r in recs for k in r}
    if rating_field:
        field, lo, hi = rating_field, f"{rating_field}_lower", f"{rating_field}_upper"
        src = source or rating_field
    elif "arena_elo" in keys:
        field, lo, hi, src = "arena_elo", "arena_elo_lower", "arena_elo_upper", source or "arena_elo"
    else:
        field, lo, hi, src = "rating", "lower", "upper", source or name
    sys_key = next((k for k in ("system_id", "system", "model") if k in keys), None)
    if sys_key is None:
        raise PreferenceError([f"{name}: no system_id column (columns seen: "
                               f"{', '.join(sorted(keys)[:12])})"])
    if field not in keys:
        raise PreferenceError([f"{name}: no {field!r} column; give system_id, rating "
                               f"(optional lower, upper) or the models.json shape with arena_elo"])
    errors: list[str] = []
    out: list[tuple[str, float, float | None, float | None]] = []
    seen: dict[str, str] = {}
    for loc, rec in recs:
        s = _text(rec, sys_key)
        if not s:
            errors.append(f"{loc}, field {sys_key!r}: empty")
            continue
        if s in seen:
            errors.append(f"{loc}, field {sys_key!r}: {s!r} already rated on {seen[s]}")
            continue
        seen[s] = loc
        r = _num(rec, field, loc, errors, True)
        low = _num(rec, lo, loc, errors, False)
        up = _num(rec, hi, loc, errors, False)
        if r is not None and low is not None and up is not None and not low <= r <= up:
            errors.append(f"{loc}, field {lo!r}/{hi!r}: the interval from {low} to {up} does not "
                          f"contain the rating {r}")
        elif r is not None:
            out.append((s, r, low, up))
        if len(errors) >= MAX_ERRORS:
            break
    if errors:
        raise PreferenceError(errors[:MAX_ERRORS])
    systems = {r[0] for r in db.execute("SELECT DISTINCT system_id FROM item WHERE task_id = ?",
                                        [tid])}
    now = now_iso()
    with transaction(db):
        old = db.execute("SELECT COUNT(*), MIN(created_at) FROM system_rating WHERE task_id = ? "
                         "AND source = ?", [tid, src]).fetchone()
        if old[0] and not replace:
            raise WouldReplace(f"ratings of source {src!r} are already stored ({old[0]:,} "
                               f"systems, imported {str(old[1])[:16].replace('T', ' ')}): this "
                               "file replaces them")
        db.execute("DELETE FROM system_rating WHERE task_id = ? AND source = ?", [tid, src])
        db.conn.executemany(
            "INSERT INTO system_rating (task_id, system_id, rating, lower, upper, source, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(tid, s, r, lo_, hi_, src, now) for s, r, lo_, hi_ in out])
    return {"task": task, "source": src, "n_ratings": len(out),
            "matched": sorted(s for s, *_ in out if s in systems),
            "unmatched": sorted(s for s, *_ in out if s not in systems),
            "replaced": int(old[0])}


# -- reading back ------------------------------------------------------------------------------
def rating_sources(db: sqlite_utils.Database, task: str) -> list[str]:
    """The reference-rating sources of a task (``arena_elo`` first, then by name)."""
    src = [r[0] for r in db.execute("SELECT DISTINCT source FROM system_rating WHERE task_id = ?",
                                    [task_id(db, task)])]
    return sorted(src, key=lambda s: (s != "arena_elo", s))


def ratings(db: sqlite_utils.Database, task: str, source: str | None = None
            ) -> list[dict[str, Any]]:
    """Reference ratings of one source (default: the first of :func:`rating_sources`)."""
    if source is None:
        srcs = rating_sources(db, task)
        if not srcs:
            return []
        source = srcs[0]
    return rows(db, "SELECT system_id, rating, lower, upper, source FROM system_rating WHERE "
                    "task_id = ? AND source = ? ORDER BY rating DESC",
                [task_id(db, task), source])


def preferences(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    """Every stored preference of a task with both items' ids and systems."""
    tid = task_id(db, task)
    return rows(db, "SELECT p.id, p.vote_id, p.group_id, p.item_a AS item_a_pk, p.item_b AS item_b_pk, "
                    "ia.item_id AS item_a, ib.item_id AS item_b, ia.system_id AS system_a, "
                    "ib.system_id AS system_b, p.winner, p.source, p.annotator FROM preference p "
                    "JOIN item ia ON ia.id = p.item_a JOIN item ib ON ib.id = p.item_b "
                    "WHERE p.task_id = ? ORDER BY p.id", [tid])


def repeated_votes(prefs: list[dict[str, Any]]) -> dict[str, Any]:
    """Pairs that one named annotator voted on more than once (two vote ids: asked twice).
    Each vote counts in the agreement figures, as that one person's votes — they are not two
    people agreeing. ``{"n_pairs", "n_votes", "annotators", "note"}`` (``note`` None when
    there is none); ``prefs`` rows need ``item_a``, ``item_b`` and ``annotator``."""
    by: dict[tuple[str, frozenset], int] = {}
    for p in prefs:
        if p.get("annotator"):
            key = (p["annotator"], frozenset((p["item_a"], p["item_b"])))
            by[key] = by.get(key, 0) + 1
    rep = {k: n for k, n in by.items() if n > 1}
    n_votes = sum(rep.values())
    who = sorted({a for a, _ in rep})
    note = None if not rep else (
        f"{len(rep)} pair(s) carry more than one vote of the same annotator "
        f"({', '.join(who)}; {n_votes} votes): each counts, as one person's repeated votes "
        "on a pair rather than independent judgements" if len(rep) > 1 or len(who) > 1
        else f"1 pair carries one person's {n_votes} votes ({who[0]}, asked {n_votes} times): "
             "each counts, as that annotator's votes rather than independent judgements")
    return {"n_pairs": len(rep), "n_votes": n_votes, "annotators": who, "note": note}


def human_data_stamp(db: sqlite_utils.Database) -> str:
    """Changes whenever preferences or ratings are imported or a vote is given or changed in
    the app (a page's cache key; a checksum of the winners catches two changes within the
    same millisecond)."""
    return str(db.execute("SELECT (SELECT COUNT(*) FROM preference) || ':' || (SELECT COUNT(*) "
                          "FROM system_rating) || ':' || (SELECT COALESCE(MAX(created_at), '') "
                          "FROM system_rating) || ':' || (SELECT COALESCE(MAX(created_at), '') "
                          "|| ':' || TOTAL(id * (1 + instr('abt', substr(winner, 1, 1)))) "
                          "FROM preference)").fetchone()[0])
