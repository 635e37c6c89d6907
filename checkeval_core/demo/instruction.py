"""The instruction-following demo: RocketEval's own setting, ready on a fresh machine.

Task ``alpacaeval-demo`` (kind ``instruction``): 8 AlpacaEval queries × the 12 test models of
RocketEval's list-level benchmark (items ``<instruction_id>:<system_id>``, group = the query),
the author-written per-query checklists frozen as the task's ``instance`` checklist, the
models' Chatbot Arena Elo as reference ratings (source ``arena_elo``), and the pre-computed
embedded-judge RocketEval run shipped in ``data/demo_runs/`` (made by
``scripts/make_demo_runs.sh``). Files: ``data/alpacaeval_demo.jsonl``,
``data/alpacaeval_demo_models.json``, ``data/checklists/alpacaeval_author.jsonl`` (made by
``scripts/make_demo_data.py``). Idempotent: every step runs only when its result is missing.
"""

from __future__ import annotations

import os
from typing import Any

import sqlite_utils

from checkeval_core.annotation.preferences import import_ratings, rating_sources
from checkeval_core.checklists.instance import import_group_checklists
from checkeval_core.checklists.versions import freeze
from checkeval_core.config import data_dir
from checkeval_core.datasets import import_file
from checkeval_core.demo.runs import demo_runs
from checkeval_core.store import task_id

TASK = "alpacaeval-demo"
KIND = "instruction"
DATA_FILE = "alpacaeval_demo.jsonl"
RATINGS_FILE = "alpacaeval_demo_models.json"
CHECKLIST_FILE = "checklists/alpacaeval_author.jsonl"
NOTE = "author-written per-query checklists (../shared/benchmarks/alpacaeval)"


def enabled() -> bool:
    """``CHECKEVAL_DEMO_INSTRUCTION=0`` leaves this task out of the demo (the test suite does:
    its page tests expect the SummEval demo task to be the first one by name)."""
    return os.environ.get("CHECKEVAL_DEMO_INSTRUCTION", "1") != "0"


def load_instruction_demo(db: sqlite_utils.Database,
                          bundles: list[tuple[str, dict[str, Any]]] | None = None
                          ) -> dict[str, Any]:
    """Create whatever part of the ``alpacaeval-demo`` task is missing; returns what was done."""
    entry: dict[str, Any] = {}
    if db.execute("SELECT 1 FROM task WHERE name = ?", [TASK]).fetchone():
        entry["items"] = "already loaded"
    else:
        entry["items"] = import_file(db, data_dir() / DATA_FILE, TASK, kind=KIND)
    tid = task_id(db, TASK)
    if not db.execute("SELECT 1 FROM question WHERE task_id = ? AND group_id != ''",
                      [tid]).fetchone():
        entry["checklist"] = import_group_checklists(db, TASK, path=data_dir() / CHECKLIST_FILE)
    if not db.execute("SELECT 1 FROM checklist_version WHERE task_id = ? AND kind = 'instance'",
                      [tid]).fetchone():
        entry["version"] = freeze(db, TASK, note=NOTE, kind="instance")
    if not rating_sources(db, TASK):
        entry["ratings"] = import_ratings(db, TASK, path=data_dir() / RATINGS_FILE)
    entry["runs"] = demo_runs(db, TASK, bundles)  # loaded as every demo task's are
    return entry
