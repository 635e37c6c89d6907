"""An escalating run's options: which ones there are (``OPTIONS``), the CLI's and the Run
page's escalation fields as run options (:func:`escalation_params`), and the check that refuses
an escalation that cannot run before anything is asked (:func:`check_options`). The pass
itself is :mod:`checkeval_core.runs.escalation.cascade`."""

from __future__ import annotations

import math
from typing import Any

import sqlite_utils

from checkeval_core.judges.registry import parse_spec
from checkeval_core.people import answer_labels, people_pair_labels
from checkeval_core.runs.escalation.by_item import check_escalate_by
from checkeval_core.runs.registry import method as method_entry
from checkeval_core.stats import escalation as E
from checkeval_core.store import task_id
from checkeval_core.task_split import members

OPTIONS = ("escalate_to", "target_agreement", "margin", "delta", "abstain",
           "calibrate_judges", "escalate_by")


def enabled(params: dict[str, Any]) -> bool:
    return bool(params.get("escalate_to"))


def check_options(db: sqlite_utils.Database, task: str, judge_spec: str,
                  params: dict[str, Any], method: str | None = None) -> None:
    """Refuse an escalation that cannot run, before anything is asked (ValueError naming the
    flag): a method without Yes/No answers, B's spec, exactly one of target/margin, their
    ranges (δ also with a margin: it is stored), a split and a labelled dev group for a fitted
    threshold (two with ``calibrate_judges``: half calibrate A, the others fit the
    threshold)."""
    if not enabled(params):
        stray = [k for k in OPTIONS[1:] if params.get(k) not in (None, False)]
        if stray:
            raise ValueError(f"--{stray[0].replace('_', '-')}: needs --escalate-to JUDGE")
        return
    if method is not None and not method_entry(method).binary:
        raise ValueError(f"--escalate-to: method {method} gives no Yes/No answers, so an answer "
                         "has no confidence to escalate on; use a Yes/No method (e.g. "
                         "rocketeval)")
    check_escalate_by(params.get("escalate_by"))  # by answer or by item (by_item.py)
    b = parse_spec(str(params["escalate_to"])).spec
    if b == parse_spec(judge_spec).spec:
        raise ValueError(f"--escalate-to {b}: the second judge must differ from --judge")
    target, margin = params.get("target_agreement"), params.get("margin")
    if params.get("delta") is not None:  # stored with every escalation: never NaN or < 0
        E.check_delta(params["delta"])
    if (target is None) == (margin is None):
        raise ValueError("--escalate-to: give one of --target-agreement (fitted on dev groups) "
                         "or --margin (a fixed confidence threshold)")
    if target is not None:
        E.check_target(target)
        E.check_delta(params.get("delta", E.DEFAULT_DELTA))
        if members(db, task) is None:
            raise ValueError(f"--target-agreement: task {task!r} has no dev / held-out split "
                             f"to fit the threshold on; make one with `checkeval split --task "
                             f"{task}` (or on the Versions page), or give --margin")
    elif isinstance(margin, bool) or not isinstance(margin, (int, float)) or \
            not math.isfinite(margin) or margin < 0:
        raise ValueError(f"--margin {margin}: give a confidence ≥ 0 (|p(Yes) − 0.5| ≤ 0.5 for "
                         "answers, a score gap for pairs), e.g. 0.2")
    if params.get("calibrate_judges"):
        if members(db, task) is None:
            raise ValueError(f"--calibrate-judges: task {task!r} has no dev / held-out split to "
                             f"fit the calibration on; make one with `checkeval split --task "
                             f"{task}` (or on the Versions page)")
        if db.execute("SELECT 1 FROM preference p JOIN task t ON t.id = p.task_id WHERE "
                      "t.name = ? LIMIT 1", [task]).fetchone():
            raise ValueError("--calibrate-judges: this task's people voted on pairs, which "
                             "label pairs, not answers; a judge's p(Yes) is calibrated on "
                             "answer labels (annotations or expert scores)")
        n = len(_labelled_dev_groups(db, task)) if target is not None else 2
        if n < 2:
            raise ValueError(f"--calibrate-judges with --target-agreement: task {task!r} has "
                             f"{n} dev group{'' if n == 1 else 's'} with people's labels; the "
                             "first judge's confidence is calibrated on half of them and the "
                             "threshold fitted on the other half, so at least 2 are needed — "
                             "label answers of another dev group, or give --margin")
    if target is not None and not _labelled_dev_groups(db, task):
        raise ValueError(f"--target-agreement: no dev group of task {task!r} has people's "
                         "labels (checklist annotations, expert scores or pairwise votes) to "
                         "fit the threshold on; collect labels first, or give --margin")


def _labelled_dev_groups(db: sqlite_utils.Database, task: str) -> set[str]:
    """The task's dev groups where people labelled something a threshold can be fitted on:
    checklist answers decided by people (the one reader: a tie is no label), expert scores
    off their group's median, or pairwise votes with a majority."""
    split = members(db, task)
    if split is None:
        return set()
    dev = {g for g, part in split[0].items() if part == "dev"}
    group_of = {int(pk): str(g) for pk, g in db.execute(
        "SELECT id, group_id FROM item WHERE task_id = ?", [task_id(db, task)])
        if str(g) in dev}
    by_q, by_dim, _ = answer_labels(db, task, group_of)
    groups = {group_of[pk] for pk, _ in (*by_q, *by_dim)}
    groups |= {str(g) for _, g in people_pair_labels(db, task, group_of).values()}
    return groups & dev




def escalation_params(escalate_to: str | None, target_agreement: float | None = None,
                      margin: float | None = None, delta: float = E.DEFAULT_DELTA,
                      abstain: bool = False, calibrate_judges: bool = False,
                      escalate_by: str | None = None) -> dict[str, Any]:
    """The run options of the CLI's / Run page's escalation fields (B's spec canonical);
    a ValueError for a threshold given without a second judge."""
    if not (escalate_to or "").strip():
        if target_agreement is not None or margin is not None or abstain or \
                calibrate_judges or escalate_by is not None:
            raise ValueError("--target-agreement / --margin / --abstain / --calibrate-judges / "
                             "--escalate-by: need --escalate-to JUDGE (the second judge)")
        return {}
    try:
        b = parse_spec(escalate_to).spec
    except ValueError as e:
        raise ValueError(f"--escalate-to: {e}") from None
    out: dict[str, Any] = {"escalate_to": b, "delta": float(delta)}
    if target_agreement is not None:
        out["target_agreement"] = float(target_agreement)
    if margin is not None:
        out["margin"] = float(margin)
    if abstain:
        out["abstain"] = True
    if calibrate_judges:
        out["calibrate_judges"] = True
    if escalate_by is not None and check_escalate_by(escalate_by) == "item":
        out["escalate_by"] = "item"
    return out
