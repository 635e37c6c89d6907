"""Importing an external metric's scores per item (CSV: ``item_id`` + one column per
dimension), atomically, so it can be analysed exactly like a run."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

import sqlite_utils

from checkeval_core.store import now_iso, rows, task_id, transaction


class MetricFileError(ValueError):
    """A metric file that cannot be imported; the message names the file, line and field."""


def import_metric(db: sqlite_utils.Database, task: str, path: str | Path,
                  name: str | None = None, data: bytes | None = None) -> dict[str, Any]:
    p = Path(path)
    name = name or p.stem
    raw = data if data is not None else p.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise MetricFileError(f"{p.name}: invalid UTF-8 at byte {e.start}") from None
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "item_id" not in reader.fieldnames:
        raise MetricFileError(f"{p.name}, line 1: needs a column 'item_id' and one column per "
                              "dimension")
    dims = [c for c in reader.fieldnames if c != "item_id"]
    if not dims:
        raise MetricFileError(f"{p.name}, line 1: no dimension column next to 'item_id'")
    tid = task_id(db, task)
    pk = {r[0]: r[1] for r in db.execute("SELECT item_id, id FROM item WHERE task_id = ?",
                                         [tid])}
    values, errors = [], []
    for row in reader:
        loc = f"{p.name}, line {reader.line_num}"
        iid = (row.get("item_id") or "").strip()
        if iid not in pk:
            errors.append(f"{loc}, field 'item_id': unknown item {iid!r} in task {task!r}")
            continue
        for d in dims:
            v = (row.get(d) or "").strip()
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
        if len(errors) >= 20:
            break
    if errors:
        raise MetricFileError("\n".join(errors))
    if not values:
        raise MetricFileError(f"{p.name}: no scores")
    with transaction(db):
        db.execute("DELETE FROM external_metric WHERE task_id = ? AND name = ?", [tid, name])
        mid = db.execute("INSERT INTO external_metric (task_id, name, created_at) VALUES "
                         "(?, ?, ?)", [tid, name, now_iso()]).lastrowid
        db.conn.executemany("INSERT INTO external_score (metric_id, item_id, dimension, value) "
                            "VALUES (?, ?, ?, ?)", [(mid, i, d, v) for i, d, v in values])
    return {"metric": name, "id": mid, "n_scores": len(values), "dimensions": dims}


def list_metrics(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    return rows(db, "SELECT id, name, created_at FROM external_metric WHERE task_id = ? "
                    "ORDER BY name", [task_id(db, task)])
