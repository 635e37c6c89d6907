"""What a proposal reads: the runs' stored answers as an items × questions matrix, and the
task's human evidence, with each item's part of the split.

**Evidence** (first one the task has, or ``evidence=``): ``human_scores`` — per item and
dimension, the human score; ``reference_ratings`` — the systems' reference rating;
``preferences`` — human pairwise votes (ties left out).

**Parts**: an item is in a part when its group is (and, on a split by system, its system is
too) — except in the **ranking setting** (the evidence is a reference rating of the systems and
the split is by system), where a part is its *systems* on every query. One question asked with
the same text of several queries (a ``"*"`` row of a per-query checklist, RocketEval's fixed
list) is one column (:func:`shared_columns`).

**Scores** of a question subset (:func:`subset_scores`): per item and dimension, the
(weighted) mean of the answers' values (p(Yes) when stored, else 1/0 from the verdict; invalid
answers left out) — the run's ``mean_p_yes`` aggregation when every question is kept. Several
runs are averaged per (item, question).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import sqlite_utils

from checkeval_core.analysis.version_readers import evidence_kinds
from checkeval_core.annotation.preferences import ratings
from checkeval_core.runs.registry import per_question_methods
from checkeval_core.runs.score_math import answer_value
from checkeval_core.stats.ranking import DEFAULT_TIE_MARGIN
from checkeval_core.store import NotFound, rows
from checkeval_core.task_split import in_part, members

NAN = float("nan")
EVIDENCE = ("human_scores", "reference_ratings", "preferences")


class ProposalError(ValueError):
    """A proposal that cannot be made (the message says why and what to do)."""


@dataclass
class Evidence:
    """The runs' answers as an items × questions matrix, and the task's human evidence."""

    task: str
    version: int
    runs: list[int]
    kind: str
    ranking: bool
    items: pd.DataFrame                 # item_pk, group, system, dev, heldout (row order of V)
    questions: list[dict[str, Any]]     # id, text, dimension, group_id (column order of V)
    V: np.ndarray                        # answer values, NaN = not answered or invalid
    answered: np.ndarray                 # items × questions: number of answers stored
    invalid: np.ndarray                  # items × questions: number of invalid answers
    verdicts: dict[tuple[int, int], set[str]]
    human: dict[str, np.ndarray] = field(default_factory=dict)   # dimension → per item
    ratings: dict[str, float] = field(default_factory=dict)
    pairs: pd.DataFrame | None = None    # a, b (row indices), winner, group
    methods: list[str] = field(default_factory=list)
    tie_margin: float = DEFAULT_TIE_MARGIN  # preferences: a score gap below this is a tie


def _runs(db: sqlite_utils.Database, run_ids: list[int]) -> list[dict[str, Any]]:
    if not run_ids:
        raise ProposalError("give at least one run (--run RUN_ID)")
    out = []
    for rid in dict.fromkeys(int(r) for r in run_ids):
        r = rows(db, "SELECT r.id, r.status, r.method, r.checklist_version_id AS vid, t.name AS "
                     "task, v.version FROM run r JOIN task t ON t.id = r.task_id LEFT JOIN "
                     "checklist_version v ON v.id = r.checklist_version_id WHERE r.id = ?", [rid])
        if not r:
            raise NotFound(f"no run {rid}")
        r = r[0]
        if r["status"] != "completed":
            raise ProposalError(f"run {rid} is {r['status']}: a proposal reads completed runs "
                                "only")
        if r["method"] not in per_question_methods():
            raise ProposalError(f"run {rid} uses method {r['method']}: a proposal needs Yes/No "
                                "answers to checklist questions "
                                f"({' or '.join(per_question_methods())})")
        out.append(r)
    if len({r["task"] for r in out}) > 1 or len({r["vid"] for r in out}) > 1:
        raise ProposalError("the runs must be of one task and one checklist version; got "
                            + ", ".join(f"run {r['id']}: {r['task']} v{r['version']}"
                                        for r in out))
    return out


def shared_columns(questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One column per question, except that per-query copies of one question — the same text
    and dimension asked of two or more queries (a ``"*"`` row, RocketEval's fixed list) — are
    one column: each item answers only its own query's copy, so the copies never collide, and
    a choice made on dev queries then applies to held-out queries too. A column keeps the
    first copy's id in ``id`` and every copy's in ``ids``; a shared column's ``group_id`` is
    ``""``. Order: by first id."""
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for q in questions:
        if q["group_id"]:
            by_key[(q["dimension"], q["text"])].append(q)
    shared = {k: v for k, v in by_key.items() if len({q["group_id"] for q in v}) > 1}
    out, seen = [], set()
    for q in sorted(questions, key=lambda q: q["id"]):
        key = (q["dimension"], q["text"])
        if q["group_id"] and key in shared:
            if key in seen:
                continue
            seen.add(key)
            out.append({**q, "group_id": "", "ids": [c["id"] for c in shared[key]]})
        else:
            out.append({**q, "ids": [q["id"]]})
    return out


def load_evidence(db: sqlite_utils.Database, run_ids: list[int],
                  evidence: str | None = None) -> Evidence:
    """Read the runs' answers and the task's evidence; refuse a task without a split."""
    runs = _runs(db, run_ids)
    task = runs[0]["task"]
    m = members(db, task)
    if m is None:
        raise ProposalError(f"task {task!r} has no dev / held-out split: a proposal is chosen on "
                            f"dev groups and proven on held-out ones — make one with "
                            f"`checkeval split --task {task}` (or on the Versions page)")
    groups, systems = m
    kinds = [k for k in evidence_kinds(db, task) if k in EVIDENCE]
    if evidence is not None:
        if evidence not in EVIDENCE:
            raise ProposalError(f"--evidence {evidence!r}: use {', '.join(EVIDENCE)}")
        if evidence not in kinds:
            raise ProposalError(f"task {task!r} has no {evidence.replace('_', ' ')}")
        kind = evidence
    elif kinds:
        kind = kinds[0]
    else:
        raise ProposalError(f"task {task!r} has no human evidence a proposal can fit on: "
                            "import human scores, pairwise preferences or reference ratings")
    ranking = kind == "reference_ratings" and systems is not None
    ids = [r["id"] for r in runs]
    marks = ",".join("?" * len(ids))
    ans = rows(db, f"SELECT a.item_id, a.question_id, a.verdict, a.p_yes FROM answer a WHERE "
                   f"a.run_id IN ({marks}) AND a.unit = '' AND a.question_id != 0", ids)
    if not ans:
        raise ProposalError(f"run(s) {', '.join(map(str, ids))} stored no answer to a question")
    qids = sorted({a["question_id"] for a in ans})
    qrows = {q["id"]: q for q in rows(
        db, f"SELECT q.id, q.text, q.group_id, d.name AS dimension, s.name AS sub FROM question "
            f"q LEFT JOIN dimension d ON d.id = q.dimension_id LEFT JOIN sub_dimension s ON "
            f"s.id = q.sub_dimension_id WHERE q.id IN ({','.join('?' * len(qids))})", qids)}
    items = pd.DataFrame(rows(db, f"SELECT DISTINCT i.id AS item_pk, i.group_id AS \"group\", "
                                  f"i.system_id AS system FROM item i JOIN answer a ON "
                                  f"a.item_id = i.id WHERE a.run_id IN ({marks}) ORDER BY i.id",
                              ids))

    def part(g: str, s: str, which: str) -> bool:
        if ranking:
            return systems.get(str(s)) == which  # type: ignore[union-attr]
        return in_part(g, s, which, groups, systems)

    items["dev"] = [part(g, s, "dev") for g, s in zip(items["group"], items["system"])]
    items["heldout"] = [part(g, s, "heldout") for g, s in zip(items["group"], items["system"])]
    row = {pk: k for k, pk in enumerate(items["item_pk"])}
    cols = shared_columns([{"id": q, "text": qrows.get(q, {}).get("text", f"#{q}"),
                            "dimension": qrows.get(q, {}).get("dimension") or "overall",
                            "group_id": qrows.get(q, {}).get("group_id") or "",
                            "sub": qrows.get(q, {}).get("sub") or ""} for q in qids])
    col = {q: k for k, c in enumerate(cols) for q in c["ids"]}
    S = np.zeros((len(items), len(cols)))
    answered = np.zeros_like(S)
    invalid = np.zeros_like(S)
    verdicts: dict[tuple[int, int], set[str]] = defaultdict(set)
    for a in ans:
        r, c = row[a["item_id"]], col[a["question_id"]]
        answered[r, c] += 1
        v = answer_value(a["verdict"], a["p_yes"])
        if v is None:
            invalid[r, c] += 1
        else:
            S[r, c] += v
            verdicts[(r, c)].add(a["verdict"])
    valid = answered - invalid
    with np.errstate(invalid="ignore", divide="ignore"):
        V = np.where(valid > 0, S / np.maximum(valid, 1), NAN)
    ev = Evidence(task, runs[0]["version"] or 0, ids, kind, ranking, items, cols, V, answered,
                  invalid, verdicts, methods=sorted({r["method"] for r in runs}))
    if kind == "human_scores":
        for r in db.execute(f"SELECT h.item_id, h.dimension, h.value FROM human_score h WHERE "
                            f"h.annotator = '' AND h.item_id IN (SELECT DISTINCT item_id FROM "
                            f"answer WHERE run_id IN ({marks}))", ids):
            ev.human.setdefault(r[1], np.full(len(items), NAN))[row[r[0]]] = float(r[2])
    elif kind == "reference_ratings":
        # the first source (arena_elo first), read through the ratings' owner
        ev.ratings = {r["system_id"]: float(r["rating"]) for r in ratings(db, task)}
    else:
        prefs = [(row.get(p["item_a"]), row.get(p["item_b"]), p["winner"], p["group_id"])
                 for p in rows(db, "SELECT item_a, item_b, winner, group_id FROM preference "
                                   "WHERE task_id = (SELECT id FROM task WHERE name = ?) AND "
                                   "winner != 'tie'", [task])]
        ev.pairs = pd.DataFrame([p for p in prefs if p[0] is not None and p[1] is not None],
                                columns=["a", "b", "winner", "group"])
    return ev


# -- scores of a question subset --------------------------------------------------------------
def subset_scores(ev: Evidence, keep: np.ndarray, weights: np.ndarray | None = None
                  ) -> dict[str, np.ndarray]:
    """Per dimension, each item's (weighted) mean of the kept questions' values (NaN: none)."""
    w = np.where(keep, 1.0 if weights is None else weights, 0.0)
    out = {}
    for dim in dict.fromkeys(q["dimension"] for q in ev.questions):
        cols = np.array([q["dimension"] == dim for q in ev.questions]) & keep
        valid = ~np.isnan(ev.V[:, cols])
        num = (np.nan_to_num(ev.V[:, cols]) * w[cols]).sum(1)
        den = (valid * w[cols]).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[dim] = np.where(den > 0, num / np.where(den > 0, den, 1), NAN)
    return out




def question_unit(q: dict[str, Any]) -> tuple[str, str]:
    """A column's unit: its dimension and query (``""`` for a question of every query) —
    what keeps ≥ 1 question, within which near-copies are compared and weights fitted."""
    return (q["dimension"], q["group_id"])


def question_ref(ev: Evidence, k: int) -> dict[str, Any]:
    """Column ``k`` as a proposal lists it: ``{"id", "text", "dimension"[, "group_id"][,
    "ids"]}``."""
    q = ev.questions[k]
    return {"id": q["id"], "text": q["text"], "dimension": q["dimension"],
            **({"group_id": q["group_id"]} if q["group_id"] else {}),
            **({"ids": q["ids"]} if len(q.get("ids", ())) > 1 else {})}
