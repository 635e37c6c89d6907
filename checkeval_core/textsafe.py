"""Showing user text safely: escape Markdown/HTML so texts render as text, never as markup."""

from __future__ import annotations

import html
import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


# The renderer's GFM autolinks (remark-gfm) are found in the text *after* Markdown is parsed,
# so a backslash does not stop them: a word joiner (U+2060: not shown, not read aloud, no line
# break) inside "scheme://", "www." and after an e-mail's "@" does.
_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(?i)(?<=:)(?=//)|(?<=\bwww)(?=\\?\.)|(?<=@)")


def _no_autolink(text: str) -> str:
    return _AUTOLINK.sub(_JOINER, text)


def md_escape(text: str) -> str:
    """Escape ``text`` for ``st.markdown``: HTML entities first, then Markdown punctuation, and
    bare URLs and e-mail addresses kept from becoming links (see ``_JOINER``)."""
    return _no_autolink(_MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False)))


# what makes Markdown load or link something: "[" (links, images, link definitions) and "<"
# (angle autolinks); the bare autolinks as in md_escape
_MD_ACTIVE = re.compile(r"([\[\]<])")


def md_inert(text: str) -> str:
    """``text`` with only what would make Markdown load or link anything escaped — for a label
    that is read aloud (its accessible name is the raw string) but still rendered as Markdown
    (a collapsed widget label: hidden, yet an image in it would load). Ordinary text stays as
    typed (no ``built\\-in``); emphasis may render, harmlessly. Elsewhere use
    :func:`md_escape`."""
    return _no_autolink(_MD_ACTIVE.sub(r"\\\1", str(text)))


def truncate(text: str, limit: int = 300) -> str:
    """Shorten long texts for tables (full text stays available elsewhere)."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
