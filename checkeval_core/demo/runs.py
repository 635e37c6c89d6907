"""The pre-computed judge runs shipped with the demo (``data/demo_runs/*.json``), loaded into
their demo tasks so charts and traces are there on a fresh machine without waiting for a judge.

A bundle carries its checklist version (see :mod:`checkeval_core.runs.bundle`), so importing
the runs also creates the demo's later versions (the seed questions, version 2; the version
pruned from it on dev documents, version 3). Bundles are imported in the order of the version
number they were exported from, then by file name, so versions get the same numbers here as
where the runs were made. After its runs, a task with human scores gets the demo's dev /
held-out split (:data:`SPLIT_SEED`, :data:`SPLIT_SHARE`) when it has none — the split
``scripts/make_demo_runs.sh`` set before it chose the pruned version, so the version was
chosen on the demo's dev documents only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import sqlite_utils

from checkeval_core.config import data_dir
from checkeval_core.runs.bundle import bundle_hash, import_bundle
from checkeval_core.store import NotFound, dumps, loads
from checkeval_core.task_split import set_split

# the demo's dev / held-out split: make_demo_runs.sh reads these two numbers from here
SPLIT_SEED = 0
SPLIT_SHARE = 0.5
SPLIT_TASKS = ("summeval-demo", "topical-chat-demo")


def enabled() -> bool:
    """``CHECKEVAL_DEMO_RUNS=0`` skips the shipped runs, and with them the demo's later
    versions and split (the test suite does, to start from version 1 and no runs)."""
    return os.environ.get("CHECKEVAL_DEMO_RUNS", "1") != "0"


def runs_dir() -> Path:
    """Where the shipped bundles are: ``data/demo_runs``, or ``$CHECKEVAL_DEMO_RUNS_DIR`` (to
    try bundles a build just made, before they replace the shipped ones)."""
    env = os.environ.get("CHECKEVAL_DEMO_RUNS_DIR")
    return Path(env).expanduser() if env else data_dir() / "demo_runs"


def shipped_bundles(folder: Path | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``(file name, bundle)`` of every shipped bundle, in import order (the version number
    the bundle was exported from, then the file name)."""
    out = []
    for f in sorted((folder or runs_dir()).glob("*.json")):
        out.append((f.name, json.loads(f.read_text(encoding="utf-8"))))
    def order(nb: tuple[str, dict[str, Any]]) -> tuple[int, str]:
        c = nb[1].get("checklist") if isinstance(nb[1], dict) else None
        v = c.get("version") if isinstance(c, dict) else None
        return (v if isinstance(v, int) else 0, nb[0])
    return sorted(out, key=order)


def demo_runs(db: sqlite_utils.Database, task: str,
              bundles: list[tuple[str, dict[str, Any]]] | None = None,
              problems: list[str] | None = None) -> list[int]:
    """Load the pre-computed runs of ``task`` shipped in :func:`runs_dir` (made by
    ``scripts/make_demo_runs.sh``), so the demo's charts and traces are there at once.
    ``bundles``: :func:`shipped_bundles` already read (default: read them). A bundle that
    cannot be loaded into this database (its questions edited away) is left out and named
    in ``problems`` instead of stopping the demo."""
    if not enabled():
        return []
    out = []
    for name, bundle in shipped_bundles() if bundles is None else bundles:
        if bundle.get("task") != task:
            continue
        _adopt_legacy(db, task, name, bundle_hash(bundle))
        try:  # imports once (by content); repairs a run left without scores by a killed demo
            out.append(import_bundle(db, bundle, name=name))
        except (NotFound, ValueError) as e:
            if problems is None:
                raise
            problems.append(f"{name}: {e}")
    return out


def demo_split(db: sqlite_utils.Database, task: str) -> dict[str, Any] | None:
    """Give ``task`` the demo's dev / held-out split when it has none (and the shipped runs
    are loaded); returns the split made, None when nothing was done."""
    if not enabled() or task not in SPLIT_TASKS:
        return None
    if db.execute("SELECT 1 FROM task_split s JOIN task t ON t.id = s.task_id WHERE "
                  "t.name = ?", [task]).fetchone():
        return None
    return set_split(db, task, heldout_share=SPLIT_SHARE, seed=SPLIT_SEED, by_system=False)


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
