"""The bundled demo: SummEval and Topical-Chat subsets plus the CheckEval authors' checklists.

``load_demo`` is idempotent: tasks already present are left as they are. It also imports the
published checklists into the demo tasks and freezes
them as version 1, so a run works on the demo right away. Then it loads the shipped runs
(:mod:`checkeval_core.demo.runs`; ``CHECKEVAL_DEMO_RUNS=0`` skips this part): importing them
creates the versions they were made on (2: the authors' seed questions; 3: version 2 pruned on
dev documents), and the SummEval and Topical-Chat tasks get the demo's dev / held-out split
when they have none, so the versions view and the run comparison have content at once.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.checklists import io as checklist_io
from checkeval_core.checklists import versions
from checkeval_core.config import data_dir
from checkeval_core.datasets import import_file
from checkeval_core.demo.instruction import TASK, enabled, load_instruction_demo
from checkeval_core.demo.runs import demo_runs, demo_split, shipped_bundles
from checkeval_core.demo.runs import enabled as runs_enabled
from checkeval_core.team import guarded

DEMO_TASKS = [
    # (task name, kind, data file, checklist file)
    ("summeval-demo", "summarization", "summeval_demo.jsonl", "checklists/summeval.json"),
    ("topical-chat-demo", "dialogue", "topical_chat_demo.jsonl", "checklists/topical_chat.json"),
]


def demo_task_names() -> list[str]:
    """Every demo task :func:`load_demo` creates, in order (the instruction-following task
    only when it is enabled), for messages that list them."""
    return [t[0] for t in DEMO_TASKS] + ([TASK] if enabled() else [])


def demo_loaded(db: sqlite_utils.Database) -> bool:
    """True when every demo task exists."""
    names = {r[0] for r in db.execute("SELECT name FROM task")}
    return all(n in names for n in demo_task_names())


@guarded("data.import")
def load_demo(db: sqlite_utils.Database) -> dict[str, Any]:
    """Create the demo tasks that are missing; returns what was done per task."""
    done: dict[str, Any] = {}
    bundles = shipped_bundles() if runs_enabled() else []
    for name, kind, data_file, checklist in DEMO_TASKS:
        entry: dict[str, Any] = {}
        exists = db.execute("SELECT 1 FROM task WHERE name = ?", [name]).fetchone()
        if exists:
            entry["items"] = "already loaded"
        else:
            entry["items"] = import_file(db, data_dir() / data_file, name, kind)
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
        problems: list[str] = []
        entry["runs"] = demo_runs(db, name, bundles, problems)
        if problems:
            entry["problems"] = problems
        split = demo_split(db, name)
        if split is not None:
            entry["split"] = {"dev": len(split["dev"]), "heldout": len(split["heldout"]),
                              "seed": split["seed"]}
        done[name] = entry
    if enabled():
        done[TASK] = load_instruction_demo(db, bundles)
    return done
