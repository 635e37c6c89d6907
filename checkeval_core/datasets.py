"""Importing datasets (CSV, JSONL, JSON) into a task: validate everything, then write atomically.

A row becomes an ``item``; its human scores become ``human_score`` rows. Fields are taken by
name (``id``, ``group_id``, ``system_id``, ``input``/``source``, ``context``, ``fact``,
``reference``, ``output``) unless a mapping says otherwise (``{"group_id": "doc_id"}``).
Human scores come from CSV columns ``human_<dimension>``, from a ``scores`` object in JSON
rows, or from any numeric column mapped to ``human_<dimension>`` (``human_overall=score``).
Every other column is kept as metadata and named in the result's ``notes``. A file without
an ``id`` column gets each row's number as its id (said in ``notes``).

Every problem is reported with the file, the line (CSV/JSONL) or element (JSON) and the
field; on any problem nothing is written (:class:`DatasetError`). Bytes, rows and JSON nesting
are bounded by :data:`checkeval_core.safeio.LIMITS` (the message names the limit).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

import sqlite_utils

from checkeval_core.fields import TEXT_CHARS, check_name
from checkeval_core.safeio import LIMITS, InputError, check_size, load_json_text, read_bytes
from checkeval_core.store import dumps, now_iso, transaction
from checkeval_core.team import guarded

TEXT_FIELDS = ("group_id", "system_id", "source", "context", "fact", "reference", "output")
ALL_FIELDS = ("id", "input", *TEXT_FIELDS)
REQUIRED = ("id", "output")
KINDS = ("summarization", "dialogue", "instruction", "custom")
MAX_FIELD_CHARS = TEXT_CHARS  # one field larger than this is rejected (not silently cut)
MAX_ERRORS = 20  # report at most this many problems at once

csv.field_size_limit(MAX_FIELD_CHARS * 4)


class DatasetError(ValueError):
    """Invalid input; ``errors`` lists every problem found (file, line/element, field)."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        more = "" if len(errors) < MAX_ERRORS else f"\n(stopped after {MAX_ERRORS} problems)"
        super().__init__("\n".join(errors) + more)


# Name used in the contract with other modules.
ImportError_ = DatasetError


def parse_mapping(pairs: list[str] | None) -> dict[str, str]:
    """``["group_id=doc_id", ...]`` → ``{"group_id": "doc_id"}``; validates the field names."""
    out: dict[str, str] = {}
    for p in pairs or []:
        field, sep, column = p.partition("=")
        field, column = field.strip(), column.strip()
        if not sep or not field or not column:
            raise DatasetError([f"--map {p!r}: write FIELD=COLUMN, e.g. group_id=doc_id"])
        if field not in ALL_FIELDS and not field.startswith("human_"):
            raise DatasetError([f"--map {p!r}: unknown field {field!r}; fields are "
                                f"{', '.join(ALL_FIELDS)} and human_<dimension>"])
        if field.startswith("human_"):
            try:
                check_name(field[len("human_"):], f"--map {p!r}", "dimension name")
            except InputError as e:
                raise DatasetError([str(e)]) from None
        out[field] = column
    return out


def _decode(path: Path, data: bytes) -> str:
    name = path.name
    try:
        check_size(data, name)
    except InputError as e:
        raise DatasetError([str(e)]) from None
    if not data.strip():
        raise DatasetError([f"{name}: the file is empty"])
    if b"\x00" in data[:8192]:
        raise DatasetError([f"{name}: not a text file (it contains NUL bytes); expected "
                            f"{path.suffix.lstrip('.').upper() or 'CSV/JSON/JSONL'} text"])
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise DatasetError([f"{name}, line {line}: invalid UTF-8 byte 0x{data[e.start]:02x} at "
                            f"byte offset {e.start}; save the file as UTF-8"]) from None


def _read_records(path: Path, text: str) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """Rows as (location, record) pairs, plus the column names (CSV) / keys seen."""
    name = path.name
    ext = path.suffix.lower()
    stripped = text.lstrip()
    if ext == ".csv":
        if stripped[:1] in ("{", "["):
            raise DatasetError([f"{name}: looks like JSON, not CSV; rename it to .json/.jsonl"])
        reader = csv.reader(io.StringIO(text, newline=""))
        try:
            header = next(reader)
        except StopIteration:
            raise DatasetError([f"{name}: the file is empty"]) from None
        except csv.Error as e:
            raise DatasetError([f"{name}, line 1: cannot read the header ({e})"]) from None
        header = [h.strip() for h in header]
        if len(header) < 2 and "," not in text.splitlines()[0]:
            raise DatasetError([f"{name}, line 1: the header has a single column "
                                f"{header[0]!r}; is this really a comma-separated CSV file?"])
        dup = sorted({h for h in header if header.count(h) > 1})
        if dup:
            raise DatasetError([f"{name}, line 1: duplicate column(s) {', '.join(dup)}"])
        out, errors = [], []
        try:
            for row in reader:
                loc = f"{name}, line {reader.line_num}"
                if not row or all(not c.strip() for c in row):
                    continue
                if len(out) >= LIMITS["rows"]:
                    raise DatasetError([f"{loc}: more than {LIMITS['rows']:,} rows in one "
                                        "import (the limit)"])
                if len(row) != len(header):
                    errors.append(f"{loc}: has {len(row)} fields, the header has {len(header)}")
                    if len(errors) >= MAX_ERRORS:
                        break
                    continue
                out.append((loc, dict(zip(header, row))))
        except csv.Error as e:
            errors.append(f"{name}, line {reader.line_num}: malformed CSV ({e})")
        if errors:
            raise DatasetError(errors)
        if not out:
            raise DatasetError([f"{name}: the header is there but there are no data rows"])
        return out, header
    if ext == ".jsonl":
        out, errors = [], []
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            loc = f"{name}, line {i}"
            if len(out) >= LIMITS["rows"]:
                raise DatasetError([f"{loc}: more than {LIMITS['rows']:,} rows in one import "
                                    "(the limit)"])
            try:
                obj = load_json_text(line, name, where=f"line {i}")
            except InputError as e:
                errors.append(str(e))
            else:
                if not isinstance(obj, dict):
                    errors.append(f"{loc}: expected a JSON object, got {type(obj).__name__}")
                else:
                    out.append((loc, obj))
            if len(errors) >= MAX_ERRORS:
                break
        if errors:
            if len(errors) == len([ln for ln in text.splitlines() if ln.strip()]) \
                    and stripped[:1] not in ("{", "["):
                errors.insert(0, f"{name}: does not look like JSON Lines (one object per line)")
            raise DatasetError(errors)
        return out, sorted({k for _, r in out for k in r})
    if ext == ".json":
        try:
            obj = load_json_text(text, name)
        except InputError as e:
            raise DatasetError([f"{e}; a .json file must hold a list of objects"]) from None
        if isinstance(obj, dict) and isinstance(obj.get("items"), list):
            obj = obj["items"]
        if not isinstance(obj, list):
            raise DatasetError([f"{name}: JSON must be a list of objects, got "
                                f"{type(obj).__name__}"])
        if len(obj) > LIMITS["rows"]:
            raise DatasetError([f"{name}: {len(obj):,} elements is more than the "
                                f"{LIMITS['rows']:,} rows allowed in one import (the limit)"])
        out, errors = [], []
        for i, r in enumerate(obj, 1):
            if not isinstance(r, dict):
                errors.append(f"{name}, element {i}: expected an object, got {type(r).__name__}")
                if len(errors) >= MAX_ERRORS:
                    break
            else:
                out.append((f"{name}, element {i}", r))
        if errors:
            raise DatasetError(errors)
        if not out:
            raise DatasetError([f"{name}: the JSON list is empty"])
        return out, sorted({k for _, r in out for k in r})
    raise DatasetError([f"{name}: unsupported extension {path.suffix!r}; use .csv, .jsonl or .json"])


def _get(record: dict[str, Any], column: str) -> Any:
    """A column, or a dotted path into nested JSON objects (``scores.coherence``)."""
    if column in record:
        return record[column]
    cur: Any = record
    for part in column.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _as_text(value: Any, loc: str, field: str, errors: list[str]) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or isinstance(value, (dict, list)):
        errors.append(f"{loc}, field {field!r}: expected text, got {type(value).__name__}")
        return ""
    text = str(value)
    if len(text) > MAX_FIELD_CHARS:
        errors.append(f"{loc}, field {field!r}: {len(text):,} characters is more than the "
                      f"{MAX_FIELD_CHARS:,} allowed")
        return ""
    return text


def as_number(value: Any, loc: str, field: str, errors: list[str]) -> float | None:
    """A finite number from a cell; None for an empty cell; a problem naming ``loc`` and the
    field appended to ``errors`` (and None) for anything else (bools, text, NaN, inf)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        errors.append(f"{loc}, field {field!r}: {value!r} is not a number")
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        errors.append(f"{loc}, field {field!r}: {str(value)[:40]!r} is not a number")
        return None
    if not math.isfinite(x):
        errors.append(f"{loc}, field {field!r}: {value!r} is not a finite number")
        return None
    return x


def file_columns(name: str, data: bytes) -> list[str]:
    """The columns a file offers for mapping: from a full parse when it succeeds, else the
    CSV header alone (a file whose default mapping fails may still be mapped); [] when
    unreadable (the import then says why)."""
    try:
        return parse_rows(Path(name), {}, data=data)["columns"]
    except DatasetError:
        pass
    if not name.lower().endswith(".csv"):
        return []
    try:
        first = data.split(b"\n", 1)[0].decode("utf-8-sig")
        return next(csv.reader(io.StringIO(first)), [])
    except (UnicodeDecodeError, csv.Error):
        return []


def numeric_columns(name: str, data: bytes) -> list[str]:
    """The file's columns whose every non-empty value is a finite number (the columns a page
    offers as human scores); [] when the file cannot be read (the import then says why)."""
    path = Path(name)
    try:
        records, columns = _read_records(path, _decode(path, data))
    except DatasetError:
        return []
    out = []
    for c in columns:
        values = [r.get(c) for _, r in records]
        errors: list[str] = []
        nums = [as_number(v, "", c, errors) for v in values]
        if not errors and any(x is not None for x in nums):
            out.append(c)
    return out


def parse_rows(path: Path, mapping: dict[str, str] | None = None,
               data: bytes | None = None) -> dict[str, Any]:
    """Read and validate a file without touching the database.

    Returns ``{"items": [...], "scores": [(item_id, dim, value)], "dimensions": [...],
    "columns": [...], "ids_from_rows", "ignored", "notes"}``; raises :class:`DatasetError`
    listing every problem. A file without an id column (none mapped) gets each row's number
    as its id (``ids_from_rows``); ``ignored`` names every column that is neither a field nor
    a human score (kept as metadata), and ``notes`` says both in words.
    """
    path = Path(path)
    mapping = dict(mapping or {})
    if data is None:
        try:
            data = read_bytes(path)
        except InputError as e:
            raise DatasetError([str(e)]) from None
    records, columns = _read_records(path, _decode(path, data))
    if "input" in mapping and "source" not in mapping:
        mapping["source"] = mapping.pop("input")
    col = {f: mapping.get(f, f) for f in ("id", *TEXT_FIELDS)}
    if "source" not in mapping and "source" not in columns and "input" in columns:
        col["source"] = "input"
    score_cols = {k[len("human_"):]: v for k, v in mapping.items() if k.startswith("human_")}
    for c in columns:
        if c.startswith("human_") and c[len("human_"):] not in score_cols:
            score_cols[c[len("human_"):]] = c
    errors: list[str] = []
    is_csv = path.suffix.lower() == ".csv"
    # no id column (and none mapped): each row's id is its row number, said in ``notes``
    row_ids = "id" not in mapping and (col["id"] not in columns if is_csv else not any(
        _get(r, col["id"]) is not None for _, r in records))
    required = [f for f in REQUIRED if not (f == "id" and row_ids)]
    if is_csv:
        missing = [f"{f!r}" + (f" (mapped to column {col[f]!r})" if f in mapping else "")
                   for f in required if col[f] not in columns]
        if missing:
            raise DatasetError([f"{path.name}, line 1: missing required column(s) "
                                f"{', '.join(missing)}; columns are {', '.join(columns)}"])
    used = set(col.values()) | set(score_cols.values()) | (set() if is_csv else {"scores"})
    items, scores, seen = [], [], {}
    dims: list[str] = []
    for n, (loc, r) in enumerate(records, 1):
        for f in required:
            v = _get(r, col[f])
            if v is None or (isinstance(v, str) and not v.strip()):
                errors.append(f"{loc}, field {col[f]!r}: required value is missing")
        item = {"item_id": str(n) if row_ids else
                _as_text(_get(r, col["id"]), loc, col["id"], errors).strip()}
        for f in TEXT_FIELDS:
            item[f] = _as_text(_get(r, col[f]), loc, col[f], errors)
        item["metadata"] = {k: v for k, v in r.items() if k not in used}
        iid = item["item_id"]
        if iid:
            if iid in seen:
                errors.append(f"{loc}, field {col['id']!r}: duplicate id {iid!r} "
                              f"(first at {seen[iid]})")
            else:
                seen[iid] = loc
        row_scores: dict[str, float] = {}
        obj = r.get("scores") if "scores" not in mapping else None
        if obj is not None and not is_csv:
            if not isinstance(obj, dict):
                errors.append(f"{loc}, field 'scores': expected an object like "
                              f'{{"coherence": 4.3}}, got {type(obj).__name__}')
            else:
                for dim, v in obj.items():
                    x = as_number(v, loc, f"scores.{dim}", errors)
                    if x is not None:
                        row_scores[str(dim)] = x
        for dim, c in score_cols.items():
            x = as_number(_get(r, c), loc, c, errors)
            if x is not None:
                row_scores[dim] = x
        for dim, x in row_scores.items():
            if dim not in dims:
                dims.append(dim)
            scores.append((iid, dim, x))
        items.append(item)
        if len(errors) >= MAX_ERRORS:
            break
    if errors:
        raise DatasetError(errors[:MAX_ERRORS])
    ignored = [c for c in columns if c not in used]
    notes = ([f"no {col['id']!r} column: each item's id is its row number (1–{len(items)})"]
             if row_ids else [])
    if ignored:
        notes.append(f"not imported as a field or a human score (kept as item metadata): "
                     f"{', '.join(ignored)}" + ("" if score_cols else
                                                " — map a numeric column to a human score "
                                                "with human_<dimension>=COLUMN"))
    return {"items": items, "scores": scores, "dimensions": dims, "columns": columns,
            "ids_from_rows": row_ids, "ignored": ignored, "notes": notes}


@guarded("data.import")
def import_file(db: sqlite_utils.Database, path: str | Path, task: str, kind: str | None = None,
                mapping: dict[str, str] | None = None, data: bytes | None = None,
                filename: str | None = None) -> dict[str, Any]:
    """Import ``path`` (or ``data`` bytes named ``filename``) into ``task``, all or nothing.

    Creates the task (default kind ``custom``) when missing; appends to an existing one.
    Returns ``{"task", "n_items", "n_scores", "dimensions", "notes"}`` (notes: ids from row
    numbers, columns not imported).
    """
    p = Path(filename) if filename else Path(path)
    if not task or not task.strip():
        raise DatasetError(["--task: a task name is required"])
    try:
        task = check_name(task, "--task", "task name")
    except InputError as e:
        raise DatasetError([str(e)]) from None
    if kind is not None and kind not in KINDS:
        raise DatasetError([f"--kind {kind!r}: use one of {', '.join(KINDS)}"])
    parsed = parse_rows(p, mapping, data=data)
    existing = db.execute("SELECT id, kind FROM task WHERE name = ?", [task]).fetchone()
    if existing and kind and existing[1] != kind:
        raise DatasetError([f"task {task!r} already exists with kind {existing[1]!r}, "
                            f"not {kind!r}"])
    with transaction(db):
        if existing:
            tid = existing[0]
            clash = {r[0] for r in db.execute(
                "SELECT item_id FROM item WHERE task_id = ?", [tid]).fetchall()}
            dups = [it["item_id"] for it in parsed["items"] if it["item_id"] in clash]
            if dups:
                raise DatasetError([f"{p.name}: id {d!r} already exists in task {task!r}"
                                    for d in dups[:MAX_ERRORS]])
            start = db.execute("SELECT COALESCE(MAX(position), -1) + 1 FROM item WHERE task_id = ?",
                               [tid]).fetchone()[0]
        else:
            cur = db.execute("INSERT INTO task (name, kind, field_map, created_at) "
                             "VALUES (?, ?, ?, ?)", [task, kind or "custom", dumps(mapping or {}),
                                                     now_iso()])
            tid, start = cur.lastrowid, 0
        pk: dict[str, int] = {}
        for i, it in enumerate(parsed["items"]):
            cur = db.execute(
                "INSERT INTO item (task_id, item_id, group_id, system_id, source, context, fact, "
                "reference, output, metadata, position) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [tid, it["item_id"], it["group_id"], it["system_id"], it["source"], it["context"],
                 it["fact"], it["reference"], it["output"], dumps(it["metadata"]), start + i])
            pk[it["item_id"]] = cur.lastrowid
        db.conn.executemany(
            "INSERT INTO human_score (item_id, dimension, value, annotator) VALUES (?, ?, ?, '')",
            [(pk[iid], dim, v) for iid, dim, v in parsed["scores"]])
    return {"task": task, "n_items": len(parsed["items"]), "n_scores": len(parsed["scores"]),
            "dimensions": parsed["dimensions"], "notes": parsed["notes"]}
