"""What the frame gives every page: the database connection, opened once per browser session.

Not ``st.cache_resource``: that would share one SQLite connection between all sessions, and
``checkeval_core.store.transaction`` joins a transaction already open on its connection — two
visitors' writes would then commit or roll back together. One connection per session (kept
in its session state, keyed by the database path so a changed ``CHECKEVAL_DB`` opens the new
file) keeps each visitor's transactions apart, and migrations run once per session instead of
on every rerun.
"""

from __future__ import annotations

import sqlite_utils
import streamlit as st

from checkeval_core.config import default_db_path
from checkeval_core.store import NotADatabase, open_db

_KEY = "_frame_db"


def page_db() -> sqlite_utils.Database:
    """This session's open, migrated database (``$CHECKEVAL_DB``)."""
    path = str(default_db_path())
    held = st.session_state.get(_KEY)
    if held is None or held[0] != path:
        try:
            held = (path, open_db(path))
        except NotADatabase as e:
            # A page must not show a traceback for a wrong CHECKEVAL_DB: say which file and
            # how to fix it, and render nothing that would read it.
            st.error(f"{e}. Set CHECKEVAL_DB to a CheckEval database file (or a new path, "
                     "which is created) and restart the app.")
            st.stop()
        st.session_state[_KEY] = held
    return held[1]
