"""Undefined numbers and how they print: one rule for every view.

A statistic that cannot be computed is ``NaN`` inside the library (so numpy arithmetic keeps
working) and ``None`` once it leaves for JSON or a table cell; either way it travels with the
reason it is missing. :class:`Undefined` is that pair as a value, for the places that return
one figure rather than a dict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

NAN = float("nan")


def isnan(x: Any) -> bool:
    """True for ``None`` and for a float NaN (numpy floats included); False for anything else."""
    if x is None:
        return True
    try:
        return isinstance(x, (float, int)) and not isinstance(x, bool) and math.isnan(x)
    except TypeError:
        return False


def nan_to_none(x: Any) -> Any:
    """NaN → None (a JSON ``null``, a blank cell); any other value passes through, a numpy
    float as a Python float."""
    if isnan(x):
        return None
    if isinstance(x, float):
        return float(x)
    return x


def fmt(x: Any, digits: int = 3, signed: bool = False, dash: str = "—") -> str:
    """A number with ``digits`` decimals (``+`` sign with ``signed``), or ``dash`` when it is
    undefined (None / NaN)."""
    if isnan(x):
        return dash
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def fmt_ci(ci: Any, digits: int = 2, signed: bool = False, reason: str | None = None) -> str:
    """``[lo, hi]``, or the reason there is no interval (``"no interval"`` without one)."""
    if not ci or isnan(ci[0]) or isnan(ci[1]):
        return reason or "no interval"
    return f"[{fmt(ci[0], digits, signed)}, {fmt(ci[1], digits, signed)}]"


@dataclass(frozen=True)
class Undefined:
    """A figure that has no value, and why. Falsy, and NaN when used as a float, so code that
    does arithmetic on it propagates "undefined" rather than a made-up number."""

    reason: str

    def __bool__(self) -> bool:
        return False

    def __float__(self) -> float:
        return NAN

    def __str__(self) -> str:
        return self.reason
