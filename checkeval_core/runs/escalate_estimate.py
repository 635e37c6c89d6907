"""What an escalating run will ask of each judge before it starts: the coverage to expect and
the second judge's share of the cost (:mod:`checkeval_core.runs.escalate`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.runs.escalate import OPTIONS
from checkeval_core.runs.estimate import Estimate, estimate_batch
from checkeval_core.stats import escalation as E
from checkeval_core.store import loads, rows


def estimate_calls(n_requests: int, coverage: float | None) -> dict[str, Any]:
    """Judge calls of an escalating run before it starts: A answers all ``n_requests``, B the
    expected uncovered share (``coverage`` unknown: B's count is an upper bound, all of them).
    A small count of its own, to be replaced by the run estimate when it lands."""
    cov = 0.0 if coverage is None else float(coverage)
    return {"a_calls": int(n_requests), "b_calls": int(round(n_requests * (1 - cov))),
            "coverage": coverage, "b_calls_upper_bound": coverage is None}


def expected_coverage(db: sqlite_utils.Database, task: str, judge_a: str,
                      margin: float | None, calibrate: bool = False) -> tuple[float | None, str]:
    """The coverage to expect for a new escalating run by ``judge_a`` on ``task``: the one
    achieved by its latest escalating run, else (with a fixed ``margin``) the share of the
    judge's stored answers on the task at or above it — with ``calibrate``, their confidence
    read through the latest stored calibration of the judge's confidence on the task (the
    run's own fit is only made after A's pass); ``(None, reason)`` without either."""
    found = rows(db, "SELECT r.id, r.params FROM run r JOIN task t ON t.id = r.task_id WHERE "
                     "t.name = ? AND r.judge_spec = ? AND r.status = 'completed' ORDER BY "
                     "r.id DESC", [task, judge_a])
    fit, fit_note = None, ""
    if calibrate:
        for r in found:
            cc = (loads(r["params"], {}).get("escalation") or {}).get("confidence_calibration")
            if cc and "slope" in cc.get("fit", {}):
                fit, fit_note = cc["fit"], f", read through run {r['id']}'s calibration"
                break
        else:
            fit_note = " (raw p(Yes): no earlier run stored a calibration to read it through)"
    for r in found:
        esc = loads(r["params"], {}).get("escalation")
        if esc and esc.get("coverage") is not None and margin is None:
            return float(esc["coverage"]), f"achieved by escalating run {r['id']}"
        if margin is not None:
            got = db.execute("SELECT COALESCE(a_p_yes, p_yes), COALESCE(a_verdict, verdict) "
                             "FROM answer WHERE run_id = ?", [r["id"]]).fetchall()
            if got:
                share = float(np.mean([E.confidence(p, v, fit) >= margin for p, v in got]))
                # said of what is sent on: the number it stands beside is the second
                # judge's (the answers below the margin), not the share kept
                return share, (f"as many as run {r['id']}'s answers with confidence below "
                               f"{margin:g}{fit_note}")
    if found:  # runs of the judge, none escalating: a fitted threshold's coverage is unknown
        return None, "no earlier escalating run of this judge on the task"
    return None, "no earlier run of this judge on the task"


def second_judge_estimate(db: sqlite_utils.Database, task: str, judges: list[str],
                          methods: list[str], checklist: str | int | None, limit: int | None,
                          params: dict[str, Any]) -> Any:
    """What the second judge of escalating runs will cost before they start: B's estimate of
    the same requests (its own cache, rates and prices), times the share each first judge is
    expected to leave it (:func:`expected_coverage`; unknown: all of it, an upper bound)."""
    b = str(params["escalate_to"])
    base = {k: v for k, v in params.items() if k not in OPTIONS}
    full = estimate_batch(db, task, [b], methods, checklist=checklist, limit=limit,
                          params=base)
    total = Estimate()
    for j in judges:
        cov, why = expected_coverage(db, task, j, params.get("margin"),
                                     bool(params.get("calibrate_judges")))
        share = 1.0 - (cov or 0.0)
        total += Estimate(round(full.calls * share), round(full.cached * share),
                          round(full.prompt_tokens * share),
                          round(full.completion_tokens * share),
                          None if full.seconds is None else full.seconds * share,
                          None if full.usd is None else full.usd * share, [*full.notes,
                                           f"{b} asked {share:.0%} of {j}'s requests "
                                           + (f"({why})" if cov is not None else
                                              f"at most ({why}: all of them)")])
    return total
