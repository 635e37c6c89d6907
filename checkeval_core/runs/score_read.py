"""Reading a run's scores back (one aggregation or all), joined with item ids and groups.

Without an aggregation named, a run's scores are read in its primary aggregation
(:func:`checkeval_core.runs.registry.primary_aggregation`)."""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.runs.registry import primary_aggregation
from checkeval_core.store import NotFound, rows


def run_scores(db: sqlite_utils.Database, run_id: int,
               aggregation: str | None = None) -> list[dict[str, Any]]:
    """Rows ``item_pk, item_id, group_id, system_id, dimension, aggregation, value``;
    ``aggregation=None`` → the run's primary aggregation; ``"all"`` → every aggregation."""
    if aggregation is None:
        aggregation = _primary(db, run_id)
    sql = ("SELECT s.item_id AS item_pk, i.item_id, i.group_id, i.system_id, s.dimension, "
           "s.aggregation, s.value, s.n_questions, s.n_invalid FROM score s "
           "JOIN item i ON i.id = s.item_id WHERE s.run_id = ?")
    params_: list[Any] = [run_id]
    if aggregation != "all":
        sql += " AND s.aggregation = ?"
        params_.append(aggregation)
    return rows(db, sql + " ORDER BY i.position, s.dimension, s.aggregation", params_)


def _primary(db: sqlite_utils.Database, run_id: int) -> str:
    r = rows(db, "SELECT method, params FROM run WHERE id = ?", [run_id])
    if not r:
        raise NotFound(f"no run {run_id}")
    return primary_aggregation(r[0])


def aggregations(db: sqlite_utils.Database, run_id: int) -> list[str]:
    return [r[0] for r in db.execute(
        "SELECT DISTINCT aggregation FROM score WHERE run_id = ? ORDER BY aggregation", [run_id])]


def dimension_means(db: sqlite_utils.Database, run_id: int,
                    aggregation: str | None = None) -> list[dict[str, Any]]:
    """Per-dimension mean score of a run, computed in SQL (no whole-table load)."""
    if aggregation is None:
        aggregation = _primary(db, run_id)
    return rows(db, "SELECT dimension, AVG(value) AS mean, COUNT(value) AS n FROM score "
                    "WHERE run_id = ? AND aggregation = ? GROUP BY dimension ORDER BY dimension",
                [run_id, aggregation])
