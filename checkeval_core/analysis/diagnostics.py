"""Per question over the compared runs, what the Analysis page's *Question diagnostics* show:
yes-rate, invalid rate, discrimination (its answers against the dimension's human score),
agreement across judges and with people, stability under rewording and bias towards length,
with the evidence behind each and flags raised only from enough groups; and the items behind
one bar of the correlation chart.

Reads the compared runs' answers and their tasks' rows only: the dataset's human scores
(:func:`checkeval_core.analysis.frames.human_frame`) and people's labels
(:func:`checkeval_core.people.people_labels`) of those tasks. The sentences saying why a
column is blank are :func:`checkeval_core.analysis.notes.diagnostics_notes`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd
import sqlite_utils

from checkeval_core.analysis.bias import LENGTH_RHO, selection_length
from checkeval_core.analysis.frames import human_frame, run_frame
from checkeval_core.analysis.reliability import DEFAULT_MAX_FLIP, selection_reliability
from checkeval_core.people import people_labels
from checkeval_core.runs.score_math import answer_value
from checkeval_core.stats.bootstrap import MIN_GROUPS, enough_groups, minimum
from checkeval_core.stats.correlation import corr
from checkeval_core.stats.values import isnan
from checkeval_core.store import rows

#: A question is flagged only from answers on at least this many groups (documents, contexts,
#: queries). On fewer, "never varies" or "anti-correlates" describes those few documents, not
#: the question: SummEval's first document alone gives 19 answers per question and once
#: flagged half of a good checklist. The signs seen on fewer groups are still listed
#: (``weak_signs``), unflagged. The floor's small-sample rule
#: (:data:`~checkeval_core.stats.bootstrap.MIN_GROUPS`), the same for every flag in the app.
MIN_FLAG_GROUPS = MIN_GROUPS  # for readers and tests; code reads stats.bootstrap.minimum()
#: A question is flagged "unstable" when its flip rate — the share of items whose verdict
#: differs between selected runs that differ only in the prompt's wording (``phrasing``) — is
#: above this: ``checkeval reliability``'s threshold for "unreliable"
#: (:data:`~checkeval_core.analysis.reliability.DEFAULT_MAX_FLIP`, 0.10), so that the page and
#: the command agree. Raised from ≥ :data:`MIN_FLAG_GROUPS` groups of the compared items.
UNSTABLE_FLIP = DEFAULT_MAX_FLIP
#: A question is flagged "follows length" when the Spearman ρ of its answers with the output's
#: length in words is at least this in absolute value and its 95% interval excludes 0:
#: ``checkeval bias``'s threshold (:data:`~checkeval_core.analysis.bias.LENGTH_RHO`, 0.3, a
#: moderate correlation). Raised from ≥ :data:`MIN_FLAG_GROUPS` groups of the correlated items.
FOLLOWS_LENGTH_RHO = LENGTH_RHO


def question_diagnostics(db: sqlite_utils.Database, run_ids: list[int],
                         reliability: dict[str, Any] | None = None,
                         item_pks: set[int] | None = None) -> list[dict[str, Any]]:
    """Per question over the runs: yes-rate, invalid rate, discrimination (Spearman of its
    answer values with the dimension's human score), agreement across judges (share of items
    where all runs agree), agreement with people's labels (:func:`checkeval_core.people.
    people_labels`: the settled answer, else the majority; an unsettled tie is no label); the
    evidence (``n`` answers,
    ``n_items``, ``n_groups``) and flags — raised only from ≥ :data:`MIN_FLAG_GROUPS` groups.

    Beside them, the question's stability under rewording and its bias towards length:
    ``flip_rate``, ``p_yes_sd`` and ``flip_n`` (counted items) from the reliability set among
    the runs (``reliability``: :func:`~checkeval_core.analysis.reliability.selection_reliability`
    of the runs, computed when not given), ``length_r`` and ``length_n`` (items) from
    :func:`~checkeval_core.analysis.bias.selection_length`; a blank (NaN) one has its reason
    in ``flip_reason`` / ``length_reason``. Flags "unstable" (flip rate >
    :data:`UNSTABLE_FLIP`) and "follows length" (|ρ| ≥ :data:`FOLLOWS_LENGTH_RHO`, interval
    excluding 0), each from ≥ :data:`MIN_FLAG_GROUPS` groups of the items behind it.
    ``item_pks``: only answers on these items (the items the compared runs share). Human
    scores and people's labels are read for the runs' tasks only."""
    if not run_ids:
        return []
    if reliability is None:
        reliability = selection_reliability(db, list(run_ids))
    length = selection_length(db, list(run_ids), FOLLOWS_LENGTH_RHO, item_pks)
    marks = ",".join("?" * len(run_ids))
    ans = rows(db, f"SELECT a.run_id, a.item_id, a.question_id, a.dimension, a.verdict, a.p_yes, "
                   f"q.text, q.status, i.group_id FROM answer a JOIN question q ON q.id = "
                   f"a.question_id JOIN item i ON i.id = a.item_id WHERE a.run_id IN ({marks}) "
                   f"AND a.question_id != 0 AND a.unit = ''", run_ids)
    if item_pks is not None:
        ans = [a for a in ans if a["item_id"] in item_pks]
    # the runs' tasks' rows only: the dataset's human scores, people's labels (settled, else
    # the majority) of the answered items
    human: dict[tuple[int, str], float] = {}
    people: dict[tuple[int, int], str] = {}
    for (tid,) in db.execute(f"SELECT DISTINCT task_id FROM run WHERE id IN ({marks})", run_ids):
        h = human_frame(db, int(tid))
        human.update(zip(zip(h["item_pk"].tolist(), h["dimension"].tolist()),
                         h["human"].tolist()))
        people.update(people_labels(db, int(tid), {a["item_id"] for a in ans}))
    by_q: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for a in ans:
        by_q[a["question_id"]].append(a)
    out = []
    for qid, lst in by_q.items():
        valid = [a for a in lst if a["verdict"] != "invalid"]
        yes_rate = np.mean([a["verdict"] == "yes" for a in valid]) if valid else math.nan
        xs, ys = [], []
        for a in valid:
            h = human.get((a["item_id"], a["dimension"]))
            if h is not None:
                xs.append(answer_value(a["verdict"], a["p_yes"]))
                ys.append(h)
        disc = corr(xs, ys, "spearman")
        per_item: dict[int, set[str]] = defaultdict(set)
        for a in valid:
            per_item[a["item_id"]].add(a["verdict"])
        multi = {i: v for i, v in per_item.items()
                 if sum(1 for a in valid if a["item_id"] == i) >= 2}
        judge_agree = np.mean([len(v) == 1 for v in multi.values()]) if multi else math.nan
        hum = [(a["verdict"], people[(a["item_id"], qid)]) for a in valid
               if (a["item_id"], qid) in people]
        human_agree = np.mean([x == y for x, y in hum]) if hum else math.nan
        n_groups = len({a["group_id"] for a in lst})
        signs = []  # (sign, groups behind it)
        if valid and len({a["verdict"] for a in valid}) == 1:
            signs.append(("never varies", n_groups))
        if not math.isnan(disc) and disc < -0.1:
            signs.append(("anti-correlates with humans", n_groups))
        if not math.isnan(judge_agree) and judge_agree < 0.6:
            signs.append(("judges disagree", n_groups))
        rel = _reliability_cells(reliability, qid)
        if not isnan(rel["flip_rate"]) and rel["flip_rate"] > UNSTABLE_FLIP:
            signs.append(("unstable", rel.pop("groups")))
        rel.pop("groups", None)
        le = length.get(qid) or {"rho": None, "n": 0, "flagged": False,
                                 "reason": "no item has a Yes/No answer"}
        if le["flagged"]:
            signs.append(("follows length", le["n_groups"]))
        weak_groups = sorted({g for _, g in signs if not enough_groups(g)})
        out.append({"question_id": qid, "dimension": lst[0]["dimension"], "question":
                    lst[0]["text"], "status": lst[0]["status"], "n": len(lst),
                    "n_items": len({a["item_id"] for a in lst}), "n_groups": n_groups,
                    "yes_rate": float(yes_rate),
                    "invalid_rate": 1 - len(valid) / len(lst), "discrimination": disc,
                    "judge_agreement": float(judge_agree), "human_agreement": float(human_agree),
                    **rel, "length_r": math.nan if le["rho"] is None else le["rho"],
                    "length_n": le["n"], "length_reason": le["reason"] if le["rho"] is None
                    else None,
                    "flags": [s for s, g in signs if enough_groups(g)],
                    "weak_signs": [s for s, g in signs if not enough_groups(g)],
                    "flag_note": None if not weak_groups else
                    f"not flagged: answers on {' / '.join(map(str, weak_groups))} group(s), "
                    f"fewer than the {minimum()} a flag needs"})
    return sorted(out, key=lambda d: (d["dimension"], d["question_id"]))


def _reliability_cells(rel: dict[str, Any], qid: int) -> dict[str, Any]:
    """A question's ``flip_rate``, ``p_yes_sd``, ``flip_n``, ``flip_reason`` and the
    ``groups`` of its counted items, from a ``selection_reliability`` result."""
    c = rel["columns"].get(qid)
    if c is None:
        why = rel["reason"] or "the question is not in the compared runs' checklist version"
        return {"flip_rate": math.nan, "p_yes_sd": math.nan, "flip_n": None,
                "flip_reason": why, "groups": 0}
    return {"flip_rate": math.nan if c["flip_rate"] is None else c["flip_rate"],
            "p_yes_sd": math.nan if c["p_yes_sd"] is None else c["p_yes_sd"],
            "flip_n": c["n_items"], "groups": c["n_groups"],
            "flip_reason": c["reason"] if c["flip_rate"] is None else None}


def items_behind(db: sqlite_utils.Database, run_id: int, dimension: str,
                 aggregation: str | None = None,
                 only: list[int] | None = None) -> pd.DataFrame:
    """The items behind one bar (run × dimension) with a human score, largest rank
    disagreement (|percentile rank of judge − of human|) first; ``only``: the shared items
    the bar was computed on (``coverage["shared_item_pks"]``), when runs were compared."""
    df, _ = run_frame(db, run_id, aggregation)
    if only is not None:
        df = df[df["item_pk"].isin(only)]
    part = df[df["dimension"] == dimension].dropna(subset=["human"]).copy()
    part["gap"] = (part["metric"].rank(pct=True) - part["human"].rank(pct=True)).abs()
    return part.sort_values("gap", ascending=False)
