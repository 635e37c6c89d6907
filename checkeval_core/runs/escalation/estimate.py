"""What an escalating run will ask of each judge before it starts: the coverage to expect and
the second judge's share of the cost (:mod:`checkeval_core.runs.escalation.cascade`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.runs.escalation.by_item import check_escalate_by, item_mean_confidence
from checkeval_core.runs.escalation.options import OPTIONS, escalation_params
from checkeval_core.runs.estimate import (
    Estimate,
    cost_line,
    estimate_batch,
    estimate_run,
    judge_to_look_at,
)
from checkeval_core.stats import escalation as E
from checkeval_core.stats.values import pct
from checkeval_core.store import NotFound, loads, rows


def estimate_calls(n_requests: int, coverage: float | None) -> dict[str, Any]:
    """Judge calls of an escalating run before it starts: A answers all ``n_requests``, B the
    expected uncovered share (``coverage`` unknown: B's count is an upper bound, all of them).
    A small count of its own, to be replaced by the run estimate when it lands."""
    cov = 0.0 if coverage is None else float(coverage)
    return {"a_calls": int(n_requests), "b_calls": int(round(n_requests * (1 - cov))),
            "coverage": coverage, "b_calls_upper_bound": coverage is None}


def expected_coverage(db: sqlite_utils.Database, task: str, judge_a: str,
                      margin: float | None, calibrate: bool = False,
                      escalate_by: str | None = None) -> tuple[float | None, str]:
    """The coverage to expect for a new escalating run by ``judge_a`` on ``task``: the one
    achieved by its latest escalating run, else (with a fixed ``margin``) the share of the
    judge's stored answers on the task at or above it — with ``calibrate``, their confidence
    read through the latest stored calibration of the judge's confidence on the task (the
    run's own fit is only made after A's pass); ``(None, reason)`` without either.
    ``escalate_by="item"``: an answer is kept when its **item's** mean confidence is at or above
    the margin (as the run decides, ``by_item.py``), and an earlier run's coverage counts only
    when it escalated the same way — B's cost follows the answers it is asked
    (``docs/scaling.md``), so the share of answers is the share of B's cost either way."""
    by = check_escalate_by(escalate_by)
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
        if esc and esc.get("coverage") is not None and margin is None and \
                check_escalate_by(esc.get("escalate_by")) == by:
            return float(esc["coverage"]), f"achieved by escalating run {r['id']}"
        if margin is not None:
            got = db.execute("SELECT item_id, COALESCE(a_p_yes, p_yes), COALESCE(a_verdict, "
                             "verdict) FROM answer WHERE run_id = ?", [r["id"]]).fetchall()
            if got:
                conf = np.array([E.confidence(p, v, fit) for _, p, v in got], float)
                if by == "item":  # each answer read at its item's mean confidence
                    conf = item_mean_confidence(conf, [i for i, _, _ in got])
                share = float(np.mean(conf >= margin))
                # said of what is sent on: the number it stands beside is the second
                # judge's (the answers below the margin), not the share kept
                what = "answers in items whose mean confidence is" if by == "item" else \
                    "answers with confidence"
                return share, (f"as many as run {r['id']}'s {what} below "
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
    by = check_escalate_by(params.get("escalate_by"))
    scattered = by == "answer" and _reuses_prefix(db, b)
    total = Estimate()
    for j in [j.strip() for j in judges if j and j.strip()]:  # an empty spec field: no judge
        cov, why = expected_coverage(db, task, j, params.get("margin"),
                                     bool(params.get("calibrate_judges")), by)
        part = _share(full, 1.0 - (cov or 0.0), b, j,
                      f"({why})" if cov is not None else f"at most ({why}: all of them)")
        if scattered and cov:
            part.notes.append(SCATTERED.format(b=b))
        total += part
    total.parts = {b: total.to_json()}
    return total


#: measured (docs/benchmarks.md, *Cold cascades*; 2026-11-28): the share of answers priced
#: B's CPU within 1 % by item, and 12 % low by answer — scattered answers re-read their items
SCATTERED = ("{b} asked answer by answer re-reads the text of each item it is asked about "
             "(its prefix cache helps only within an item): measured on SummEval, its time was "
             "12 % above this share (by item: within 1 %; docs/benchmarks.md, Cold cascades)")


def _reuses_prefix(db: sqlite_utils.Database, spec: str) -> bool:
    """Whether judge ``spec`` answers an item's questions from a shared prefix (the embedded
    judge, vLLM): then answers scattered over items cost it more each than answers in a row."""
    try:
        return bool(judge_to_look_at(spec, db).capabilities.prefix_reuse)
    except Exception:  # noqa: BLE001 - a spec the estimate above reported already
        return False


def _share(full: Estimate, share: float, b: str, a: str, why: str) -> Estimate:
    """``share`` of B's estimate of all the requests: what B is expected to be asked of A's."""
    return Estimate(round(full.calls * share), round(full.cached * share),
                    round(full.prompt_tokens * share), round(full.completion_tokens * share),
                    None if full.seconds is None else full.seconds * share,
                    None if full.usd is None else full.usd * share,
                    [*full.notes, f"{b} asked {pct(share)} of {a}'s requests {why}"])


def start_estimate(db: sqlite_utils.Database, task: str, judges: list[str], methods: list[str],
                   checklist: str | int | None, limit: int | None,
                   params: dict[str, Any]) -> Estimate:
    """The cost before a start of runs with ``params`` (the Run page's cost box, ``run
    --estimate``): every first judge's runs, and with ``escalate_to`` the second judge's
    expected share (:func:`second_judge_estimate`) — both judges' calls, tokens, time and
    money in one sum, the second's share in ``parts``."""
    base = {k: v for k, v in params.items() if k not in OPTIONS}
    est = estimate_batch(db, task, judges, methods, checklist=checklist, limit=limit,
                         params=base)
    if str(params.get("escalate_to") or "").strip():
        est = est + second_judge_estimate(db, task, judges, methods, checklist, limit, params)
    return est


def stored_run_estimate(db: sqlite_utils.Database, run_id: int, judge: Any = None) -> Estimate:
    """What a stored run will cost (``estimate.estimate_run``), plus — for an escalating run —
    its second judge's expected share of the run's requests (stored with the run's estimate
    under ``parts``, so the estimate-vs-actual table shows both judges)."""
    est = estimate_run(db, run_id, judge)
    found = rows(db, "SELECT r.judge_spec, r.params, t.name AS task FROM run r JOIN task t "
                     "ON t.id = r.task_id WHERE r.id = ?", [run_id])
    if not found:
        raise NotFound(f"no run {run_id}")
    p = loads(found[0]["params"], {}) or {}
    b = str(p.get("escalate_to") or "").strip()
    if not b:
        return est
    a = found[0]["judge_spec"]
    cov, why = expected_coverage(db, found[0]["task"], a, p.get("margin"),
                                 bool(p.get("calibrate_judges")), p.get("escalate_by"))
    try:
        full = estimate_run(db, run_id, b)
    except Exception as e:  # noqa: BLE001 - B's share is information: A's estimate is kept
        est.notes.append(f"{b}: no estimate of the second judge's share "
                         f"({type(e).__name__}: {str(e)[:200]})")
        return est
    part = _share(full, 1.0 - (cov or 0.0), b, a,
                  f"({why})" if cov is not None else f"at most ({why}: all of them)")
    part.parts = {b: part.to_json()}
    return est + part


def start_cost_line(db: sqlite_utils.Database, task: str, judges: list[str], methods: list[str],
                    checklist: str | int | None, limit: int | None, params: dict[str, Any],
                    esc: dict[str, Any]) -> tuple[str, list[str]]:
    """``(line, notes)`` of the Run page's cost box before *Start*: :func:`start_estimate`
    with the escalation fields ``esc`` (:func:`~checkeval_core.runs.escalation.options.escalation_params`'s
    arguments) — one sum over both judges, then the second judge's share — or why there is
    no estimate."""
    parts: dict[str, dict[str, Any]] = {}

    def both(*a: Any) -> Estimate:
        est = start_estimate(*a, {**params, **escalation_params(**esc)})
        parts.update(est.parts)
        return est

    line, notes = cost_line(both, db, task, judges, methods, checklist, limit)
    for spec, part in parts.items():
        line += (f" — both judges; of which the second judge {spec}: "
                 + Estimate(**part).text())
    return line, notes
