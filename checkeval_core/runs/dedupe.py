"""Starting a run once: the same request twice must not create two runs.

On the Run page, Enter in a form field submits the form and a click on *Start* submits it
again; a double click or a second browser tab does the same. Two identical runs double the
cost and leave two records of one decision. :func:`create_run_once` registers a run unless an
identical one (same task, checklist version, judge, method, options and items) is still
``pending`` or ``running``, in which case it returns that run. The check and the insert happen
in one ``BEGIN IMMEDIATE`` transaction, so two sessions cannot both pass the check.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.runs.jobs import create_run
from checkeval_core.store import transaction


class _Duplicate(Exception):
    def __init__(self, run_id: int):
        self.run_id = run_id


def create_run_once(db: sqlite_utils.Database, task: str, judge_spec: str, method: str,
                    checklist: str | int = "latest", limit: int | None = None,
                    item_ids: list[str] | None = None,
                    params: dict[str, Any] | None = None) -> tuple[int, bool]:
    """``(run id, created)``: a new pending run, or the identical one already pending/running
    (then nothing is written). Raises what :func:`create_run` raises on bad input."""
    try:
        with transaction(db):
            rid = create_run(db, task, judge_spec, method, checklist=checklist, limit=limit,
                             item_ids=item_ids, params=params)
            dup = db.execute(
                "SELECT o.id FROM run o JOIN run n ON n.id = ? WHERE o.id != n.id AND "
                "o.task_id = n.task_id AND o.checklist_version_id IS n.checklist_version_id "
                "AND o.judge_spec = n.judge_spec AND o.method = n.method AND "
                "o.params = n.params AND o.item_ids = n.item_ids AND "
                "o.status IN ('pending', 'running') ORDER BY o.id LIMIT 1", [rid]).fetchone()
            if dup:
                raise _Duplicate(dup[0])  # rolls the new run back
    except _Duplicate as d:
        return d.run_id, False
    return rid, True
