"""Agreement across judges, per method: CheckEval's headline comparison (Table 4 of the ACL
paper). Do two different judges give the same items the same scores more often when they
answer a checklist than when they give a Likert score (G-Eval)? High correlation with humans
does not make an evaluation reliable; agreement between evaluators is the other half.

For every method with completed runs of **at least two distinct judges on one checklist
version**, one run per judge is taken (the one covering most items, then the newest) and
Krippendorff's α (interval) is computed on the dimension scores of the items *all* of them
scored, each run with its own primary aggregation (a checklist's share / mean p(Yes), G-Eval's
1–5 score): units are (item, dimension), coders are the judges. The interval resamples
documents / contexts / queries (the units of one document are not independent); with fewer
than the floor's :data:`~checkeval_core.stats.bootstrap.MIN_GROUPS` groups there is none and
the reason says so. Checklist methods also get α on their Yes/No answers (:func:`checkeval_core.analysis.report.agreement`).

α on raw scores also counts a judge's offset and scale as disagreement (one judge's mean
p(Yes) around 0.5, another's around 0.8, agree on nothing by that measure even when they order
the items alike), so each row also gives ``alpha_z``: α on the scores standardised per judge
and dimension over the shared items (z-scores; the mean and SD are those of the whole shared
set, not re-estimated per resample) — do the judges agree on *which items are better*? A
judge that gives one dimension the same score everywhere cannot be standardised there: those
units are left out of ``alpha_z`` and ``z_note`` says so.

Edge cases: a method with one judge is listed in ``missing`` with the reason, never drawn; no
shared item, or no variation at all, gives α = None with the reason.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.runs.registry import METHODS, primary_aggregation
from checkeval_core.stats.agreement import (
    binary_alpha,
    binary_alpha_ci,
    binary_group_sums,
    interval_alpha,
    interval_stats,
    krippendorff_alpha,
)
from checkeval_core.stats.bootstrap import group_bootstrap, weighted_sums
from checkeval_core.stats.values import nan_to_none
from checkeval_core.store import loads, rows, task_id

#: Resamples of the groups for α's interval.
N_BOOT = 300


def _candidates(db: sqlite_utils.Database, tid: int) -> list[dict[str, Any]]:
    out = rows(db, "SELECT r.id, r.judge_spec, r.method, r.params, r.item_ids, "
                   "r.checklist_version_id, v.version FROM run r LEFT JOIN checklist_version v "
                   "ON v.id = r.checklist_version_id WHERE r.task_id = ? AND r.status = "
                   "'completed' ORDER BY r.id", [tid])
    for r in out:
        r["n_items"] = len(loads(r["item_ids"], []))
    return out


def pick_runs(runs: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Per method, the checklist version with the most distinct judges and one run per judge
    (most items, then the newest). ``({method: {"version", "runs"}}, {method: reason it has
    no comparison})``."""
    by: dict[str, dict[Any, dict[str, dict[str, Any]]]] = defaultdict(lambda: defaultdict(dict))
    for r in runs:
        best = by[r["method"]][r["version"]].get(r["judge_spec"])
        if best is None or (r["n_items"], r["id"]) > (best["n_items"], best["id"]):
            by[r["method"]][r["version"]][r["judge_spec"]] = r
    chosen, missing = {}, {}
    for method, versions in by.items():
        version, judges = max(versions.items(),
                              key=lambda kv: (len(kv[1]), kv[0] if kv[0] is not None else -1))
        if len(judges) < 2:
            mine = [r for r in runs if r["method"] == method]
            names = ", ".join(sorted({r["judge_spec"] for r in mine}))
            missing[method] = (f"needs completed runs of ≥ 2 different judges on one checklist "
                               f"version; has {len(mine)} run(s) of {names}")
            continue
        chosen[method] = {"version": version,
                          "runs": sorted(judges.values(), key=lambda r: r["id"])}
    return chosen, missing


def _score_units(db: sqlite_utils.Database, picked: list[dict[str, Any]]
                 ) -> tuple[dict[tuple[int, str], dict[int, float]], dict[int, tuple[str, str]]]:
    """``{(item pk, dimension): {run id: score}}`` over the items every run scored, and each
    item's (group, system)."""
    per: dict[tuple[int, str], dict[int, float]] = defaultdict(dict)
    items_of: dict[int, set[int]] = {}
    for r in picked:
        agg = primary_aggregation(r)
        got = db.execute("SELECT item_id, dimension, value FROM score WHERE run_id = ? AND "
                         "aggregation = ? AND value IS NOT NULL", [r["id"], agg]).fetchall()
        items_of[r["id"]] = {g[0] for g in got}
        for item, dim, value in got:
            per[(item, dim)][r["id"]] = float(value)
    shared = set.intersection(*items_of.values()) if items_of else set()
    units = {u: v for u, v in per.items() if u[0] in shared and len(v) == len(picked)}
    where = {r[0]: (r[1], r[2]) for r in db.execute(
        "SELECT id, group_id, system_id FROM item WHERE id IN (SELECT value FROM json_each(?))",
        [f"[{','.join(str(i) for i in sorted(shared))}]"])}
    return units, where


def _alpha(units: list[dict[int, float]], run_ids: list[int]) -> float:
    if not units:
        return math.nan
    return krippendorff_alpha([[u[r] for u in units] for r in run_ids], "interval")


def alpha_interval(units: dict[tuple[int, str], dict[int, float]],
                   group_of: dict[int, str], run_ids: list[int], n_boot: int = N_BOOT,
                   seed: int = 0) -> dict[str, Any]:
    """Krippendorff α (interval) of the judges' scores with a percentile interval resampling
    groups (a resample's α is a weighted sum of the groups' sufficient statistics,
    :func:`~checkeval_core.stats.agreement.interval_stats`). ``{"alpha", "ci": [lo, hi]
    or None, "reason"}`` (reason: why α or its interval is missing)."""
    alpha = _alpha(list(units.values()), run_ids)
    if math.isnan(alpha):
        why = ("the runs share no scored item" if not units else
               "no variation in the scores: α undefined")
        return {"alpha": None, "ci": None, "reason": why}
    groups: dict[str, list[dict[int, float]]] = defaultdict(list)
    for (item, _dim), v in units.items():
        groups[group_of[item]].append(v)
    sums = np.array([interval_stats(np.array([[u[r] for u in us] for r in run_ids])
                                    ).sum(axis=0) for us in groups.values()])
    boot = group_bootstrap(len(sums), weighted_sums(sums, interval_alpha), n_boot, seed)
    if boot.reason:
        return {"alpha": alpha, "ci": None, "reason": boot.reason}
    if len(boot.values) < 2:
        return {"alpha": alpha, "ci": None,
                "reason": "no interval: fewer than 2 resamples had varied scores"}
    return {"alpha": alpha, "ci": boot.ci(), "reason": None}


def standardised(units: dict[tuple[int, str], dict[int, float]], run_ids: list[int]
                 ) -> tuple[dict[tuple[int, str], dict[int, float]], str | None]:
    """Each judge's scores as z-scores per dimension over the given units; dimensions where
    some judge's scores do not vary are left out (named in the returned note)."""
    by: dict[tuple[int, str], list[float]] = defaultdict(list)
    for (_item, dim), v in units.items():
        for r in run_ids:
            by[(r, dim)].append(v[r])
    stat = {k: (float(np.mean(v)), float(np.std(v))) for k, v in by.items()}
    flat = sorted({dim for (r, dim), (_m, sd) in stat.items() if sd <= 1e-12})
    out = {u: {r: (v[r] - stat[(r, u[1])][0]) / stat[(r, u[1])][1] for r in run_ids}
           for u, v in units.items() if u[1] not in flat}
    note = (f"left out of the standardised α: {', '.join(flat)} (a judge gave every item "
            "the same score there)") if flat else None
    return out, note


def yes_no_alpha(db: sqlite_utils.Database, run_ids: list[int], group_of: dict[int, str],
                 n_boot: int = N_BOOT, seed: int = 0) -> dict[str, Any]:
    """Krippendorff α (nominal) of the runs' Yes/No answers on the given items (``group_of``
    keys), with the group-bootstrap interval of
    :func:`~checkeval_core.stats.agreement.alpha_binary_ci`: counted per (item, question,
    unit) in SQL, so a million answers are never walked in Python. ``{"alpha_yes_no",
    "ci_yes_no", "reason_yes_no"}``."""
    marks = ",".join("?" * len(run_ids))
    counts = np.array(db.execute(
        f"SELECT item_id, SUM(verdict = 'yes'), COUNT(*) FROM answer WHERE run_id IN "
        f"({marks}) AND verdict != 'invalid' AND item_id IN (SELECT value FROM "
        f"json_each(?)) GROUP BY item_id, question_id, unit HAVING COUNT(*) >= 2",
        [*run_ids, f"[{','.join(str(i) for i in sorted(group_of))}]"]).fetchall(),
        dtype=np.int64).reshape(-1, 3)
    if not len(counts):
        why = "the runs share no (item, question) answered Yes/No by two of them"
        return {"alpha_yes_no": None, "ci_yes_no": None, "reason_yes_no": why}
    sums = binary_group_sums(counts[:, 1], counts[:, 2], [group_of[i] for i in counts[:, 0]])
    alpha = binary_alpha(sums.sum(axis=0))
    if math.isnan(alpha):
        return {"alpha_yes_no": None, "ci_yes_no": None,
                "reason_yes_no": "every answer is the same: chance agreement is 1, α undefined"}
    ci = binary_alpha_ci(sums, n_boot, seed)
    ok = not any(math.isnan(x) for x in ci["ci"])
    return {"alpha_yes_no": alpha, "ci_yes_no": ci["ci"] if ok else None,
            "reason_yes_no": None if ok else ci["reason"]}


def judge_agreement(db: sqlite_utils.Database, task: str, n_boot: int = N_BOOT,
                    seed: int = 0) -> dict[str, Any]:
    """Per method, the agreement across judges on the items their runs share (see the module
    docstring). ``{"rows": [...], "missing": {method: reason}, "note": sentence or None}``;
    each row: method, label, version, runs, judges, n_items, n_groups, n_systems, n_units,
    alpha, ci, reason, alpha_z, ci_z, reason_z, z_note, n_units_z (the same on standardised
    scores), per_dimension {dim: {alpha, n_items}}, binary, and for Yes/No methods
    alpha_yes_no, ci_yes_no, reason_yes_no."""
    tid = task_id(db, task)
    chosen, missing = pick_runs(_candidates(db, tid))
    out = []
    for method, pick in sorted(chosen.items()):
        run_ids = [r["id"] for r in pick["runs"]]
        units, where = _score_units(db, pick["runs"])
        group_of = {i: g for i, (g, _) in where.items()}
        res = alpha_interval(units, group_of, run_ids, n_boot, seed)
        z_units, z_note = standardised(units, run_ids)
        res_z = alpha_interval(z_units, group_of, run_ids, n_boot, seed)
        dims: dict[str, list[dict[int, float]]] = defaultdict(list)
        for (_item, dim), v in units.items():
            dims[dim].append(v)
        per_dim = {d: {"alpha": _none(_alpha(v, run_ids)), "n_items": len(v)}
                   for d, v in sorted(dims.items())}
        m = METHODS.get(method)
        row = {"method": method, "label": m.title if m else method,
               "version": pick["version"], "runs": run_ids,
               "judges": [r["judge_spec"] for r in pick["runs"]],
               "n_items": len(where), "n_groups": len({g for g, _ in where.values()}),
               "n_systems": len({s for _, s in where.values()}), "n_units": len(units),
               "alpha": _none(res["alpha"]), "ci": res["ci"], "reason": res["reason"],
               "alpha_z": _none(res_z["alpha"]), "ci_z": res_z["ci"],
               "reason_z": z_note if res_z["alpha"] is None and z_note else res_z["reason"],
               "z_note": z_note, "n_units_z": len(z_units),
               "per_dimension": per_dim, "binary": bool(m and m.binary)}
        if m and m.binary:
            row.update(yes_no_alpha(db, run_ids, group_of, n_boot, seed))
        out.append(row)
    note = None
    if not out:
        note = ("Agreement across judges per method needs, for some method, completed runs of "
                "≥ 2 different judges on one checklist version" + (
                    ": " + "; ".join(f"{k}: {v}" for k, v in sorted(missing.items()))
                    if missing else " (no completed run yet)."))
    return {"rows": out, "missing": missing, "note": note}


_none = nan_to_none
