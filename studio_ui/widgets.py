"""Widgets every page uses the same way."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd
import sqlite_utils
import streamlit as st

from checkeval_core.export import rows_to_csv
from checkeval_core.identity import identity_mode, login_identity, resolve_annotator
from checkeval_core.runs.labels import run_label
from checkeval_core.runs.selection import comparability
from checkeval_core.safeio import WouldReplace
from checkeval_core.tasks import default_task, list_tasks
from checkeval_core.team import auth_configured
from checkeval_core.textsafe import md_escape
from studio_ui.tables import show_table


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
    """(a Streamlit login is configured, the logged-in person or None): the person is their
    verified email, else their ``sub`` (:func:`checkeval_core.identity.login_identity`), never
    the display ``name`` they chose; an account with neither is not named."""
    try:
        info = st.user.to_dict()
    except Exception:  # noqa: BLE001 - no script context / no auth support
        # with a login configured, a state that cannot be read is nobody (it turned every
        # role check off: the app took it for the single-user tool)
        return auth_configured(), None
    if "is_logged_in" not in info:  # no [auth] section in secrets.toml
        return False, None
    if not info.get("is_logged_in"):
        return True, None
    return True, login_identity(info)


#: The roles a person acts in; each keeps its own name for the session.
ROLES = ("annotator", "reviewer", "coordinator")
_ROLE_LABEL = {"annotator": "Your name as annotator",
               "reviewer": "Your name as reviewer (recorded with each decision)",
               "coordinator": "Your name as coordinator (recorded with each settled answer)"}


def _role_key(role: str) -> str:
    if role not in ROLES:
        raise ValueError(f"role {role!r}: use one of {', '.join(ROLES)}")
    return f"user_name|{role}"


def known_user(role: str) -> str:
    """The name of whoever acts in ``role``, without asking (login, trusted header, or the name
    typed for that role earlier in this session); empty when unknown. For authorship fields.
    A name typed for another role never counts."""
    configured, login_user = login_state()
    try:
        headers = st.context.headers
    except Exception:  # noqa: BLE001 - no request (bare script run)
        headers = {}
    name, _, _ = resolve_annotator(headers, login_user,
                                   st.session_state.get(_role_key(role), ""),
                                   login_configured=configured)
    return name or ""


def current_user(key: str, role: str, label: str | None = None) -> tuple[str | None, str]:
    """Who is acting in ``role`` (annotator, reviewer or coordinator), via
    :func:`checkeval_core.identity.resolve_annotator`.

    A login or a trusted proxy header names the person in every role. Otherwise a name field
    labelled with the role is shown, pre-filled only with the name typed for the same role:
    an annotator's name never becomes a reviewer's or a coordinator's by itself. Returns
    ``(name or None, message explaining a missing name)``.
    """
    store = _role_key(role)
    configured, login_user = login_state()
    mode = identity_mode(configured)
    typed = ""
    if mode == "typed":
        typed = st.text_input(label or _ROLE_LABEL[role], st.session_state.get(store, ""),
                              key=key)
    try:
        headers = st.context.headers
    except Exception:  # noqa: BLE001 - no request (bare script run)
        headers = {}
    name, source, message = resolve_annotator(headers, login_user, typed,
                                              login_configured=configured)
    if name:
        st.session_state[store] = name
        if source in ("login", "header"):
            how = "Streamlit login" if source == "login" else "login proxy"
            st.caption(f"Signed in as **{md_escape(name)}** ({how}), acting as {role}")
    elif source == "typed":
        st.session_state.pop(store, None)
    elif source == "login" and configured:
        st.button("Log in", key=f"{key}_login", on_click=st.login)
    return name, message


def settled_user(key: str, role: str) -> tuple[str | None, str]:
    """:func:`current_user` for a page driven by keyboard shortcuts (Pairwise votes): a typed
    name, once given, is shown as text with a *Change name* button instead of staying in a
    field. A Streamlit text field keeps the focus after Enter and Esc does not leave it, so
    the A / B / T pressed next were typed into the name; with no field left there is nothing
    to type into. A login or a trusted header names the person as in :func:`current_user`."""
    settled = f"{key}|settled"
    typed_mode = identity_mode(login_state()[0]) == "typed"
    name = st.session_state.get(settled) if typed_mode else None
    if name:
        st.markdown(f"{role.capitalize()}: **{md_escape(name)}**")

        def change() -> None:  # the field comes back empty: a new name is typed and settled
            st.session_state.pop(settled, None)
            st.session_state.pop(_role_key(role), None)

        st.button("Change name", key=f"{key}_change", on_click=change)
        return name, ""
    who, why = current_user(key, role)
    if who and typed_mode:
        st.session_state[settled] = who
        st.rerun()  # drawn again without the field, which had the focus
    return who, why


#: Why a cell of the Run page's estimate-vs-actual table is empty, per column.
COST_REASONS = {"estimate": "not estimated when the run started (no measured rate or no price "
                            "for this judge)",
                "actual": "not measured (a remote judge without a price has no dollar figure)",
                "actual / estimate": "needs both figures, the estimate above 0"}


def say_reused(reused: list[tuple[int, str, str]]) -> None:
    """A start pressed again with the same choices: which run is already there (the Run
    page's *Start* and its batch section say it alike)."""
    for rid, spec, m in reused:
        st.info(f"Run {rid} ({md_escape(spec)} / {m}) with the same settings is already pending "
                "or running: not started again.")


def cost_table(rows: list[dict[str, Any]]) -> None:
    """The estimate stored when a run started beside what it cost; an empty cell is a dash
    with its reason on hover, never "None"."""
    show_table(pd.DataFrame(rows), None, COST_REASONS, hide_index=True)


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


def confirm_step(key: str, armed_by: bool, subject: Any, question: str,
                 confirm_label: str = "Confirm delete") -> bool:
    """The second step of a destructive action: ``armed_by`` (its first button was pressed)
    shows ``question`` with *Confirm* (key ``{key}_confirm``) and *Cancel* (``{key}_cancel``);
    True on the run where Confirm is pressed. Armed for one ``subject`` only (switching to
    another dimension, say, asks again)."""
    state = f"{key}_armed"
    if armed_by:
        st.session_state[state] = subject
    if st.session_state.get(state) != subject:
        return False
    with st.container(border=True):
        st.warning(question)
        k1, k2 = st.columns(2)
        k2.button("Cancel", key=f"{key}_cancel", on_click=st.session_state.pop, args=(state, None))
        if k1.button(confirm_label, key=f"{key}_confirm", type="primary"):
            st.session_state.pop(state, None)
            return True
    return False


def ask_before_replacing(key: str, pressed: bool, subject: Any,
                         do: Callable[[bool], dict[str, Any]]) -> dict[str, Any] | None:
    """An import that may replace what is stored under its name: on ``pressed`` runs
    ``do(False)`` (the core refuses with :class:`WouldReplace` instead of replacing); when it
    would replace, asks first (:func:`confirm_step`, key ``key``, for this ``subject`` — the
    task and file) and runs ``do(True)`` on *Replace*. ``do``'s result, or None."""
    if pressed:
        try:
            return do(False)
        except WouldReplace as e:
            st.session_state[f"{key}_msg"] = str(e)
    msg = st.session_state.get(f"{key}_msg", "")
    if msg and confirm_step(key, pressed, subject, md_escape(msg[:1].upper() + msg[1:]) +
                            ". Replace it?", "Replace"):
        st.session_state.pop(f"{key}_msg", None)
        return do(True)
    return None


def run_multiselect(db: sqlite_utils.Database, container: Any, label: str,
                    runs: list[dict[str, Any]], key: str, default: list[int],
                    reset: bool = False, help: str | None = None) -> list[int]:
    """A multiselect of runs, each under its one label (:func:`run_label`).

    Runs not comparable with the current selection (another task, or no item shared with the
    items the selected runs share: :func:`comparability`) stay selectable — Streamlit cannot
    disable one option — but are marked "not comparable" and listed under the field with the
    reason. The selection is kept in ``st.session_state[key]`` and set there (never through
    the widget's default): on ``reset`` (a task switch) it becomes ``default`` and the browser
    is told to show it, instead of keeping the previous task's chips on screen."""
    labels = {r["id"]: run_label(r) for r in runs}
    cur = st.session_state.get(key)
    if reset or cur is None:
        st.session_state[key] = [r for r in default if r in labels]
    elif any(r not in labels for r in cur):
        st.session_state[key] = [r for r in cur if r in labels]
    why = comparability(db, list(st.session_state[key]), list(labels))
    chosen = container.multiselect(
        label, list(labels), key=key, help=help, wrap=True,  # every chosen run's label in view
        format_func=lambda r: labels[r] + (" — not comparable" if why.get(r) else ""))
    out = [r for r in labels if why.get(r) and r not in chosen]
    if out:
        container.caption("Not comparable with the selection: " + "; ".join(
            f"{md_escape(labels[r])} ({md_escape(why[r] or '')})" for r in out))
    return chosen
