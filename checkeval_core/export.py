"""Writing rows to CSV or JSONL safely: the one place every export goes through.

CSV cells that a spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``,
``@``, tab or carriage return) are prefixed with a single quote. Numbers are written as
numbers (a negative score stays ``-0.5``); only text cells are neutralised. JSONL is
written as-is (it is data, not a spreadsheet).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralize_cell(value: Any) -> Any:
    """Prefix text that would start a spreadsheet formula with ``'``; leave numbers alone."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    if isinstance(value, (dict, list)):
        return neutralize_cell(json.dumps(value, ensure_ascii=False))
    return value


def rows_to_csv(rows: Iterable[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    """CSV text for ``rows`` with formula neutralising; columns default to the first row's keys."""
    rows = list(rows)
    cols = list(columns) if columns else (list(rows[0].keys()) if rows else [])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([neutralize_cell(c) for c in cols])
    for r in rows:
        w.writerow([neutralize_cell(r.get(c, "")) for c in cols])
    return buf.getvalue()


def rows_to_jsonl(rows: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def write_rows(rows: Iterable[dict[str, Any]], fmt: str, out: str | Path,
               columns: Sequence[str] | None = None) -> int:
    """Write ``rows`` to ``out`` as ``csv`` or ``jsonl``; returns the number of rows written."""
    rows = list(rows)
    if fmt == "csv":
        text = rows_to_csv(rows, columns)
    elif fmt == "jsonl":
        text = rows_to_jsonl(rows)
    else:
        raise ValueError(f"unknown format {fmt!r}: use csv or jsonl")
    Path(out).write_text(text, encoding="utf-8")
    return len(rows)
