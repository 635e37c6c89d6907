"""Finding the JSON value inside an LLM answer (code fences, prose before or after)."""

from __future__ import annotations

import json
import re
from typing import Any

_SPAN = re.compile(r"[\[{].*[\]}]", re.DOTALL)


def find_json(text: str | None) -> Any | None:
    """The widest ``[...]``/``{...}`` span of ``text`` parsed as JSON, or None."""
    m = _SPAN.search(text or "")
    if not m:
        return None
    try:
        return json.loads(m.group(0))
    except json.JSONDecodeError:
        return None
