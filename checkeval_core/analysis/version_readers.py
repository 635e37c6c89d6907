"""What the versions report (:mod:`checkeval_core.analysis.versions`) reads from the store: the
kinds of human evidence a task has, the completed runs of its frozen checklist versions, a
run's Yes/No decisions beside people's labels and its preferred answers beside people's votes,
and the stamp that changes whenever any of it changes. Every SQL of the report is here; the
figures, deltas and display rows are computed from what these return.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import sqlite_utils

from checkeval_core.people import PEOPLE_STAMP, has_answers, people_labels
from checkeval_core.stats.ranking import judge_outcome
from checkeval_core.store import rows, task_id

#: The kinds of human evidence, in the order the report lists them.
EVIDENCE = ("human_scores", "annotations", "preferences", "reference_ratings")


def evidence_kinds(db: sqlite_utils.Database, task: str) -> list[str]:
    """Which kinds of human evidence the task has (in :data:`EVIDENCE` order)."""
    tid = task_id(db, task)
    checks = {
        "human_scores": "SELECT 1 FROM human_score h JOIN item i ON i.id = h.item_id WHERE "
                        "i.task_id = ? AND h.annotator = '' LIMIT 1",
        "preferences": "SELECT 1 FROM preference WHERE task_id = ? LIMIT 1",
        "reference_ratings": "SELECT 1 FROM system_rating WHERE task_id = ? LIMIT 1",
    }
    have = {k for k, sql in checks.items() if db.execute(sql, [tid]).fetchone()}
    if has_answers(db, tid):
        have.add("annotations")
    return [k for k in EVIDENCE if k in have]


def version_runs(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    """Completed runs of a frozen checklist version: ``run, version, judge, method, params,
    n_items``, newest first."""
    return rows(db, "SELECT r.id AS run, v.version, r.judge_spec AS judge, r.method, r.params, "
                    "json_array_length(r.item_ids) AS n_items FROM run r JOIN checklist_version v ON v.id = r.checklist_version_id "
                    "WHERE r.task_id = ? AND r.status = 'completed' ORDER BY r.id DESC",
                [task_id(db, task)])


def run_task_name(db: sqlite_utils.Database, run_id: int) -> str:
    """The name of the run's task."""
    return db.execute("SELECT t.name FROM run r JOIN task t ON t.id = r.task_id WHERE r.id = ?",
                      [run_id]).fetchone()[0]


def annotation_hits(db: sqlite_utils.Database, run_id: int) -> pd.DataFrame:
    """The run's Yes/No decisions on (item, question)s people decided
    (:func:`checkeval_core.people.people_labels`: the settled answer, else the majority;
    unsettled ties left out): item_pk, question_id, dimension, group, system, hit (0/1)."""
    cols = ["item_pk", "question_id", "dimension", "group", "system", "hit"]
    task = db.execute("SELECT task_id FROM run WHERE id = ?", [run_id]).fetchone()
    majority = people_labels(db, int(task[0])) if task else {}
    if not majority:
        return pd.DataFrame(columns=cols)
    ans = pd.DataFrame(rows(db, "SELECT a.item_id AS item_pk, a.question_id, a.dimension, "
                                'a.verdict, i.group_id AS "group", i.system_id AS system FROM '
                                "answer a JOIN item i ON i.id = a.item_id WHERE a.run_id = ? AND "
                                "a.unit = '' AND a.question_id != 0 AND a.verdict != 'invalid'",
                           [run_id]),
                       columns=["item_pk", "question_id", "dimension", "verdict", "group",
                                "system"])
    ans["human"] = [majority.get((i, q)) for i, q in zip(ans["item_pk"], ans["question_id"])]
    ans = ans.dropna(subset=["human"])
    ans["hit"] = (ans["verdict"] == ans["human"]).astype(int)
    return ans[cols]


def preference_hits(db: sqlite_utils.Database, run_id: int, sc: pd.DataFrame, agg: str,
                    tie_margin: float) -> pd.DataFrame:
    """Decisive human votes between two answers the run scored: item_a, item_b, group,
    system_a, system_b, hit (1 when the judge prefers the same answer; a judge tie is 0)."""
    cols = ["item_a", "item_b", "group", "system_a", "system_b", "hit"]
    score = sc[sc["aggregation"] == agg].set_index("item_pk")["score"].to_dict()
    prefs = rows(db, "SELECT p.item_a, p.item_b, p.winner, ia.group_id AS \"group\", "
                     "ia.system_id AS system_a, ib.system_id AS system_b FROM preference p "
                     "JOIN item ia ON ia.id = p.item_a JOIN item ib ON ib.id = p.item_b WHERE "
                     "p.task_id = (SELECT task_id FROM run WHERE id = ?)", [run_id])
    pairs = [{**p, "hit": int(judge_outcome(score[p["item_a"]], score[p["item_b"]], tie_margin)
                              == p["winner"])}
             for p in prefs if p["winner"] != "tie" and p["item_a"] in score
             and p["item_b"] in score]
    return pd.DataFrame(pairs, columns=[*cols, "winner"])[cols]


def evidence_stamp(db: sqlite_utils.Database, task: str) -> str:
    """Changes whenever anything :func:`~checkeval_core.analysis.versions.versions_report`
    reads changes (a page's cache key)."""
    tid = task_id(db, task)
    return "|".join(str(db.execute(sql, [tid]).fetchone()[0]) for sql in (
        "SELECT COUNT(*) || ':' || COALESCE(MAX(id), 0) || ':' || GROUP_CONCAT(status) FROM run "
        "WHERE task_id = ?",
        "SELECT COALESCE(MAX(s.id), 0) FROM score s JOIN run r ON r.id = s.run_id WHERE "
        "r.task_id = ?",
        PEOPLE_STAMP,
        "SELECT COUNT(*) || ':' || COALESCE(MAX(created_at), '') FROM preference WHERE "
        "task_id = ?",
        "SELECT COUNT(*) || ':' || COALESCE(MAX(created_at), '') FROM system_rating WHERE "
        "task_id = ?",
        "SELECT COUNT(*) FROM human_score h JOIN item i ON i.id = h.item_id WHERE i.task_id = ?",
        "SELECT COALESCE(MAX(updated_at), '') FROM task_split WHERE task_id = ?",
        "SELECT COUNT(*) FROM checklist_version WHERE task_id = ?",
        "SELECT COUNT(*) || ':' || COALESCE(GROUP_CONCAT(run_id), '') FROM reference_run "
        "WHERE task_id = ?"))
