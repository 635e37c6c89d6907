"""Undefined numbers and how they print: one rule for every view.

A statistic that cannot be computed is ``NaN`` inside the library (so numpy arithmetic keeps
working) and ``None`` once it leaves for JSON or a table cell; either way it travels with the
reason it is missing. :class:`Figure` is a number as the app shows it — value, interval, the
reasons either is missing, and its items / groups / systems — and its methods are the one
printer of a figure (a guard test refuses a hand-formatted interval anywhere else).
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


def pct(x: Any, digits: int = 0, signed: bool = False, dash: str = "—") -> str:
    """A share as a percentage (``42%``), or ``dash`` when it is undefined."""
    return _number(_num(x), digits, signed, True, dash)


def fmt_ci(ci: Any, digits: int = 2, signed: bool = False, reason: str | None = None) -> str:
    """``[lo, hi]``, or the reason there is no interval: :meth:`Figure.ci_text`."""
    return Figure(NAN, _pair(ci), ci_reason=reason).ci_text(digits, signed)


def _num(x: Any) -> float:
    return NAN if isnan(x) else float(x)


def _pair(ci: Any) -> tuple[float, float] | None:
    """An interval as two floats, or None when either end is missing."""
    if ci is None or len(ci) != 2 or isnan(ci[0]) or isnan(ci[1]):
        return None
    return (float(ci[0]), float(ci[1]))


def ci_list(ci: Any) -> list[float] | None:
    """An interval for JSON: ``[lo, hi]``, or None when either end is missing."""
    pair = _pair(ci)
    return None if pair is None else list(pair)


def _count(x: Any) -> int | None:
    return None if x is None else int(x)


@dataclass(frozen=True)
class Figure:
    """One number as the app shows it: its value, its interval, why either is missing, and
    what it rests on (items, groups, systems).

    The one shape every figure takes between the floor and a view, and the one printer
    (:meth:`text`, :meth:`ci_text`, :meth:`value_text`): a missing value prints ``—``, a
    missing interval prints the reason it is missing (``no interval`` when none was given),
    so no view invents its own way of saying either. Dictionaries in JSON keep their own
    field names; :meth:`from_dict` reads them and :meth:`to_dict` writes them.
    """

    value: float = NAN
    ci: tuple[float, float] | None = None
    reason: str | None = None        # why there is no value
    ci_reason: str | None = None     # why there is no interval
    n_items: int | None = None
    n_groups: int | None = None
    n_systems: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", _num(self.value))
        object.__setattr__(self, "ci", _pair(self.ci))
        for k in ("n_items", "n_groups", "n_systems"):
            object.__setattr__(self, k, _count(getattr(self, k)))

    # -- making one -------------------------------------------------------------------------
    @classmethod
    def undefined(cls, reason: str, **counts: int | None) -> Figure:
        """A figure with no value, and why."""
        return cls(NAN, None, reason=reason, **counts)

    @classmethod
    def from_dict(cls, d: dict[str, Any], value_key: str = "value", ci_key: str = "ci",
                  ci_reason_key: str = "ci_reason") -> Figure:
        """A figure from one of the app's JSON shapes (``value`` or ``delta``, ``ci``,
        ``reason``, ``ci_reason``, ``n_items`` / ``n_groups`` / ``n_systems``); a shape with
        only ``reason`` (no ``ci_reason``) gives it as the interval's reason too."""
        value = d.get(value_key)
        reason = d.get("reason")
        ci_reason = d.get(ci_reason_key)
        if ci_reason is None and reason and not isnan(value):
            ci_reason = reason
        return cls(_num(value), d.get(ci_key), reason=reason if isnan(value) else None,
                   ci_reason=ci_reason, n_items=d.get("n_items"),
                   n_groups=d.get("n_groups"), n_systems=d.get("n_systems"))

    # -- reading it -------------------------------------------------------------------------
    @property
    def defined(self) -> bool:
        return not isnan(self.value)

    @property
    def weak(self) -> bool:
        """No interval: the figure rests on too little (drawn hollow, raises no flag)."""
        return self.ci is None

    @property
    def why_no_ci(self) -> str:
        """Why there is no interval (the value's own reason when it has none)."""
        return self.ci_reason or (self.reason if not self.defined else None) or "no interval"

    def __float__(self) -> float:
        return self.value

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: NaN as ``null``, the interval as ``[lo, hi]`` (``[null, null]``
        without one)."""
        return {"value": nan_to_none(self.value),
                "ci": list(self.ci) if self.ci else [None, None],
                "reason": None if self.defined else self.reason,
                "ci_reason": None if self.ci else self.why_no_ci,
                "n_items": self.n_items, "n_groups": self.n_groups,
                "n_systems": self.n_systems}

    def brief(self) -> dict[str, Any]:
        """The short shape older outputs keep: ``{"value", "ci", "reason"}`` with NaN for a
        missing number and one reason for a missing value or interval."""
        return {"value": self.value, "ci": list(self.ci or (NAN, NAN)),
                "reason": self.reason if not self.defined else self.ci_reason}

    # -- printing it (the one printer) ------------------------------------------------------
    def value_text(self, digits: int = 3, signed: bool = False, percent: bool = False,
                   dash: str = "—") -> str:
        return _number(self.value, digits, signed, percent, dash)

    def ci_text(self, digits: int = 2, signed: bool = False, percent: bool = False,
                label: str = "") -> str:
        """``[lo, hi]`` (after ``label``, e.g. ``"95% CI "``), or why there is none."""
        if self.ci is None:
            return self.why_no_ci
        lo, hi = (_number(x, digits, signed, percent, "—") for x in self.ci)
        return f"{label}[{lo}, {hi}]"

    def text(self, digits: int = 3, ci_digits: int | None = None, signed: bool = False,
             percent: bool = False, label: str = "") -> str:
        """``0.412 [0.300, 0.550]`` (``text(3, ci_digits=2)``: ``0.412 [0.30, 0.55]``);
        ``0.412 (no interval: …)`` without an interval; ``— (why)`` without a value."""
        if not self.defined:
            return f"— ({self.reason})" if self.reason else "—"
        v = self.value_text(digits, signed, percent)
        ci_digits = digits if ci_digits is None else ci_digits
        if self.ci is None:
            return f"{v} ({self.why_no_ci})"
        return f"{v} {self.ci_text(ci_digits, signed, percent, label)}"

    def support_text(self) -> str:
        """``n = 48 items, 8 groups, 6 systems`` for the counts it has."""
        parts = [f"{n} {w}" for n, w in ((self.n_items, "items"), (self.n_groups, "groups"),
                                         (self.n_systems, "systems")) if n is not None]
        return ("n = " + ", ".join(parts)) if parts else ""


def _number(x: float, digits: int, signed: bool, percent: bool, dash: str) -> str:
    if isnan(x):
        return dash
    if percent:
        return f"{x:+.{digits}%}" if signed else f"{x:.{digits}%}"
    return fmt(x, digits, signed, dash)

