"""What the Analysis and Versions pages show of an escalating run: the coverage–agreement
curve on held-out (or dev / all) units, with the run's own point, the first judge alone and
the second judge alone, and the judge time per decision.

The second judge's answers come from the run itself (the units it escalated) and, for the
units it kept, from a completed run of the second judge alone on the same task, checklist
version and method when there is one; without it the curve stops at the run's own coverage
and says so.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.analysis.escalation_charts import coverage_agreement_chart
from checkeval_core.people import people_labels
from checkeval_core.runs.escalation.cascade import summary_text
from checkeval_core.runs.escalation.units import Units, run_units
from checkeval_core.runs.jobs import get_run
from checkeval_core.stats import escalation as E
from checkeval_core.stats.bootstrap import minimum
from checkeval_core.store import loads, rows
from checkeval_core.task_split import check_which, members, task_of_run

WHICH_NAMES = {"heldout": "held-out", "dev": "dev", "all": "all"}


def escalating_runs(db: sqlite_utils.Database, run_ids: list[int]) -> list[int]:
    """The runs among ``run_ids`` that escalate to a second judge."""
    out = []
    for rid in run_ids:
        r = db.execute("SELECT params FROM run WHERE id = ?", [rid]).fetchone()
        if r and loads(r[0], {}).get("escalate_to"):
            out.append(int(rid))
    return out


def _b_alone_run(db: sqlite_utils.Database, run: dict[str, Any]) -> int | None:
    b = run["params"]["escalate_to"]
    for r in rows(db, "SELECT id, params FROM run WHERE task_id = ? AND checklist_version_id "
                      "IS ? AND method = ? AND judge_spec = ? AND status = 'completed' "
                      "ORDER BY id DESC", [run["task_id"], run["checklist_version_id"],
                                           run["method"], b]):
        if not loads(r["params"], {}).get("escalate_to"):
            return int(r["id"])
    return None


def _merge_b(u: Units, other: Units) -> None:
    """Fill B's agreement and time on units the run kept from B's own run (same keys)."""
    at = {k: i for i, k in enumerate(other.keys)}
    for i, k in enumerate(u.keys):
        j = at.get(k)
        if j is not None and math.isnan(u.agree_b[i]):
            u.agree_b[i] = other.agree_a[j]
            u.conf_b[i] = other.conf_a[j]
            u.ms_b[i] = other.ms_a[j]


def escalation_curve(db: sqlite_utils.Database, run_id: int, which: str = "heldout",
                     n_boot: int = 200, seed: int = 0) -> dict[str, Any]:
    """``{"run", "judge_a", "judge_b", "unit", "label_source", "which", "n_units",
    "n_groups", "b_run", "points", "run_point", "a_alone", "b_alone", "cost_unit",
    "reason"}``; every agreement with a 95 % interval over resampled groups or ``None``.
    ``points`` are cascade thresholds (coverage = share kept by the first judge)."""
    check_which(which)
    run = get_run(db, run_id)
    esc = run["params"].get("escalation") or {}
    out: dict[str, Any] = {"run": run_id, "judge_a": run["judge_spec"],
                           "judge_b": run["params"].get("escalate_to"), "which": which,
                           "unit": esc.get("unit"), "label_source": esc.get("label_source"),
                           "points": [], "run_point": None, "a_alone": None, "b_alone": None,
                           "b_run": None, "n_units": 0, "n_groups": 0,
                           "cost_unit": "judge seconds per decision", "reason": ""}
    if not out["judge_b"] or run["status"] != "completed":
        out["reason"] = "not a completed escalating run"
        return out
    u = run_units(db, run)
    b_run = _b_alone_run(db, run)
    if b_run is not None:
        _merge_b(u, run_units(db, get_run(db, b_run)))
        out["b_run"] = b_run
    arr = u.arrays()
    mask = ~np.isnan(arr["agree_a"])
    if which != "all":
        m = members(db, run["task"])
        if m is None:
            out["reason"] = f"the task has no split: read --split all (not {which})"
            return out
        mask &= np.array([m[0].get(g) == which for g in u.groups], bool)
    out["unit"], out["label_source"] = u.kind, u.label_source
    if not mask.any():
        out["reason"] = (f"no {which} {u.kind} has a human label "
                         f"({u.label_source or 'no labels on this task'})")
        return out
    groups = [g for g, k in zip(u.groups, mask) if k]
    ca, aa, ab = arr["conf_a"][mask], arr["agree_a"][mask], arr["agree_b"][mask]
    ms_a, ms_b = arr["ms_a"][mask], arr["ms_b"][mask]
    cost_a = float(np.mean(ms_a)) / 1000
    cost_b = float(np.nanmean(ms_b)) / 1000 if (~np.isnan(ms_b)).any() else float("nan")
    out["n_units"], out["n_groups"] = int(mask.sum()), len(set(groups))
    t = esc.get("threshold")
    t = math.inf if t is None else float(t)
    pts = E.curve(ca, aa, ab, cost_a, cost_b, groups, n_boot=n_boot, seed=seed)
    out["points"] = pts
    out["a_alone"] = next(p for p in pts if p["threshold"] == 0.0)
    b_alone = [p for p in pts if p["threshold"] is None]
    out["b_alone"] = b_alone[0] if b_alone else None
    out["run_point"] = E.curve(ca, aa, ab, cost_a, cost_b, groups, thresholds=[t],
                               n_boot=n_boot, seed=seed)[0]
    missing = max(p["missing_b"] for p in pts)
    if missing:
        out["reason"] = (f"the second judge has not answered {missing} of these units (no run "
                         "of it alone on this version): the curve stops where they are needed")
    return out


def items_reaching(db: sqlite_utils.Database, task: str, which: str,
                   n_groups: int | None = None) -> tuple[int, int] | None:
    """``(N, k)``: the first N items of ``task`` (the order of the Run page's *Items (first N)*
    and ``run --limit``) reach ``k`` (≤ ``n_groups``) ``which`` groups holding an item with a
    human score or a person's answer; None when no such group exists. Read row by row in SQL,
    stopping at the ``n_groups``-th group (default: the floor's minimum for an interval)."""
    n_groups = minimum(n_groups)
    m = members(db, task)
    if m is None:
        return None
    tid = db.execute("SELECT id FROM task WHERE name = ?", [task]).fetchone()
    if tid is None:
        return None
    seen: set[str] = set()
    last = 0
    decided = {pk for pk, _ in people_labels(db, tid[0])}  # people's answers: the one record
    for n, (pk, group, scored) in enumerate(db.execute(
            "SELECT i.id, i.group_id, EXISTS (SELECT 1 FROM human_score h WHERE h.item_id = i.id)"
            " FROM item i WHERE i.task_id = ? ORDER BY i.position, i.id", [tid[0]]), start=1):
        labelled = scored or pk in decided
        if labelled and m[0].get(str(group)) == which and str(group) not in seen:
            seen.add(str(group))
            last = n
            if len(seen) >= n_groups:
                break
    return (last, len(seen)) if seen else None


def how_to_get_a_curve(db: sqlite_utils.Database, run_id: int, which: str) -> str:
    """What to run when an escalating run's items hold no labelled ``which`` unit (a
    tour-sized run covers the first few documents, all of them dev): how many first items
    reach labelled ``which`` groups, on the Run page and on the command line."""
    run = get_run(db, run_id)
    reach = items_reaching(db, run["task"], which)
    if reach is None:
        return (f"This task has no {WHICH_NAMES[which]} group with human labels: import human "
                "scores or have people answer a sample (Align) to draw the curve.")
    n, k = reach
    p = run["params"]
    how = (f" --margin {p['margin']:g}" if p.get("margin") is not None else
           f" --target-agreement {p['target_agreement']:g}"
           if p.get("target_agreement") is not None else "")
    version = ("" if run["checklist_version"] is None
               else f" --checklist {run['checklist_version']}")
    return (f"This run's {len(run['item_ids'])} items lie outside the labelled "
            f"{WHICH_NAMES[which]} groups. The first {n} items reach {k} of them"
            + ("" if k >= minimum() else f" (an interval needs ≥ {minimum()})")
            + f": run the escalation on them — on the Run page *Items (first N)* = {n}, or "
            f"`checkeval run --task {run['task']} --judge {run['judge_spec']} --method "
            f"{run['method']}{version} --escalate-to {p.get('escalate_to')}{how} --limit {n}`.")


def task_escalating_runs(db: sqlite_utils.Database, task: str) -> list[int]:
    """The task's completed escalating runs, newest first."""
    ids = [int(r[0]) for r in db.execute(
        "SELECT r.id FROM run r JOIN task t ON t.id = r.task_id WHERE t.name = ? AND "
        "r.status = 'completed' ORDER BY r.id DESC", [task])]
    return escalating_runs(db, ids)


def curve_page(db: sqlite_utils.Database, run_id: int, n_boot: int = 200) -> dict[str, Any]:
    """The pages' view: the curve on held-out units when the task has a split (else on all
    units, said in ``note``), the chart, and the run's escalation summary text."""
    which = "heldout" if members(db, task_of_run(db, run_id)) is not None else "all"
    view = escalation_curve(db, run_id, which, n_boot=n_boot)
    esc = get_run(db, run_id)["params"].get("escalation") or {}
    note = "" if which == "heldout" else ("The task has no dev / held-out split: the curve is "
                                          "read on all groups, including any the threshold "
                                          "was fitted on.")
    ok = any(_ok(p["agreement"]) for p in view["points"])
    return {"view": view, "figure": coverage_agreement_chart(view) if ok else None,
            "summary": summary_text(esc) if esc else "", "note": note,
            "caption": (f"{view['n_units']} labelled {view['unit'] or 'unit'}s in "
                        f"{view['n_groups']} {WHICH_NAMES[which]} groups; labels: "
                        f"{view['label_source'] or 'none'}; intervals: 95 % over resampled "
                        "groups" + (f"; the second judge alone from run {view['b_run']}"
                                    if view["b_run"] else "")),
            "reason": view["reason"],
            "how_to": how_to_get_a_curve(db, run_id, which)
            if view["reason"].startswith(f"no {which} ") else ""}


def _ok(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))
