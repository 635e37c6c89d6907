"""The one label of a run, used by every page, chart legend and CLI listing.

``#7 · v3 · embedded · rocketeval · 192 items``: the run, the checklist version it asked,
judge, method and the number of items it covers — so that two runs of one judge and method
(a version comparison, or a full run beside a 3-item one) can be told apart anywhere. A run
that escalates unsure answers names its second judge after the first
(``#11 · v3 · embedded → embedded:quality · rocketeval · 39 items``). A run not completed
carries its status at the end.
"""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils


def run_label(run: dict[str, Any]) -> str:
    """The label of a run row: from :func:`~checkeval_core.runs.list_runs` (``id``,
    ``checklist_version``, ``judge_spec``, ``method``, ``n_items``, ``status``) or from
    :func:`~checkeval_core.analysis.version_readers.version_runs` (``run``, ``version``, ``judge``,
    …), with ``escalate_to`` or ``params`` naming an escalating run's second judge. A field
    the row lacks is left out of the label."""
    rid = run.get("id", run.get("run"))
    version = run.get("checklist_version", run.get("version"))
    n = run.get("n_items")
    parts = [f"#{rid}"]
    if version is not None:
        parts.append(f"v{version}")
    judge = str(run.get("judge_spec", run.get("judge", "")))
    second = escalates_to(run)
    parts += [f"{judge} → {second}" if second else judge, str(run.get("method", ""))]
    if n is not None:
        parts.append(f"{int(n)} item" + ("" if int(n) == 1 else "s"))
    status = run.get("status")
    if status not in (None, "", "completed"):
        parts.append(str(status))
    return " · ".join(parts)


def escalates_to(run: dict[str, Any]) -> str | None:
    """The second judge of an escalating run row (``escalate_to``, or inside ``params``: a
    dict or its JSON text), else None."""
    if run.get("escalate_to"):
        return str(run["escalate_to"])
    params = run.get("params")
    if isinstance(params, str):
        try:
            params = json.loads(params)
        except ValueError:
            return None
    b = params.get("escalate_to") if isinstance(params, dict) else None
    return str(b) if b else None


def label_rows(db: sqlite_utils.Database, run_ids: list[int]) -> dict[int, dict[str, Any]]:
    """``{run id: the fields run_label reads}`` of the given runs (unknown ids left out)."""
    if not run_ids:
        return {}
    got = db.execute(
        "SELECT r.id, v.version, r.judge_spec, r.method, json_array_length(r.item_ids), "
        "r.status, CASE WHEN json_valid(r.params) THEN json_extract(r.params, '$.escalate_to') "
        "END FROM run r LEFT JOIN checklist_version v ON v.id = r.checklist_version_id "
        "WHERE r.id IN (SELECT value FROM json_each(?))",
        [json.dumps(sorted({int(i) for i in run_ids}))]).fetchall()
    return {r[0]: {"id": r[0], "checklist_version": r[1], "judge_spec": r[2], "method": r[3],
                   "n_items": r[4], "status": r[5], "escalate_to": r[6]} for r in got}


def run_labels(db: sqlite_utils.Database, run_ids: list[int]) -> dict[int, str]:
    """``{run id: label}`` read from the database (for code that holds only run ids)."""
    return {i: run_label(r) for i, r in label_rows(db, run_ids).items()}
