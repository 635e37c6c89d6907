"""What a judge's tokens cost: USD per million tokens, per judge spec or model name.

Built-in prices cover a few OpenAI models; ``CHECKEVAL_PRICES`` (JSON) adds or replaces
entries. Two forms are read, keyed by a full judge spec (tried first) or a bare model name::

    {"openai:gpt-4o-mini": {"input": 0.15, "output": 0.6},
     "my-model": [0.2, 0.8],
     "openai-compat:https://llm.example.org/v1#m": {"input": 0.2, "output": 0.8,
                                                    "batch_input": 0.1, "batch_output": 0.4}}

**Batch price** (:func:`batch_price_of`): what the same tokens cost through the provider's
Batch API (``checkeval run --batch``). An entry's ``batch_input`` / ``batch_output`` when given;
else, for ``openai:`` judges, the online price × :data:`BATCH_SHARE` (OpenAI bills its Batch
API at 50 % of the online price); else unknown (``None``).

A judge that runs on this machine (``capabilities.local``) costs nothing. A remote judge
without a price has an unknown cost (``None``), never zero.
"""

from __future__ import annotations

import json
import os
from typing import Any

PRICES_ENV = "CHECKEVAL_PRICES"

# USD per million tokens (input, output)
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
}


# the share of the online price a provider's Batch API bills, per judge backend
BATCH_SHARE: dict[str, float] = {"openai": 0.5}


class PriceError(ValueError):
    """``CHECKEVAL_PRICES`` cannot be read; the message names the entry."""


def _entry(name: str, value: Any) -> tuple[float, float]:
    try:
        if isinstance(value, dict):
            pair = (float(value["input"]), float(value["output"]))
        else:
            pair = (float(value[0]), float(value[1]))
    except (KeyError, IndexError, TypeError, ValueError):
        raise PriceError(f"{PRICES_ENV}: entry {name!r} must be {{\"input\": USD, \"output\": "
                         f"USD}} per million tokens (or [input, output]), got {value!r}") from None
    if pair[0] < 0 or pair[1] < 0:
        raise PriceError(f"{PRICES_ENV}: entry {name!r} has a negative price")
    return pair


def _extra() -> dict[str, Any]:
    extra = os.environ.get(PRICES_ENV, "").strip()
    if not extra:
        return {}
    try:
        data = json.loads(extra)
    except ValueError as e:
        raise PriceError(f"{PRICES_ENV} is not JSON: {e}") from None
    if not isinstance(data, dict):
        raise PriceError(f"{PRICES_ENV} must be a JSON object of spec or model → prices")
    return data


def price_table() -> dict[str, tuple[float, float]]:
    """The built-in prices updated with ``CHECKEVAL_PRICES``; raises :class:`PriceError`."""
    table = dict(PRICES)
    table.update({str(k): _entry(str(k), v) for k, v in _extra().items()})
    return table


def batch_price_of(spec: str, model: str, local: bool) -> tuple[float, float] | None:
    """(input, output) USD per million tokens through the provider's Batch API (see the
    module docstring); ``(0, 0)`` for a local judge, ``None`` when unknown. Raises
    :class:`PriceError`."""
    if local:
        return (0.0, 0.0)
    extra = _extra()
    for name in (spec, model):
        value = extra.get(name)
        if isinstance(value, dict) and ("batch_input" in value or "batch_output" in value):
            return _entry(f"{name} (batch)", {"input": value.get("batch_input"),
                                              "output": value.get("batch_output")})
    online = price_of(spec, model, local)
    share = BATCH_SHARE.get(spec.split(":", 1)[0])
    if online is None or share is None:
        return None
    return (online[0] * share, online[1] * share)


def price_of(spec: str, model: str, local: bool) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for a judge; ``(0, 0)`` for a local one,
    ``None`` when a remote judge has no price. Raises :class:`PriceError`."""
    if local:
        return (0.0, 0.0)
    table = price_table()
    return table.get(spec) or table.get(model)
