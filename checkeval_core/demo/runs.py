"""The pre-computed judge runs shipped with the demo (``data/demo_runs/*.json``), loaded into
their demo tasks so charts and traces are there on a fresh machine without waiting for a judge."""

from __future__ import annotations

import json
import os

import sqlite_utils

from checkeval_core.config import data_dir
from checkeval_core.runs.bundle import bundle_hash, import_bundle
from checkeval_core.store import dumps, loads


def demo_runs(db: sqlite_utils.Database, task: str) -> list[int]:
    """Load the pre-computed embedded-judge runs shipped in ``data/demo_runs/`` (made by
    ``scripts/make_demo_runs.sh``), so the demo's charts and traces are there at once.
    ``CHECKEVAL_DEMO_RUNS=0`` skips them (the test suite does, to start from empty runs)."""
    if os.environ.get("CHECKEVAL_DEMO_RUNS", "1") == "0":
        return []

    out = []
    for f in sorted((data_dir() / "demo_runs").glob("*.json")):
        bundle = json.loads(f.read_text(encoding="utf-8"))
        if bundle.get("task") == task:
            _adopt_legacy(db, task, f.name, bundle_hash(bundle))
            # imports once (by content); repairs a run left without scores by a killed demo
            out.append(import_bundle(db, bundle, name=f.name))
    return out


def _adopt_legacy(db: sqlite_utils.Database, task: str, name: str, digest: str) -> None:
    """Runs imported from a demo file before imports were keyed by content carry only the
    file name: give them the file's hash so they are found (and repaired) instead of
    imported a second time."""
    for rid, params in db.execute(
            "SELECT r.id, r.params FROM run r JOIN task t ON t.id = r.task_id "
            "WHERE t.name = ? AND r.params LIKE ?", [task, f"%{name}%"]).fetchall():
        p = loads(params, {})
        if p.get("bundle") == name and "bundle_hash" not in p:
            p["bundle_hash"] = digest
            db.execute("UPDATE run SET params = ? WHERE id = ?", [dumps(p), rid])
