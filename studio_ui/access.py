"""Who is using the app, and which pages they get — the frame's side of
:mod:`checkeval_core.team` (which decides).

With no login configured :func:`request_actor` is ``None`` and the app is the single-user tool
(every page, no checks). With a login (Streamlit ``[auth]`` or the trusted proxy header) it
names the request's person; the core checks that person's role on every write, and
:func:`navigation` keeps only the pages the role may open — the others stay at their address
as hidden pages that say why they are refused, so a deep link is refused too, not opened.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlite_utils
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from checkeval_core import team
from checkeval_core.identity import identity_mode, resolve_annotator
from checkeval_core.textsafe import md_escape
from studio_ui.widgets import login_state

_ALLOWED = "_allowed_pages"  # session: the url paths this person may open (None: all)
_WHO = "_team_actor"  # session: (actor, role) of this script run, set by navigation()


def request_actor() -> team.Actor | None:
    """The person of the running request, ``None`` without a login (or outside a request:
    the server's own work, such as a background run's thread)."""
    if get_script_run_ctx(suppress_warning=True) is None:
        return None
    configured, login_user = login_state()
    if identity_mode(configured) == "typed":
        return None
    try:
        headers = st.context.headers
    except Exception:  # noqa: BLE001 - no request headers (bare script run)
        headers = {}
    name, source, message = resolve_annotator(headers, login_user, "",
                                              login_configured=configured)
    return team.Actor(name, source, message)


def _refused(title: str, message: str) -> Any:
    def refused() -> None:
        st.title(title)
        st.error(message)
        st.page_link("app_pages/home.py", label="Home")
    return refused


def navigation(db: Callable[[], sqlite_utils.Database], pages: dict[str, list[Any]],
               team_page: Any) -> tuple[dict[str, list[Any]], team.Actor | None, str | None]:
    """``(pages to show, actor, role)``: every page without a login; with one, the pages the
    role may open, plus each refused page kept at its address as a hidden refusal."""
    actor = request_actor()
    role = None if actor is None else team.role_of(db(), actor.name)
    st.session_state[_WHO] = (actor, role)
    if actor is None:
        st.session_state[_ALLOWED] = None
        return {**pages, "Team": [team_page]}, None, None
    shown: dict[str, list[Any]] = {}
    hidden: list[Any] = []
    allowed: set[str] = set()
    for section, entries in {**pages, "Team": [team_page]}.items():
        for p in entries:
            path = p.url_path
            if team.may_open(role, path):
                allowed.add(path)
                shown.setdefault(section, []).append(p)
            else:
                why = _page_refusal(actor, role, path, p.title)
                hidden.append(st.Page(_refused(p.title, why), title=p.title,
                                      url_path=path, visibility="hidden"))
    st.session_state[_ALLOWED] = allowed
    if hidden:
        shown.setdefault("Start", []).extend(hidden)
    return shown, actor, role


def _page_refusal(actor: team.Actor, role: str | None, path: str, title: str) -> str:
    if not actor.name:
        return f"Refused: {md_escape(actor.reason or 'nobody is logged in.')}"
    if role is None:
        return (f"Refused: {md_escape(actor.name)} has no role in this app yet. An admin adds people on "
                "the Team page.")
    need = team.PAGES.get(path, "team.manage") or ""
    who = ", ".join(r for r in team.ROLES if team.can(r, need))
    return f"Refused: {md_escape(actor.name)} is {role}; the page {title} is for the role {who}."


def may(capability: str) -> bool:
    """May the current person use ``capability`` (always, without a login)?"""
    actor, role = who()
    return actor is None or team.can(role, capability)


def page_allowed(url_path: str) -> bool:
    """May the current person open this page (for links drawn by a page)?"""
    allowed = st.session_state.get(_ALLOWED)
    return allowed is None or url_path in allowed


def who() -> tuple[team.Actor | None, str | None]:
    """``(actor, role)`` found by :func:`navigation` for this script run."""
    return st.session_state.get(_WHO, (None, None))


def mode_line(actor: team.Actor | None, role: str | None) -> str:
    """Home's one line on who is using the app."""
    if actor is None:
        return ("Single-user mode: no login is configured, so whoever reaches this app may do "
                "everything (see *Deploying for a team* in docs/security.md).")
    if not actor.name:
        return md_escape(actor.reason or "Log in to continue.")
    if role is None:
        return (f"Signed in as {md_escape(actor.name)}, who has no role yet: an admin adds people on the "
                "Team page (or `checkeval team add NAME --role ROLE`).")
    return f"Signed in as {md_escape(actor.name)} ({role}: {team.ROLE_TEXT[role]})."
