"""The coverage–agreement section of an escalating run (Analysis and Versions pages)."""

from __future__ import annotations

import sqlite_utils
import streamlit as st

from checkeval_core.analysis.escalation_view import (
    curve_page,
    escalating_runs,
    task_escalating_runs,
)
from checkeval_core.runs.jobs import answer_count
from checkeval_core.store import db_path, open_db


@st.cache_data(ttl=60, show_spinner="Computing the coverage–agreement curve…", max_entries=8)
def _page(path: str, run_id: int, n_answers: int) -> dict:
    return curve_page(open_db(path), run_id)


def escalation_section(db: sqlite_utils.Database, run_ids: list[int] | None = None,
                       task: str | None = None, key: str = "esc") -> None:
    """Nothing when no run escalates; else the curve of the chosen escalating run."""
    ids = escalating_runs(db, [int(r) for r in run_ids]) if run_ids is not None else \
        task_escalating_runs(db, task or "")
    if not ids:
        return
    st.subheader("Escalation: coverage vs agreement")
    rid = st.selectbox("Escalating run", ids, key=f"{key}_run",
                       format_func=lambda r: f"#{r}") if len(ids) > 1 else ids[0]
    n = answer_count(db, int(rid))
    page = _page(str(db_path(db)), int(rid), int(n))
    if page["summary"]:
        st.text(page["summary"])
    if page["note"]:
        st.warning(page["note"])
    if page["figure"] is not None:
        st.plotly_chart(page["figure"], use_container_width=True, key=f"{key}_chart")
        st.caption(page["caption"])
    if page["reason"]:
        st.info(page["reason"])
