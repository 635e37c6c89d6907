"""The bundled demo: SummEval and Topical-Chat subsets plus the CheckEval authors' checklists.

``load_demo`` is idempotent: tasks already present are left as they are. When the checklist
module is available it also imports the published checklists into the demo tasks and freezes
them as version 1, so a run works on the demo right away.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import sqlite_utils

from checkeval_core.config import data_dir
from checkeval_core.datasets import import_file

DEMO_TASKS = [
    # (task name, kind, data file, checklist file)
    ("summeval-demo", "summarization", "summeval_demo.jsonl", "checklists/summeval.json"),
    ("topical-chat-demo", "dialogue", "topical_chat_demo.jsonl", "checklists/topical_chat.json"),
]


def demo_task_names() -> list[str]:
    """Every demo task :func:`load_demo` creates, in order (the instruction-following task
    only when it is enabled), for messages that list them."""
    from checkeval_core.demo_instruction import TASK, enabled

    return [t[0] for t in DEMO_TASKS] + ([TASK] if enabled() else [])


def demo_loaded(db: sqlite_utils.Database) -> bool:
    """True when every demo task exists."""
    names = {r[0] for r in db.execute("SELECT name FROM task")}
    return all(n in names for n in demo_task_names())


def load_demo(db: sqlite_utils.Database) -> dict[str, Any]:
    """Create the demo tasks that are missing; returns what was done per task."""
    done: dict[str, Any] = {}
    try:
        have_checklists = importlib.util.find_spec("checkeval_core.checklists.io") is not None
    except ModuleNotFoundError:
        have_checklists = False
    for name, kind, data_file, checklist in DEMO_TASKS:
        entry: dict[str, Any] = {}
        exists = db.execute("SELECT 1 FROM task WHERE name = ?", [name]).fetchone()
        if exists:
            entry["items"] = "already loaded"
        else:
            entry["items"] = import_file(db, data_dir() / data_file, name, kind)
        if have_checklists:
            from checkeval_core.checklists import io as checklist_io
            from checkeval_core.checklists import versions

            n_q = db.execute("SELECT COUNT(*) FROM question q JOIN task t ON t.id = q.task_id "
                             "WHERE t.name = ?", [name]).fetchone()[0]
            if n_q == 0:
                entry["checklist"] = checklist_io.import_checklist(db, name, data_dir() / checklist)
            n_v = db.execute("SELECT COUNT(*) FROM checklist_version v JOIN task t "
                             "ON t.id = v.task_id WHERE t.name = ?", [name]).fetchone()[0]
            if n_v == 0:
                entry["version"] = versions.freeze(
                    db, name, note="CheckEval authors' published checklist (seed + "
                                   "diversification + elaboration)")
            entry["runs"] = _demo_runs(db, name)
        done[name] = entry
    from checkeval_core.demo_instruction import TASK, enabled, load_instruction_demo  # issue 14

    if enabled():
        done[TASK] = load_instruction_demo(db)
    return done


def _demo_runs(db: sqlite_utils.Database, task: str) -> list[int]:
    """Load the pre-computed embedded-judge runs shipped in ``data/demo_runs/`` (made by
    ``scripts/make_demo_runs.sh``), so the demo's charts and traces are there at once.
    ``CHECKEVAL_DEMO_RUNS=0`` skips them (the test suite does, to start from empty runs)."""
    import json
    import os

    if os.environ.get("CHECKEVAL_DEMO_RUNS", "1") == "0":
        return []

    from checkeval_core.runs.bundle import bundle_hash, import_bundle

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
    from checkeval_core.store import dumps, loads

    for rid, params in db.execute(
            "SELECT r.id, r.params FROM run r JOIN task t ON t.id = r.task_id "
            "WHERE t.name = ? AND r.params LIKE ?", [task, f"%{name}%"]).fetchall():
        p = loads(params, {})
        if p.get("bundle") == name and "bundle_hash" not in p:
            p["bundle_hash"] = digest
            db.execute("UPDATE run SET params = ? WHERE id = ?", [dumps(p), rid])
