"""Widgets every page uses the same way."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
import sqlite_utils
import streamlit as st

from checkeval_core.export import rows_to_csv
from checkeval_core.identity import identity_mode, resolve_annotator
from checkeval_core.tasks import default_task, list_tasks
from checkeval_core.textsafe import md_escape


def task_picker(db: sqlite_utils.Database, key: str,
                empty: str = "No task yet: load the demo on the Home page.",
                prefer_kind: str | None = None, with_human_scores: bool = False) -> str:
    """A task selectbox that remembers the choice across pages; stops the page if none.
    Before any choice it opens on :func:`checkeval_core.tasks.default_task`."""
    names = [t["name"] for t in list_tasks(db)]
    if not names:
        st.info(empty)
        st.stop()
    cur = st.session_state.get("task_name") or default_task(db, prefer_kind, with_human_scores)
    task = st.selectbox("Task", names, index=names.index(cur) if cur in names else 0, key=key)
    st.session_state["task_name"] = task
    return task


def login_state() -> tuple[bool, str | None]:
    """(a Streamlit login is configured, the logged-in user's name or None)."""
    try:
        info = st.user.to_dict()
    except Exception:  # noqa: BLE001 - no script context / no auth support
        return False, None
    if "is_logged_in" not in info:  # no [auth] section in secrets.toml
        return False, None
    if not info.get("is_logged_in"):
        return True, None
    return True, str(info.get("name") or info.get("email") or info.get("sub") or "")


def known_user() -> str:
    """The acting user's name without asking (login, trusted header, or the name typed on
    another page in this session); empty when unknown. For authorship fields."""
    configured, login_user = login_state()
    try:
        headers = st.context.headers
    except Exception:  # noqa: BLE001 - no request (bare script run)
        headers = {}
    name, _, _ = resolve_annotator(headers, login_user, st.session_state.get("annotator", ""),
                                   login_configured=configured)
    return name or ""


def current_user(key: str, label: str = "Your name") -> tuple[str | None, str]:
    """Who is acting, via :func:`checkeval_core.identity.resolve_annotator`.

    Shows a name field only when neither a login nor a trusted proxy header is configured;
    returns ``(name or None, message explaining a missing name)``.
    """
    configured, login_user = login_state()
    mode = identity_mode(configured)
    typed = ""
    if mode == "typed":
        typed = st.text_input(label, st.session_state.get("annotator", ""), key=key)
    try:
        headers = st.context.headers
    except Exception:  # noqa: BLE001 - no request (bare script run)
        headers = {}
    name, source, message = resolve_annotator(headers, login_user, typed,
                                              login_configured=configured)
    if name:
        st.session_state["annotator"] = name
        if source in ("login", "header"):
            how = "Streamlit login" if source == "login" else "login proxy"
            st.caption(f"Signed in as **{md_escape(name)}** ({how})")
    elif source == "login" and configured:
        st.button("Log in", key=f"{key}_login", on_click=st.login)
    return name, message


def table_csv(data: pd.DataFrame | Iterable[dict[str, Any]]) -> str:
    """CSV text of a table through the formula-safe export (cells such as ``=cmd|…`` are
    prefixed with ``'``); missing values become empty cells."""
    if isinstance(data, pd.DataFrame):
        cols = [str(c) for c in data.columns]
        clean = data.astype(object).where(data.notna(), "")
        records = [dict(zip(cols, r)) for r in clean.itertuples(index=False, name=None)]
        return rows_to_csv(records, cols)
    return rows_to_csv(list(data))


def csv_download(data: pd.DataFrame | Iterable[dict[str, Any]], file_name: str, key: str,
                 label: str = "Download CSV") -> None:
    """A download button for a table, replacing Streamlit's built-in table export (switched
    off by ``client.disableDataExport``) which writes formula cells unescaped."""
    st.download_button(label, table_csv(data), file_name, mime="text/csv", key=key,
                       help="Spreadsheet-safe: cells starting with = + - @ are prefixed "
                            "with ' so they are never run as formulas.")
