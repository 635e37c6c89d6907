"""The options a run accepts (its ``params``), in one place for the app, the CLI and the bench.

Prompt layout (``rocketeval``; the other methods keep their fixed layouts):

* ``include_definition`` — add the dimension's definition under the text being judged.
* ``include_reference`` — add the item's reference (e.g. SummEval's human summary) after the
  source; items without a reference are unchanged.

Method options: ``aggregation`` (the run's primary aggregation), ``seal_units`` (SEAL: a
dimension → ``sentence|pair|fact|whole`` override), ``seal_uniform_weights`` (SEAL: skip the
weight request, weigh sub-dimensions equally), ``instance`` (set for instance checklists).
Values given as text on the command line are read as JSON when they parse (``true``, ``3``,
``{"fluency": "sentence"}``), else kept as strings.
"""

from __future__ import annotations

import json
from typing import Any

RUN_OPTIONS: dict[str, type] = {
    "include_definition": bool,
    "include_reference": bool,
    "aggregation": str,
    "seal_units": dict,
    "seal_uniform_weights": bool,
    "instance": bool,
}
# written by the run itself, ignored when comparing the options two runs were asked with
DERIVED = ("aggregation", "seal_weights", "bundle")


def parse_params(pairs: list[str] | None) -> dict[str, Any]:
    """``["include_definition=true", "seal_units={...}"]`` → checked dict; a ValueError names
    the offending ``--param``."""
    out: dict[str, Any] = {}
    for p in pairs or []:
        if "=" not in p:
            raise ValueError(f"--param {p!r}: use KEY=VALUE")
        k, v = (x.strip() for x in p.split("=", 1))
        if k not in RUN_OPTIONS:
            raise ValueError(f"--param {k!r}: unknown option (known: {', '.join(RUN_OPTIONS)})")
        try:
            val = json.loads(v)
        except ValueError:
            val = v
        if not isinstance(val, RUN_OPTIONS[k]):
            raise ValueError(f"--param {k}={v}: expected {RUN_OPTIONS[k].__name__}")
        out[k] = val
    return out


def requested(params: dict[str, Any]) -> dict[str, Any]:
    """The options a user asked for, without the ones a run writes itself."""
    return {k: v for k, v in params.items() if k not in DERIVED}


def options_text(params: str | dict[str, Any] | None) -> str:
    """A run's options as short ``key=value`` text for run lists ("" when none); the values a
    run computes itself (SEAL weights, bundle origin) are left out."""
    if isinstance(params, str):
        params = json.loads(params or "{}")
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted((params or {}).items())
                     if k not in ("seal_weights", "bundle"))
