"""Column configurations that keep decisions in view.

Decision tables (Yes/No per run, human scores, filter verdicts, flags) used to put a long
text column first and the decisions after it, so at 1440×900 the decisions were off to the
right. These helpers give every page the same shape: narrow decision columns with a help
text that names what they hold (e.g. the run), a long-text column that is truncated in the
cell (full text in the row's detail / on double-click) and readable labels instead of raw
field names. Pages build a ``column_config`` mapping with :func:`table_config` and pass
it to ``st.dataframe`` with ``column_order`` from :func:`order`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from checkeval_core.stats.values import pct

#: Width in pixels of a compact decision cell ("✓ 0.82", "invalid", "4.5").
DECISION_WIDTH = 84
#: Width of short identifier columns (ids, groups, systems, dimensions).
KEY_WIDTH = 110
#: An identifier column widens to show its longest value whole, up to this (a SummEval
#: document id is ~48 characters: "dm-test-8764fb…" told the reader nothing)
KEY_MAX_WIDTH, KEY_CHAR_PX, KEY_PAD_PX = 420, 8, 24


def decision_column(label: str, help_text: str, width: int = DECISION_WIDTH) -> Any:
    """A narrow text column for one decision per row (a run's verdict, a filter's verdict)."""
    return st.column_config.TextColumn(label, width=width, help=help_text)


def score_column(label: str, help_text: str, width: int = DECISION_WIDTH,
                 fmt: str = "%.2f") -> Any:
    """A narrow number column (a human score, a judge score, a gap)."""
    return st.column_config.NumberColumn(label, width=width, help=help_text, format=fmt)


def key_column(label: str, help_text: str | None = None, width: int = KEY_WIDTH) -> Any:
    """A short identifier column (id, group, system, dimension)."""
    return st.column_config.TextColumn(label, width=width, help=help_text)


def long_text_column(label: str, help_text: str, width: str | int = "large") -> Any:
    """The long text of a row (question, output): truncated in the cell, full text on
    double-click or in the page's detail view (the help says so)."""
    return st.column_config.TextColumn(label, width=width, help=help_text)


#: a row's text line and the cell's padding in pixels (Streamlit's grid at its default font);
#: the grid wraps a cell's text only in rows taller than 4rem (64 px)
LINE_PX, PAD_PX, WRAP_MIN_PX = 18, 16, 66


def wrapped_row_height(texts: Iterable[Any], chars_per_line: int = 60,
                       max_lines: int = 3) -> int | None:
    """A ``row_height`` for ``st.dataframe`` that shows the longest of ``texts`` on up to
    ``max_lines`` lines (Streamlit wraps a cell's text when its row is taller than one line),
    or None (the default height) when every text fits on one. A question cut after ~25
    characters cannot be read without selecting its row; a longer one still shows whole
    when selected."""
    longest = max((len(str(t)) for t in texts), default=0)
    lines = min(max_lines, -(-longest // max(1, chars_per_line)))
    return None if lines <= 1 else max(WRAP_MIN_PX, LINE_PX * lines + PAD_PX)


def table_config(*, decisions: Mapping[str, str] | None = None,
                 scores: Mapping[str, str] | None = None,
                 counts: Mapping[str, str] | None = None,
                 keys: Mapping[str, str] | None = None,
                 long: Mapping[str, str] | None = None,
                 labels: Mapping[str, str] | None = None,
                 hidden: Iterable[str] = (),
                 long_width: str | int = "large",
                 widths: Mapping[str, str | int] | None = None) -> dict[str, Any]:
    """A ``column_config`` for ``st.dataframe``.

    Each mapping is ``{column name: help text}`` (``counts`` are whole numbers: sample
    sizes) except ``labels`` (``{column: readable
    label}``, applied to every kind) and ``hidden`` (columns not shown at all).
    ``long_width`` is the width of the long-text columns (``"medium"`` when a table has many
    decision columns, so that all of them fit beside it); ``widths`` overrides the width of
    single long-text columns.
    """
    labels = dict(labels or {})
    cfg: dict[str, Any] = {}
    for col, text in (keys or {}).items():
        cfg[col] = key_column(labels.get(col, col), text or None)
    for col, text in (decisions or {}).items():
        cfg[col] = decision_column(labels.get(col, col), text)
    for col, text in (scores or {}).items():
        cfg[col] = score_column(labels.get(col, col), text)
    for col, text in (counts or {}).items():
        cfg[col] = score_column(labels.get(col, col), text, fmt="%d")
    for col, text in (long or {}).items():
        cfg[col] = long_text_column(labels.get(col, col), text,
                                    (widths or {}).get(col, long_width))
    for col, label in labels.items():
        cfg.setdefault(col, st.column_config.Column(label))
    for col in hidden:
        cfg[col] = None
    return cfg


def order(*groups: Iterable[str]) -> list[str]:
    """Column order: the given groups in turn (keys, decisions, long text last so the
    decisions never sit behind it), each column once."""
    out: list[str] = []
    for g in groups:
        for c in g:
            if c not in out:
                out.append(c)
    return out


#: What a table shows where a value is undefined (never Streamlit's raw "None").
DASH = "—"
#: The hover text of a column with a dash when the table has a note column saying why.
SEE_NOTE = "— = undefined: the row's note says why"
NOTE_COLUMNS = ("note", "reason", "notes", "why")


def _missing(v: Any) -> bool:
    """None, NaN or pandas' NA (never a list or other container)."""
    if v is None:
        return True
    if isinstance(v, (list, tuple, dict, set)):
        return False
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_))


def _cell(v: Any, fmt: str | None) -> str:
    """One defined value as the text its number column would have shown."""
    if not _number(v):
        return str(v)
    if fmt == "percent":
        return pct(v, 1)
    if fmt and "%" in fmt:
        try:
            return fmt % v
        except (TypeError, ValueError):
            pass
    return str(v) if isinstance(v, (int, np.integer)) else f"{v:.3f}"


def dash_missing(data: Any, column_config: Mapping[str, Any] | None = None,
                 reasons: Mapping[str, str] | None = None) -> tuple[Any, dict[str, Any]]:
    """``(table, column_config)`` with every undefined cell (None / NaN) shown as a dash.

    Streamlit draws a missing cell as a grey "None", whatever the column's format, so a
    column with any missing value becomes text: the defined values formatted as its number
    column would have shown them (right-aligned), the missing ones ``—``. The column's hover
    help gains why a value is missing: ``reasons[column]``, else "see the row's note" when the
    table has a note column, else "no value". Columns without a missing value are untouched.
    """
    df = data.copy() if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    cfg = dict(column_config or {})
    has_note = any(c in df.columns for c in NOTE_COLUMNS)
    for col in df.columns:
        values = df[col].tolist()
        if not any(_missing(v) for v in values):
            continue
        old = cfg.get(col)
        old = old if isinstance(old, dict) else ({"label": old} if isinstance(old, str) else {})
        if col in NOTE_COLUMNS:  # no note: nothing to explain, an empty cell
            df[col] = ["" if _missing(v) else v for v in values]
            continue
        fmt = (old.get("type_config") or {}).get("format")
        defined = [v for v in values if not _missing(v)]
        numeric = any(_number(v) for v in defined)
        if numeric and fmt is None and all(_number(v) and float(v).is_integer()
                                           for v in defined):
            fmt = "%d"  # whole numbers (counts) that pandas turned into floats beside a None
        df[col] = [DASH if _missing(v) else _cell(v, fmt) for v in values]
        why = (reasons or {}).get(col) or (SEE_NOTE if has_note else f"{DASH} = no value")
        if why and not why.startswith(DASH):
            why = f"{DASH} = {why}"
        help_text = " · ".join(x for x in (old.get("help"), why) if x)
        cfg[col] = st.column_config.TextColumn(
            old.get("label") or str(col), width=old.get("width"), help=help_text,
            alignment="right" if numeric else None)
    return df, cfg


def fit_keys(df: pd.DataFrame, cfg: Mapping[str, Any]) -> dict[str, Any]:
    """``cfg`` with each identifier column (:func:`key_column`, ``KEY_WIDTH``) as wide as its
    longest value, up to ``KEY_MAX_WIDTH``: short ids stay narrow, a long document id is read
    whole instead of cut after a dozen characters."""
    out = dict(cfg)
    for col, c in cfg.items():
        if col not in df.columns or not isinstance(c, dict) or c.get("width") != KEY_WIDTH:
            continue
        longest = max((len(str(v)) for v in df[col].tolist()), default=0)
        out[col] = {**c, "width": min(KEY_MAX_WIDTH,
                                      max(KEY_WIDTH, KEY_PAD_PX + KEY_CHAR_PX * longest))}
    return out


def show_table(data: Any, column_config: Mapping[str, Any] | None = None,
               reasons: Mapping[str, str] | None = None, **kw: Any) -> Any:
    """``st.dataframe`` of ``data`` with undefined cells as a dash and why on hover
    (:func:`dash_missing`) and identifier columns wide enough for their values
    (:func:`fit_keys`); every other keyword goes to ``st.dataframe``."""
    df, cfg = dash_missing(data, column_config, reasons)
    return st.dataframe(df, column_config=fit_keys(df, cfg), **kw)
