"""Showing user text safely: escape Markdown/HTML so texts render as text, never as markup."""

from __future__ import annotations

import html
import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md_escape(text: str) -> str:
    """Escape ``text`` for ``st.markdown``: HTML entities first, then Markdown punctuation."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


def truncate(text: str, limit: int = 300) -> str:
    """Shorten long texts for tables (full text stays available elsewhere)."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
