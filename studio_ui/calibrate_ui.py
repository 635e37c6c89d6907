"""The human-calibrated estimate (PPI++) section shown on Analysis and Rankings beside the raw
judge scores (Streamlit calls only; the numbers come from
``checkeval_core.analysis.calibrate``)."""

from __future__ import annotations

import pandas as pd
import sqlite_utils
import streamlit as st

from checkeval_core.analysis.calibrate import SHOWN_COLUMNS, calibrated_view, run_calibrated
from checkeval_core.store import NotFound
from checkeval_core.textsafe import md_escape
from studio_ui.tables import show_table
from studio_ui.widgets import csv_download

_NUM = ("raw judge", "judge alone (biased)", "judge width", "humans alone", "humans width",
        "calibrated", "calibrated width", "width vs humans", "λ")


def calibrated_section(db: sqlite_utils.Database, run_ids: list[int], labels: dict,
                       aggregation: str | None, key: str) -> None:
    """Per system and dimension: judge alone, humans alone and the calibrated estimate."""
    st.subheader("Human-calibrated estimate of each system's mean human score")
    if not run_ids:
        return
    c1, c2 = st.columns([3, 2])
    rid = c1.selectbox("Run", run_ids, format_func=labels.get, key=f"{key}_run")
    per = c2.number_input("Labelled items per system (0 = every dev item with a human score)",
                          0, 1000, 0, 1, key=f"{key}_n")
    try:
        view = calibrated_view(run_calibrated(db, int(rid), int(per) or None,
                                              aggregation=aggregation))
    except (NotFound, ValueError) as e:
        st.info(md_escape(str(e)))
        return
    if view["note"]:
        st.info(view["note"] + " — import human scores on the Data page (or annotate a "
                "sample) to calibrate the judge's scores.")
        return
    st.markdown(view["summary"])
    st.caption(view["caption"])
    # an undefined figure is a dash with the row's reason on hover, never "None"; the
    # estimate, its width against humans alone and why first (the rest in the CSV)
    table = pd.DataFrame(view["rows"])
    show_table(table, {**{c: st.column_config.NumberColumn(c, format="%.2f") for c in _NUM},
                       "why": st.column_config.TextColumn(width="large")},
               hide_index=True, key=f"{key}_table", width="stretch",
               column_order=[c for c in SHOWN_COLUMNS if c in table.columns])
    csv_download(table, f"calibrated-{key}.csv", f"{key}_csv", "Every column (CSV)")
