"""A clean message instead of a traceback when handling an upload fails unexpectedly.

Importers refuse bad files with their own message (file, line, field). Anything else that
goes wrong while a visitor's file is handled must not reach the page as a Python traceback:
its text may hold server paths and code. The full traceback goes to the server log; the page
says what happened, that nothing was imported, and the error's type only.
(``client.showErrorDetails`` in ``.streamlit/config.toml`` covers errors outside these
guards.)
"""

from __future__ import annotations

import logging

import streamlit as st

log = logging.getLogger("checkeval.upload")


def upload_failed(error: BaseException, what: str = "the file") -> None:
    """Log ``error`` with its traceback and show a message without paths or code."""
    log.error("unexpected error while handling an upload", exc_info=error)
    st.error(f"Could not handle {what} ({type(error).__name__}); nothing was imported. "
             "The details are in the server's log.")
