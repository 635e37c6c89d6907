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

import streamlit as st

#: Width in pixels of a compact decision cell ("✓ 0.82", "invalid", "4.5").
DECISION_WIDTH = 84
#: Width of short identifier columns (ids, groups, systems, dimensions).
KEY_WIDTH = 110


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
