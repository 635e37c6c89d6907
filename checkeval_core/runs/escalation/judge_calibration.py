"""Each judge's p(Yes) fitted to people's labels on an escalating run's dev answers (Platt
scaling, ``--calibrate-judges``): A's confidence before anything is escalated, and both judges'
p(Yes) before an item's score mixes them (:mod:`checkeval_core.runs.escalation.cascade`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.people import answer_labels
from checkeval_core.runs.escalation.units import answer_rows, people_label, unit_parts
from checkeval_core.stats import escalation as E
from checkeval_core.store import task_id


def _dev_answers(db: sqlite_utils.Database, run: dict[str, Any]
                 ) -> tuple[list[tuple[dict[str, Any], str]], str]:
    """The run's answer rows on dev groups that people labelled, each with its label, and
    where the labels come from."""
    rows_ = answer_rows(db, run["id"], str(run["params"].get("escalate_to") or ""))
    by_q, by_dim, source = answer_labels(db, task_id(db, run["task"]), list(run["item_ids"]))
    part = unit_parts(db, run, [r["group"] for r in rows_])
    return [(r, label) for r, where in zip(rows_, part)
            if where == "dev" and (label := people_label(by_q, by_dim, r)) is not None], source


def confidence_calibration(db: sqlite_utils.Database, run: dict[str, Any],
                           fitted_threshold: bool) -> dict[str, Any]:
    """A's Platt fit for its confidence (``E.confidence``), on the labelled dev answers of A's
    pass: on every dev group with a fixed margin; with a fitted threshold on every other dev
    group (sorted by name), the threshold then fitted on the others, so the fixed-sequence
    test never runs on the answers its confidence was fitted to. ``{"fit", "groups",
    "label_source"}`` (``groups``: the dev groups fitted on)."""
    dev, source = _dev_answers(db, run)
    names = sorted({r["group"] for r, _ in dev})
    use = set(names[0::2] if fitted_threshold else names)
    got = [(float(r["a_p_yes"]), label == "yes") for r, label in dev
           if r["group"] in use and r["a_p_yes"] is not None]
    return {"fit": E.platt_fit([p for p, _ in got], [y for _, y in got]),
            "groups": sorted(use), "label_source": source}


def judge_calibration(db: sqlite_utils.Database, run: dict[str, Any]) -> dict[str, Any]:
    """Each judge's Platt fit on the labelled dev answers it gave: A on every dev answer (its
    own p(Yes), kept beside B's where B answered), B on the dev answers escalated to it.
    ``{"a": fit, "b": fit, "label_source"}`` (a fit may be a reason, see ``platt_fit``)."""
    dev, source = _dev_answers(db, run)
    pa, ya, pb, yb = [], [], [], []
    for r, label in dev:
        if r["a_p_yes"] is not None:
            pa.append(float(r["a_p_yes"]))
            ya.append(label == "yes")
        if r["by_b"] and r["b_p_yes"] is not None:
            pb.append(float(r["b_p_yes"]))
            yb.append(label == "yes")
    return {"a": E.platt_fit(pa, ya), "b": E.platt_fit(pb, yb), "label_source": source}


def calibrated_p(params: dict[str, Any], judges: Any, p_yes: Any) -> np.ndarray:
    """The p(Yes) a run's scores use: each answer's through its judge's calibration when the
    run fitted one (``judges``: each answer's judge spec), else unchanged."""
    cal = (params.get("escalation") or {}).get("calibration")
    p = np.asarray(p_yes, dtype=float)
    if not cal:
        return p
    by_b = np.asarray(judges, dtype=object) == str(params.get("escalate_to") or "")
    return np.where(by_b, E.platt_apply(cal.get("b"), p), E.platt_apply(cal.get("a"), p))
