"""Escalating runs: the run's judge (A) answers everything, what it is unsure of is asked of a
second judge (B).

A run escalates when its options hold ``escalate_to`` (B's spec) and one of
``target_agreement`` (fit the threshold on dev groups against human labels, Trust or Escalate's
fixed-sequence test at probability 1 − ``delta``) or ``margin`` (a fixed confidence threshold),
checked before anything is asked (:mod:`checkeval_core.runs.escalation.options`).
After A's pass over every item (``jobs.execute_run``), :func:`escalate`:

1. reads A's answers as *units* (one answer, or one human-voted pair on a pairwise task — see
   :mod:`checkeval_core.stats.escalation`) with A's confidence;
2. fixes the threshold (the stored one on a resumed run, else ``margin``, else the fit on the
   labelled dev units);
3. asks B, item by item, every request whose answers belong to a unit below the threshold
   (through B's own request cache), and overwrites those answers with B's, keeping A's
   verdict, p(Yes) and latency in ``a_verdict`` / ``a_p_yes`` / ``a_latency_ms`` and B's spec
   in ``judge``; a resumed run skips answers B already gave;
4. with ``abstain``, fits (or takes ``margin`` as) B's own threshold on the escalated dev
   units: B's answers below it are "not decidable", reported as the share decided;
5. with ``calibrate_judges``, fits each judge's p(Yes) to the people's labels on the dev
   answers it gave (Platt scaling, :func:`checkeval_core.stats.escalation.platt_fit`): the
   run's scores then average calibrated p(Yes), so an item whose answers come from both
   judges is not scored on two scales (each answer keeps its judge's own verdict and p(Yes));
6. stores the threshold, its evidence and the achieved coverage in ``params["escalation"]``.

No human label is ever invented: without labelled dev units, ``target_agreement`` fails the
run with a message saying which labels it needs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.judges.registry import get_judge
from checkeval_core.runs.escalation.by_item import by_item, check_escalate_by, escalated_items
from checkeval_core.runs.escalation.judge_calibration import (
    confidence_calibration,
    judge_calibration,
)
from checkeval_core.runs.escalation.units import Units, run_units, unit_parts
from checkeval_core.runs.estimate import record_part_actual, snapshot
from checkeval_core.stats import escalation as E
from checkeval_core.stats.values import pct
from checkeval_core.store import dumps, now_iso, transaction


def calibrated_units(db: sqlite_utils.Database, run: dict[str, Any], units: Units
                     ) -> tuple[Units, dict[str, Any]]:
    """With ``calibrate_judges`` on answers, A's confidence calibration
    (:func:`~checkeval_core.runs.escalation.judge_calibration.confidence_calibration`) and the units
    read through it; else the units as they are and no calibration."""
    p = run["params"]
    if not p.get("calibrate_judges") or units.kind != "answer":
        return units, {}
    cal = confidence_calibration(db, run, fitted_threshold=p.get("margin") is None)
    return (by_item(run_units(db, run, conf_fit=cal["fit"]), p) if "slope" in cal["fit"]
            else units), cal


def fit(db: sqlite_utils.Database, run: dict[str, Any], units: Units,
        cal: dict[str, Any] | None = None) -> dict[str, Any]:
    """A's threshold (and, with ``abstain``, B's): ``margin``, or fitted on the labelled dev
    units (δ halved per stage when both are fitted) — with A's confidence calibration ``cal``
    (:func:`calibrated_units`), on the dev groups it was not fitted on."""
    p = run["params"]
    cal = cal or {}
    extra = {"confidence_calibration": cal} if cal else {}
    if p.get("margin") is not None:
        return {"threshold": float(p["margin"]), "b_threshold": float(p["margin"])
                if p.get("abstain") else None, "fitted": False, **extra}
    target = float(p["target_agreement"])
    delta = float(p.get("delta", E.DEFAULT_DELTA))
    delta_stage = delta / 2 if p.get("abstain") else delta
    arr = units.arrays()
    dev = (unit_parts(db, run, units.groups) == "dev") & ~np.isnan(arr["agree_a"])
    if "slope" in cal.get("fit", {}):  # not on the groups A's confidence was fitted to
        fitted_on = set(cal["groups"])
        dev &= np.array([g not in fitted_on for g in units.groups], bool)
    if not dev.any():
        raise ValueError(f"--target-agreement: no dev unit of run {run['id']} has a human label "
                         f"(looked for {'pairwise votes' if units.kind == 'pair' else 'checklist annotations or expert scores'} on the dev groups); "
                         "give --margin, or collect labels first")
    f = E.fit_threshold(arr["conf_a"][dev], arr["agree_a"][dev] == 1, target, delta_stage)
    return {"threshold": f.threshold, "fit": f.to_dict(), "fitted": True,
            "label_source": units.label_source, "unit": units.kind,
            "b_threshold": None, **extra}


def _fit_b(db: sqlite_utils.Database, run: dict[str, Any], units: Units,
           state: dict[str, Any]) -> None:
    """B's abstention threshold on the dev units B answered (fitted runs only)."""
    if not run["params"].get("abstain") or not state.get("fitted"):
        return
    arr = units.arrays()
    dev = (unit_parts(db, run, units.groups) == "dev") & ~np.isnan(arr["agree_b"])
    if not dev.any():
        state["b_threshold"] = None
        state["b_fit"] = {"reason": "no labelled dev unit went to the second judge"}
        return
    target = float(run["params"]["target_agreement"])
    delta = float(run["params"].get("delta", E.DEFAULT_DELTA)) / 2
    f = E.fit_threshold(arr["conf_b"][dev], arr["agree_b"][dev] == 1, target, delta)
    state["b_threshold"] = f.threshold
    state["b_fit"] = f.to_dict()


def summary(db: sqlite_utils.Database, run: dict[str, Any], units: Units,
            state: dict[str, Any]) -> dict[str, Any]:
    """Coverage (share of units kept by A), escalated and decided shares, over the run and on
    held-out labelled units (agreement of the cascade and of A alone there)."""
    arr = units.arrays()
    t = state["threshold"]
    keep = arr["conf_a"] >= t
    bt = state.get("b_threshold")
    undecided = ~keep & ~np.isnan(arr["conf_b"]) & (arr["conf_b"] < bt) if bt is not None \
        else np.zeros(len(keep), bool)
    out = {**{k: (None if isinstance(v, float) and math.isinf(v) else v)
              for k, v in state.items()},
           "unit": units.kind, "label_source": units.label_source, "n_units": len(keep),
           "coverage": float(keep.mean()) if len(keep) else None,
           "n_escalated": int((~keep).sum()),
           "decided": float(1 - undecided.mean()) if len(keep) else None}
    held = (unit_parts(db, run, units.groups) == "heldout") & ~np.isnan(arr["agree_a"])
    if held.any():
        o = E.cascade_outcome(arr["conf_a"][held], arr["agree_a"][held], t,
                              arr["conf_b"][held], arr["agree_b"][held], bt)
        out["heldout"] = {"n": int(held.sum()), **o,
                          "agreement_a": float(arr["agree_a"][held].mean())}
    return out


def escalate(db: sqlite_utils.Database, run: dict[str, Any], ctx: dict[str, Any],
             its: list[dict[str, Any]], plan: Callable[[dict[str, Any], dict[str, Any]], list],
             judge_b: Any = None) -> dict[str, Any] | None:
    """Step 2–5 of the module doc after A's pass; returns the stored summary, or None when
    the run was cancelled meanwhile. ``judge_b`` overrides B (tests)."""
    p = run["params"]
    b_spec = str(p["escalate_to"])
    # a resumed run: through its stored calibration, if any; by item: each item's mean
    units = by_item(run_units(db, run), p)
    state = p.get("escalation")
    if not state:
        units, cal = calibrated_units(db, run, units)
        state = fit(db, run, units, cal)
    if "fit" in state and state.get("threshold") is None:
        state["threshold"] = math.inf
    t = float(state["threshold"])
    p["escalation"] = {**state, "threshold": None if math.isinf(t) else t}
    db.execute("UPDATE run SET params = ? WHERE id = ?", [dumps(p), run["id"]])
    conf = np.asarray(units.conf_a, float)
    todo = {k for i in np.flatnonzero(conf < t) for k in units.answers[i]}
    jb = judge_b or get_judge(b_spec, db=db)
    answered = {(r[0], r[1], r[2]) for r in db.execute(
        "SELECT item_id, question_id, unit FROM answer WHERE run_id = ? AND judge = ?",
        [run["id"], b_spec])}
    # B's requests planned up front, so that the Run page can say "second judge: k of N"
    plans = [(it, [w for w in plan(it, ctx)
                   if any((w.item_pk, q, u) in todo and (w.item_pk, q, u) not in answered
                          for q, u, _ in w.targets)]) for it in its]
    progress = {"done": 0, "total": sum(len(works) for _, works in plans)}
    _b_progress(db, run, progress)
    before = snapshot(jb)
    b_asked = b_failed = 0  # B's requests in this pass and how many ended in an error
    first_error = ""
    try:
        for it, works in plans:
            status = db.execute("SELECT status FROM run WHERE id = ?", [run["id"]]).fetchone()[0]
            if status == "cancelled":
                return None
            for kind in ("binary", "generate"):
                batch = [w for w in works if w.kind == kind]
                if not batch:
                    continue
                results = (jb.binary if kind == "binary" else jb.generate)(
                    [w.request for w in batch])
                _store_b(db, run["id"], it["id"], batch, results, todo, b_spec)
                b_asked += len(results)
                failed = [r.error for r in results if r.error]
                b_failed += len(failed)
                first_error = first_error or (failed[0] if failed else "")
            if works:
                progress["done"] += len(works)
                _b_progress(db, run, progress)
    finally:  # B's calls, tokens and dollars beside the run's estimate of them
        record_part_actual(db, run["id"], jb, before)
    units = by_item(run_units(db, run), p)
    _fit_b(db, run, units, state)
    if p.get("calibrate_judges"):
        state["calibration"] = judge_calibration(db, run)
    state["threshold"] = t
    p["escalation"] = summary(db, run, units, state)
    p["escalation"]["b_requests"] = getattr(jb, "n_requests", None)
    p["escalation"]["b_spec"] = b_spec
    p["escalation"]["b_errors"] = {"asked": b_asked, "failed": b_failed,
                                   "first": first_error[:300]}
    p["escalation"]["b_progress"] = progress
    p["escalation"]["escalate_by"] = check_escalate_by(p.get("escalate_by"))
    p["escalation"]["n_items_escalated"] = escalated_items(units, t)
    db.execute("UPDATE run SET params = ?, cost = cost + ? WHERE id = ?",
               [dumps(p), float(getattr(jb, "cost", 0.0) or 0.0), run["id"]])
    return p["escalation"]


def _b_progress(db: sqlite_utils.Database, run: dict[str, Any], progress: dict[str, int]
                ) -> None:
    """B's pass so far (requests sent of those planned) in ``params.escalation.b_progress``,
    read by the Run page's progress (``runs/progress.py``)."""
    run["params"]["escalation"]["b_progress"] = dict(progress)
    db.execute("UPDATE run SET params = ?, heartbeat_at = ? WHERE id = ?",
               [dumps(run["params"]), now_iso(), run["id"]])


def _store_b(db: sqlite_utils.Database, run_id: int, item_pk: int, batch: list,
             results: list, todo: set, b_spec: str) -> None:
    """B's answers over A's, in one transaction; a B error keeps A's answer (asked again on
    resume) and counts as a judge error."""
    with transaction(db):
        n_err = 0
        for w, res in zip(batch, results):
            if res.error:
                n_err += 1
                continue
            for a in w.parse(res):
                key = (item_pk, a["question_id"], a["unit"])
                if key not in todo:
                    continue
                db.execute(
                    "UPDATE answer SET a_verdict = verdict, a_p_yes = p_yes, "
                    "a_latency_ms = latency_ms, verdict = ?, p_yes = ?, value = ?, mode = ?, "
                    "raw = ?, cached = ?, tokens_in = ?, tokens_out = ?, latency_ms = ?, "
                    "judge = ?, created_at = ? WHERE run_id = ? AND item_id = ? AND "
                    "question_id = ? AND unit = ? AND judge != ?",
                    [a["verdict"], a["p_yes"], a["value"], a["mode"], (a["raw"] or "")[:2000],
                     int(res.cached), res.tokens_in, res.tokens_out, res.latency_ms, b_spec,
                     now_iso(), run_id, item_pk, a["question_id"], a["unit"], b_spec])
        db.execute("UPDATE run SET n_errors = n_errors + ?, tokens_in = tokens_in + ?, "
                   "tokens_out = tokens_out + ?, heartbeat_at = ? WHERE id = ?",
                   [n_err, sum(r.tokens_in for r in results if not r.cached),
                    sum(r.tokens_out for r in results if not r.cached), now_iso(), run_id])


def b_error_problem(esc: dict[str, Any], limit: float, run_id: int) -> str | None:
    """Why the run fails for its second judge's errors — the share of B's requests that
    ended in an error above ``max_error_share``, the rule an ordinary run's answers follow
    (a failed B request keeps A's answer, so the run's own answers would not show it) — or
    None."""
    b = esc.get("b_errors") or {}
    asked, failed = int(b.get("asked") or 0), int(b.get("failed") or 0)
    if not asked or failed / asked <= limit:
        return None
    return (f"the second judge ({esc.get('b_spec') or 'escalate_to'}) failed {failed} of "
            f"{asked} requests ({pct(failed / asked)}), above max_error_share={limit:g}; "
            f"first error: {b.get('first', '')} — the escalated answers are still the first "
            f"judge's; fix the second judge and resume (checkeval run --resume {run_id}) to "
            "ask them again")


def _items(esc: dict[str, Any]) -> str:
    if esc.get("escalate_by") != "item":
        return ""
    return f" ({esc.get('n_items_escalated')} items, all their questions: by item)"


def summary_text(esc: dict[str, Any]) -> str:
    """One paragraph for the CLI and the Run page."""
    t = esc.get("threshold")
    how = (f"fitted for agreement ≥ {esc['fit']['target']:g} with probability "
           f"{1 - esc['fit']['delta']:g} on {esc['fit']['n_dev']} labelled dev {esc['unit']}s "
           f"({esc.get('label_source') or 'no labels'})" if esc.get("fitted") else "fixed margin")
    lines = [f"escalation: threshold {'none passed (all escalated)' if t is None else f'{t:.4g}'}"
             f" ({how}); the first judge kept {pct(esc.get('coverage'))} of "
             f"{esc.get('n_units')} {esc.get('unit')}s, {esc.get('n_escalated')} went to the "
             f"second judge{_items(esc)}; decided {pct(esc.get('decided'))}"]
    if esc.get("fit", {}).get("reason"):
        lines.append("  " + esc["fit"]["reason"])
    cc = esc.get("confidence_calibration")
    if cc:
        f = cc["fit"]
        lines.append(f"  first judge's confidence calibrated on {len(cc['groups'])} dev groups "
                     f"({cc.get('label_source')}): "
                     + (f"σ({f['slope']:.3g}·logit p {f['intercept']:+.3g}) on {f['n']} answers"
                        + ("; the threshold fitted on the other dev groups"
                           if esc.get("fitted") else "")
                        if "slope" in f else f"not calibrated: {f['reason']}"))
    cal = esc.get("calibration")
    if cal:
        def one(f: dict[str, Any]) -> str:
            return (f"σ({f['slope']:.3g}·logit p {f['intercept']:+.3g}) on {f['n']} answers"
                    if "slope" in f else f"not calibrated: {f['reason']}")
        lines.append(f"  p(Yes) calibrated on dev ({cal.get('label_source')}): first judge "
                     f"{one(cal['a'])}; second judge {one(cal['b'])}")
    b = esc.get("b_errors") or {}
    if b.get("failed"):
        lines.append(f"  the second judge failed {b['failed']} of {b['asked']} requests: those "
                     "answers are still the first judge's")
    h = esc.get("heldout")
    if h:
        lines.append(f"  held-out ({h['n']} labelled {esc['unit']}s): cascade agreement "
                     f"{pct(h['agreement'])} at coverage {pct(h['coverage'])} (first judge "
                     f"alone {pct(h['agreement_a'])})")
    return "\n".join(lines)
