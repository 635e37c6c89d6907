"""Importing an external metric's scores per item (CSV: ``item_id`` + one column per
dimension), atomically, so it can be analysed exactly like a run."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path, PurePosixPath
from typing import Any

import sqlite_utils

from checkeval_core.safeio import (
    LIMITS,
    InputError,
    WouldReplace,
    check_size,
    decode_text,
    read_bytes,
)
from checkeval_core.store import now_iso, rows, task_id, transaction
from checkeval_core.team import guarded

MAX_ERRORS = 20
MAX_NAME_CHARS = 200


class MetricFileError(ValueError):
    """A metric file that cannot be imported; the message names the file, line and field."""


@guarded("data.import")
def import_metric(db: sqlite_utils.Database, task: str, path: str | Path,
                  name: str | None = None, data: bytes | None = None,
                  replace: bool = True) -> dict[str, Any]:
    """Import a metric CSV from ``path`` (or ``data``, an upload's bytes; ``path`` is then only
    the client's file name, for the metric's default name and messages). All or nothing:
    ragged rows, an item listed twice, a non-number or an unknown item refuse the file. A
    metric of the same name is replaced (``replaced``: how many scores went), or with
    ``replace=False`` the import is refused with :class:`WouldReplace` (the page asks first)."""
    fname = PurePosixPath(str(path).replace("\\", "/")).name or "upload.csv"
    name = (name or PurePosixPath(fname).stem).strip()[:MAX_NAME_CHARS] or "metric"
    try:
        raw = read_bytes(path) if data is None else check_size(data, fname)
        text = decode_text(raw, fname)
    except InputError as e:
        raise MetricFileError(str(e)) from None
    if not text.strip():
        raise MetricFileError(f"{fname}: the file is empty")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except csv.Error as e:
        raise MetricFileError(f"{fname}, line 1: malformed CSV ({e})") from None
    if "item_id" not in header:
        raise MetricFileError(f"{fname}, line 1: needs a column 'item_id' and one column per "
                              "dimension")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise MetricFileError(f"{fname}, line 1: duplicate column(s) {', '.join(dup)}")
    if any(not h for h in header):
        raise MetricFileError(f"{fname}, line 1: a column has no name")
    dims = [c for c in header if c != "item_id"]
    if not dims:
        raise MetricFileError(f"{fname}, line 1: no dimension column next to 'item_id'")
    tid = task_id(db, task)
    pk = {r[0]: r[1] for r in db.execute("SELECT item_id, id FROM item WHERE task_id = ?",
                                         [tid])}
    values, errors = [], []
    seen: dict[str, int] = {}
    n_rows = 0
    try:
        for cells in reader:
            loc = f"{fname}, line {reader.line_num}"
            if not cells or all(not c.strip() for c in cells):
                continue
            n_rows += 1
            if n_rows > LIMITS["rows"]:
                raise MetricFileError(f"{loc}: more than {LIMITS['rows']:,} rows in one "
                                      "import (the limit)")
            if len(cells) != len(header):
                errors.append(f"{loc}: has {len(cells)} fields, the header has {len(header)}")
            else:
                row = dict(zip(header, cells))
                iid = row["item_id"].strip()
                if iid not in pk:
                    errors.append(f"{loc}, field 'item_id': unknown item {iid[:60]!r} in task "
                                  f"{task!r}")
                elif iid in seen:
                    errors.append(f"{loc}, field 'item_id': item {iid!r} is listed twice "
                                  f"(first at line {seen[iid]})")
                else:
                    seen[iid] = reader.line_num
                    for d in dims:
                        v = row[d].strip()
                        if v == "":
                            continue
                        try:
                            x = float(v)
                        except ValueError:
                            errors.append(f"{loc}, field {d!r}: {v[:30]!r} is not a number")
                            continue
                        if not math.isfinite(x):
                            errors.append(f"{loc}, field {d!r}: {v!r} is not finite")
                            continue
                        values.append((pk[iid], d, x))
            if len(errors) >= MAX_ERRORS:
                break
    except csv.Error as e:
        errors.append(f"{fname}, line {reader.line_num}: malformed CSV ({e})")
    if errors:
        raise MetricFileError("\n".join(errors[:MAX_ERRORS]))
    if not values:
        raise MetricFileError(f"{fname}: no scores")
    with transaction(db):
        old = db.execute("SELECT COUNT(s.metric_id), MIN(m.created_at) FROM external_metric m "
                         "LEFT JOIN external_score s ON s.metric_id = m.id WHERE m.task_id = ? AND "
                         "m.name = ?", [tid, name]).fetchone()
        if old[1] is not None and not replace:
            raise WouldReplace(f"a metric named {name!r} is already stored ({old[0]:,} scores, "
                               f"imported {old[1][:16].replace('T', ' ')}): this file replaces "
                               "it")
        db.execute("DELETE FROM external_score WHERE metric_id IN (SELECT id FROM "
                   "external_metric WHERE task_id = ? AND name = ?)", [tid, name])
        db.execute("DELETE FROM external_metric WHERE task_id = ? AND name = ?", [tid, name])
        mid = db.execute("INSERT INTO external_metric (task_id, name, created_at) VALUES "
                         "(?, ?, ?)", [tid, name, now_iso()]).lastrowid
        db.conn.executemany("INSERT INTO external_score (metric_id, item_id, dimension, value) "
                            "VALUES (?, ?, ?, ?)", [(mid, i, d, v) for i, d, v in values])
    return {"metric": name, "id": mid, "n_scores": len(values), "dimensions": dims,
            "replaced": int(old[0]) if old[1] is not None else 0}


def list_metrics(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    return rows(db, "SELECT id, name, created_at FROM external_metric WHERE task_id = ? "
                    "ORDER BY name", [task_id(db, task)])
