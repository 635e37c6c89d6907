"""What the frame gives every page: the database connection of the running script.

Not ``st.cache_resource``: that would share one SQLite connection between all sessions, and
``checkeval_core.store.transaction`` joins a transaction already open on its connection — two
visitors' writes would then commit or roll back together. Not one connection per session
either: with ``runner.fastReruns`` (Streamlit's default; ``studio_ui.serve`` turns it off, a
plain ``streamlit run app.py`` does not) a click starts the next script run on a new thread
while the interrupted run is still finishing, so one session had two threads on its
connection for a moment, and a freeze that joined the other run's transaction was not
committed when its message showed. So each script-run thread opens its own connection (a
thread-local: it is closed with the thread), and migrations still run once per session and
database path (``CHECKEVAL_DB`` may change), not on every rerun.
"""

from __future__ import annotations

import threading

import sqlite_utils
import streamlit as st

from checkeval_core.config import default_db_path
from checkeval_core.store import NotADatabase, connect, open_db

_KEY = "_frame_db_migrated"  # the database path this session has opened (and migrated)
_RUN = threading.local()  # .held = (path, connection) of the script run on this thread


def page_db() -> sqlite_utils.Database:
    """The running script's open, migrated database (``$CHECKEVAL_DB``)."""
    path = str(default_db_path())
    held = getattr(_RUN, "held", None)
    if held is None or held[0] != path:
        try:
            if st.session_state.get(_KEY) == path:
                db = sqlite_utils.Database(connect(path))
            else:
                db = open_db(path)
        except NotADatabase as e:
            # A page must not show a traceback for a wrong CHECKEVAL_DB: say which file and
            # how to fix it, and render nothing that would read it.
            st.error(f"{e}. Set CHECKEVAL_DB to a CheckEval database file (or a new path, "
                     "which is created) and restart the app.")
            st.stop()
        st.session_state[_KEY] = path
        held = _RUN.held = (path, db)
    return held[1]
