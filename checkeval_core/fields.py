"""One rule per kind of field, for every importer, the CLI and the pages.

A question imported from a CheckEval YAML file, a project JSON checklist or a per-query JSONL
file is the same kind of thing and gets the same length limit; an annotator named in an
annotation file, in a preference file or typed on the Annotate page gets the same name rule;
a task named by ``import --task``, ``preferences import --task`` or the Data page likewise.
The limits live here (and the byte/row limits in :data:`checkeval_core.safeio.LIMITS`), so an
importer cannot drift from the others by copying a check and changing it.

Each ``check_*`` returns the cleaned value or raises :class:`~checkeval_core.safeio.InputError`
whose message starts with ``where`` (the file, line and field, or the CLI option).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from checkeval_core.identity import MAX_NAME_LEN, clean_name
from checkeval_core.safeio import SURROGATE_MESSAGE, InputError, has_surrogate

#: a task, dimension, sub-dimension or person's name (the app's name rule, identity.py)
NAME_CHARS = MAX_NAME_LEN
#: a checklist question, a dimension's definition, a sub-dimension's description
QUESTION_CHARS = 5_000
#: one field of an item: its input, output, reference, context… (2 million characters)
TEXT_CHARS = 2_000_000


def check_text(value: Any, where: str, limit: int = TEXT_CHARS, *,
               required: bool = False) -> str:
    """``value`` as text (None → ""): refused when it is not text, longer than ``limit``
    characters, holds a lone surrogate, or (``required``) is blank."""
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InputError(f"{where}: expected text, got {type(value).__name__}")
    if len(value) > limit:
        raise InputError(f"{where}: {len(value):,} characters is more than the {limit:,} "
                         "allowed")
    if has_surrogate(value):
        raise InputError(f"{where} {SURROGATE_MESSAGE}")
    if required and not value.strip():
        raise InputError(f"{where}: required value is missing")
    return value


def check_question(value: Any, where: str) -> str:
    """A checklist question: non-empty text of at most :data:`QUESTION_CHARS` characters."""
    return check_text(value, where, QUESTION_CHARS, required=True)


def check_name(value: Any, where: str, what: str = "name") -> str:
    """A name as the app accepts it (:func:`checkeval_core.identity.clean_name`): trimmed,
    1 to :data:`NAME_CHARS` characters, no control or format characters (newlines, escape
    sequences, lone surrogates). The message says which rule was broken."""
    if isinstance(value, str) and clean_name(value) is not None:
        return value.strip()
    if not isinstance(value, str):
        raise InputError(f"{where}: expected a {what} as text, got {type(value).__name__}")
    name = value.strip()
    if not name:
        raise InputError(f"{where}: the {what} is empty")
    if len(name) > NAME_CHARS:
        raise InputError(f"{where}: a {what} of {len(name):,} characters is more than the "
                         f"{NAME_CHARS} allowed")
    bad = next(ch for ch in name if unicodedata.category(ch).startswith("C"))
    raise InputError(f"{where}: the {what} holds the control character U+{ord(bad):04X} "
                     f"({unicodedata.name(bad, 'unnamed')}); names are one line of "
                     "printable text")


MAX_SEED = 2**32 - 1  # numpy's generators and the split hash take seeds in [0, 2**32)


def check_seed(n: int, where: str = "--seed") -> int:
    """A whole number from 0 to :data:`MAX_SEED` (negative seeds have no meaning here: the
    split stores -1 for a split named group by group)."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_SEED:
        raise ValueError(f"{where} {str(n)[:30]}: give a whole number from 0 to {MAX_SEED:,}")
    return n
