"""Where a remote judge's API key comes from — one resolver for every entry point.

``checkeval judge test``, ``checkeval run``, the Run page's background worker and the Judges
page's *Test* button all build their judge with ``registry.get_judge(spec, db=db)``, which asks
:func:`resolve_key`. The order is:

1. the environment variable named by ``key_env`` (given explicitly, else the ``key_env`` of
   the saved judge with this spec — same params first — in the ``judge`` table);
2. the backend's default variables, declared once with the backend (``spec.BACKENDS``):
   ``CHECKEVAL_OPENAI_KEY`` then ``OPENAI_API_KEY`` for ``openai:``,
   ``CHECKEVAL_OPENAI_COMPAT_KEY`` for ``openai-compat:``;
3. nothing (``None``): an ``openai-compat`` server then gets a placeholder key.

Each variable is looked up in the process environment, then in the optional ``secrets``
mapping the caller passes (the app passes ``st.secrets``; the core never imports Streamlit).
Only the *name* of a variable is ever stored; the key itself never reaches the database, run
params, exports, logs or error messages.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from checkeval_core.judges.spec import backend_of, parse_spec

# what an environment-variable NAME looks like; anything else (``sk-…``, spaces, lower case)
# is refused as a key source, so a pasted key is never stored
KEY_ENV_RE = re.compile(r"[A-Z_][A-Z0-9_]*\Z")


def default_key_envs(spec: str) -> tuple[str, ...]:
    """The default key variables the backend of ``spec`` declares (empty: it sends no key)."""
    backend = backend_of(spec)
    return backend.key_envs if backend is not None else ()


def check_key_env(name: str) -> str:
    """``name`` if it is an environment-variable name, else a ValueError that never echoes it
    (it may be a pasted key)."""
    name = (name or "").strip()
    if name and not KEY_ENV_RE.match(name):
        raise ValueError("key source: give the NAME of an environment variable (capital letters, "
                         "digits and _, e.g. OPENAI_API_KEY), never the key itself; "
                         "nothing was saved")
    return name


def needs_key(spec: str) -> bool:
    """True for the backends that send an API key."""
    return bool(default_key_envs(spec))


def saved_key_env(db: Any, spec: str, params: Mapping[str, Any] | None = None) -> str:
    """The ``key_env`` of the saved judge with this spec ("" when none): the one saved with the
    same params first, else the most recent one that names a variable."""
    if db is None:
        return ""
    try:
        spec = parse_spec(spec).spec
    except ValueError:
        return ""
    p = json.dumps(dict(params or {}), sort_keys=True)
    row = db.execute("SELECT key_env FROM judge WHERE spec = ? AND key_env != '' "
                     "ORDER BY (params = ?) DESC, id DESC LIMIT 1", [spec, p]).fetchone()
    return row[0] if row else ""


def _lookup(name: str, secrets: Mapping[str, Any] | None) -> str | None:
    value = os.environ.get(name)
    if not value and secrets is not None:
        try:
            value = secrets.get(name)
        except Exception:  # noqa: BLE001 - e.g. Streamlit without a secrets file
            value = None
    return str(value) if value else None


def resolve_key(db: Any, spec: str, key_env: str | None = None,
                secrets: Mapping[str, Any] | None = None,
                params: Mapping[str, Any] | None = None) -> str | None:
    """The API key for ``spec`` (see the module docstring for the order), or ``None``."""
    if not needs_key(spec):
        return None
    names = [key_env or saved_key_env(db, spec, params)]
    names += list(default_key_envs(spec))
    for name in names:
        if name and KEY_ENV_RE.match(name):
            value = _lookup(name, secrets)
            if value:
                return value
    return None
