"""Which runs a page opens on when the person has not chosen yet.

Runs are compared on the items they share, so the defaults must not put a large run beside a
3-item one (the first chart would then rest on 3 items), and a comparison should open on two
runs that differ by one thing (the checklist version) rather than on whatever ran last.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils


def item_counts(db: sqlite_utils.Database, run_ids: list[int]) -> dict[int, int]:
    """``{run id: number of items it covers}``."""
    if not run_ids:
        return {}
    got = dict(db.execute(
        "SELECT id, json_array_length(item_ids) FROM run WHERE id IN (SELECT value FROM "
        "json_each(?))", [f"[{','.join(str(int(i)) for i in run_ids)}]"]).fetchall())
    return {i: int(got.get(i) or 0) for i in run_ids}


def default_runs(db: sqlite_utils.Database, runs: list[dict[str, Any]], n: int = 4) -> list[int]:
    """Analysis: the completed runs covering the most items, in the given order (newest
    first), at most ``n``."""
    size = item_counts(db, [r["id"] for r in runs])
    top = max(size.values(), default=0)
    return [r["id"] for r in runs if size[r["id"]] == top][:n]


def default_pair(db: sqlite_utils.Database, runs: list[dict[str, Any]]) -> tuple[int, int]:
    """Compare runs: ``(A, B)`` with B the newest run and A the newest other run of the same
    judge and method covering as many of B's items as possible (a version comparison), else
    the newest other run sharing the most items with B. ``runs``: newest first, ≥ 2."""
    b = runs[0]
    size = item_counts(db, [r["id"] for r in runs])
    others = runs[1:]
    same = [r for r in others if r["judge_spec"] == b["judge_spec"]
            and r["method"] == b["method"]]
    pool = same or others
    best = max(pool, key=lambda r: (min(size[r["id"]], size[b["id"]]), r["id"]))
    return best["id"], b["id"]
