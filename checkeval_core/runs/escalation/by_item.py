"""Escalation **by item**: an item's questions go to the second judge together.

Escalating by answer (the default, ``escalate_by=answer``) sends B single questions scattered
over nearly every item, so B re-reads nearly every item's text — the prefix that is most of a
binary question's cost — although it is asked only some of the answers. With
``escalate_by=item`` the unit of the decision stays the answer (agreement, coverage and the
fitted threshold are still counted per answer) but A's confidence in an answer is A's
confidence in its **item's score**: the mean over the item's answers of A's confidence
``|p(Yes) − 0.5|`` (through A's calibration when the run has one). Every answer of an item
below the threshold goes to B, in one request list per item, so B reads each escalated item
once and no other item at all.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

import numpy as np

from checkeval_core.runs.escalation.units import Units

ESCALATE_BY = ("answer", "item")


def check_escalate_by(value: Any) -> str:
    """``answer`` (default) or ``item``; a ValueError naming the option otherwise."""
    v = "answer" if value is None else str(value).strip().lower()
    if v not in ESCALATE_BY:
        raise ValueError(f"--escalate-by {value!r}: choose one of {', '.join(ESCALATE_BY)}")
    return v


def item_mean_confidence(conf: Any, items: Any) -> np.ndarray:
    """Each answer's confidence replaced by the mean over its item's answers (``items``: the
    item of each answer); an item with no confidence at all gets 0, so it is escalated. The
    one rule of the run (:func:`by_item`) and of the cost expected before it."""
    conf = np.asarray(conf, float)
    per_item: dict[Any, list[int]] = defaultdict(list)
    for i, item in enumerate(items):
        per_item[item].append(i)
    out = conf.copy()
    for idx in per_item.values():
        vals = conf[idx]
        vals = vals[~np.isnan(vals)]
        out[idx] = float(vals.mean()) if len(vals) else 0.0  # no confidence: escalate
    return out


def by_item(units: Units, params: dict[str, Any]) -> Units:
    """``units`` with A's confidence replaced by its item's mean when the run escalates by
    item (answer units only: a pair's confidence already spans its two items); else as is."""
    if check_escalate_by(params.get("escalate_by")) != "item" or units.kind != "answer":
        return units
    out = item_mean_confidence(units.conf_a, [key[0] for key in units.keys])
    return replace(units, conf_a=out.tolist())


def escalated_items(units: Units, threshold: float) -> int:
    """How many items have an answer below ``threshold`` (the items B reads)."""
    conf = np.asarray(units.conf_a, float)
    return len({units.keys[i][0] for i in np.flatnonzero(conf < threshold)}) \
        if units.kind == "answer" else 0
