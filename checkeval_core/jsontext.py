"""Finding the JSON value inside an LLM answer (code fences, prose before or after).

Model output is untrusted text: the span is found with ``str.find``/``str.rfind`` (linear; the
former ``[\\[{].*[\\]}]`` regex was quadratic on text with many ``[`` and no ``]``) and
nesting deeper than :data:`checkeval_core.safeio.LIMITS` ``json_depth`` is refused.
"""

from __future__ import annotations

import json
from typing import Any

from checkeval_core.safeio import json_depth_error


def find_json(text: str | None) -> Any | None:
    """The widest ``[...]``/``{...}`` span of ``text`` parsed as JSON, or None."""
    text = text or ""
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    end = max(text.rfind("]"), text.rfind("}"))
    if not starts or end < min(starts):
        return None
    span = text[min(starts):end + 1]
    if json_depth_error(span) is not None:
        return None
    try:
        return json.loads(span)
    except (json.JSONDecodeError, RecursionError):
        return None
