"""Rendering helpers of the Data page: the column-mapping form, the item browser's table and
the export buttons (Streamlit calls only; the rows come from ``checkeval_core.tasks``)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import sqlite_utils
import streamlit as st

from checkeval_core.datasets import TEXT_FIELDS
from checkeval_core.export import rows_to_csv, rows_to_jsonl
from checkeval_core.tasks import export_rows
from checkeval_core.textsafe import md_escape, truncate
from studio_ui.tables import order, table_config

ROW_NUMBERS = "(row numbers)"


def column_mapping(columns: list[str], numeric: list[str] | None = None) -> dict[str, str]:
    """Selectors mapping the file's columns to fields, and the numeric columns to human-score
    dimensions; returns the non-identity choices (``human_<dimension>: column`` for scores).
    Without an id column the id selector offers the row numbers (the default then)."""
    mapping: dict[str, str] = {}
    if not columns:
        return mapping
    st.caption("Map the file's columns to fields (defaults: same name).")
    cols = st.columns(4)
    for i, field in enumerate(("id", *TEXT_FIELDS)):
        default = field if field in columns else ("input" if field == "source"
                                                  and "input" in columns else "")
        options = ["", *columns]
        choice = cols[i % 4].selectbox(field, options,
                                       index=options.index(default)
                                       if default in options else 0,
                                       format_func=lambda c, f=field: c or (
                                           ROW_NUMBERS if f == "id" else "(none)"),
                                       key=f"map_{field}")
        if choice and choice != field:
            mapping[field] = choice
    offer = [c for c in (numeric or []) if not c.startswith("human_")]
    if offer:
        picked = st.multiselect(
            "Numeric columns holding human scores", offer, key="map_scores",
            help="Each becomes a human-score dimension (named below); columns named "
                 "human_<dimension> are human scores already.")
        for c in picked:
            dim = st.text_input(f"Dimension of column '{md_escape(c)}'", c,
                                key=f"map_dim_{c}").strip()
            mapping[f"human_{dim or c}"] = c
    return mapping


def import_waits(ok: bool, dest: str | None, target: str, kind: str | None, clash: bool,
                 new: str) -> str | None:
    """What a disabled *Import* button waits for, in words (None: it is enabled)."""
    wants = [w for w, missing in (
        ("a file that can be read (see the problems above)", not ok),
        ("where the file goes (a new or an existing task)", dest is None),
        ("the new task's name", dest == new and not target.strip()),
        ("another name (a task with this name exists)", dest == new and clash),
        ("the new task's kind", dest == new and kind is None),
        ("the task to add the items to", dest not in (None, new) and not target)) if missing]
    return "Import waits for: " + "; ".join(wants) + "." if wants else None


def preview_table(items: list[dict[str, Any]]) -> None:
    """The first 20 parsed items, long texts truncated."""
    st.dataframe(pd.DataFrame([{k: truncate(v, 80) if isinstance(v, str) else v
                                for k, v in it.items() if k != "metadata"}
                               for it in items[:20]]), hide_index=True)


def items_table(its: list[dict[str, Any]]) -> None:
    """One page of items: ids, then the human scores (narrow), the long output last."""
    table = pd.DataFrame([{
        "id": it["item_id"], "group": it["group_id"], "system": it["system_id"],
        "output": truncate(it["output"], 160),
        **{f"human {d}": v for d, v in sorted(it["scores"].items())}} for it in its])
    # human scores right after the ids, narrow; the long output last (never pushes them
    # out of view)
    score_cols = [c for c in table.columns if c.startswith("human ")]
    st.dataframe(table, hide_index=True, width="stretch",
                 column_order=order(["id", "group", "system"], score_cols, ["output"]),
                 column_config=table_config(
                     keys={"id": "", "group": "Source document / context", "system": ""},
                     scores={c: f"Human score for {c[6:]}" for c in score_cols},
                     labels={c: c[6:] for c in score_cols},
                     long={"output": "The output, truncated: pick the item below to read "
                                     "it in full"}, long_width="medium"))


def export_buttons(db: sqlite_utils.Database, task: str) -> None:
    """Download buttons for the whole task's items and scores (read only when called)."""
    c1, c2, c3, c4 = st.columns(4)
    item_rows = export_rows(db, task, "items")
    score_rows = export_rows(db, task, "scores")
    c1.download_button("Items (CSV)", rows_to_csv(item_rows), f"{task}-items.csv",
                       "text/csv", on_click="ignore")
    c2.download_button("Items (JSONL)", rows_to_jsonl(item_rows), f"{task}-items.jsonl",
                       on_click="ignore")
    c3.download_button("Scores (CSV)", rows_to_csv(score_rows), f"{task}-scores.csv",
                       "text/csv", on_click="ignore")
    c4.download_button("Scores (JSONL)", rows_to_jsonl(score_rows),
                       f"{task}-scores.jsonl", on_click="ignore")
