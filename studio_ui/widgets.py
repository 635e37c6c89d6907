"""Widgets every page uses the same way."""

from __future__ import annotations

import sqlite_utils
import streamlit as st

from checkeval_core.tasks import list_tasks


def task_picker(db: sqlite_utils.Database, key: str,
                empty: str = "No task yet: load the demo on the Home page.") -> str:
    """A task selectbox that remembers the choice across pages; stops the page if none."""
    names = [t["name"] for t in list_tasks(db)]
    if not names:
        st.info(empty)
        st.stop()
    cur = st.session_state.get("task_name")
    task = st.selectbox("Task", names, index=names.index(cur) if cur in names else 0, key=key)
    st.session_state["task_name"] = task
    return task
