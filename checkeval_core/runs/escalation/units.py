"""An escalating run's decisions as its cascade sees them: *units* (one answer, or one
human-voted pair on a pairwise task) with each judge's confidence, whether it agrees with
people, its group and its judge time (:mod:`checkeval_core.runs.escalation.cascade`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.people import answer_labels, people_pair_labels
from checkeval_core.stats import escalation as E
from checkeval_core.store import task_id
from checkeval_core.task_split import members


@dataclass
class Units:
    """A run's decisions as the cascade sees them (see the analysis module)."""

    kind: str  # "answer" | "pair"
    keys: list[Any] = field(default_factory=list)  # answer key or (item_a, item_b)
    conf_a: list[float] = field(default_factory=list)
    conf_b: list[float] = field(default_factory=list)  # NaN where B has not answered
    agree_a: list[float] = field(default_factory=list)  # 1/0, NaN without a human label
    agree_b: list[float] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    answers: list[list[tuple[int, int, str]]] = field(default_factory=list)  # answer keys
    ms_a: list[float] = field(default_factory=list)  # judge time of the unit's answers
    ms_b: list[float] = field(default_factory=list)  # NaN where B has not answered
    label_source: str = ""

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(getattr(self, k), float) for k in
                ("conf_a", "conf_b", "agree_a", "agree_b", "ms_a", "ms_b")}


def answer_rows(db: sqlite_utils.Database, run_id: int, b_spec: str) -> list[dict[str, Any]]:
    out = []
    for r in db.execute("SELECT a.item_id, a.question_id, a.unit, a.dimension, a.verdict, "
                        "a.p_yes, a.judge, a.a_verdict, a.a_p_yes, i.group_id, a.latency_ms, "
                        "a.a_latency_ms FROM answer a JOIN item i ON i.id = a.item_id "
                        "WHERE a.run_id = ?", [run_id]):
        by_b = bool(b_spec) and r[6] == b_spec
        out.append({"key": (int(r[0]), int(r[1]), str(r[2])), "dimension": r[3],
                    "group": str(r[9]), "by_b": by_b,
                    "a_verdict": r[7] if by_b else r[4], "a_p_yes": r[8] if by_b else r[5],
                    "b_verdict": r[4] if by_b else None, "b_p_yes": r[5] if by_b else None,
                    "a_ms": (r[11] if by_b else r[10]) or 0.0, "b_ms": (r[10] if by_b else 0.0)})
    return out


def _item_score(rows_: list[dict[str, Any]], side: str) -> float:
    """Mean p(Yes) (a verdict counts 1/0 without one; invalid answers left out); NaN if none."""
    vals = []
    for r in rows_:
        p, v = r[f"{side}_p_yes"], r[f"{side}_verdict"]
        if p is not None:
            vals.append(float(p))
        elif v in ("yes", "no"):
            vals.append(1.0 if v == "yes" else 0.0)
    return float(np.mean(vals)) if vals else float("nan")


def people_label(by_q: dict, by_dim: dict, row: dict[str, Any]) -> str | None:
    """People's label of an answer row: the annotators' on its question, else the experts'
    direction on its dimension (:func:`checkeval_core.people.answer_labels`)."""
    item, qid, _ = row["key"]
    label = by_q.get((item, qid)) if qid else None
    return label if label is not None else by_dim.get((item, row["dimension"]))


def run_units(db: sqlite_utils.Database, run: dict[str, Any],
              conf_fit: dict[str, Any] | None = None) -> Units:
    """The run's units with A's (and, where asked, B's) confidence and agreement with the
    people (NaN without a label). A's confidence goes through ``conf_fit`` (a Platt fit), else
    through the calibration the run stored for it (:func:`confidence_calibration`), if any."""
    if conf_fit is None:
        stored = (run["params"].get("escalation") or {}).get("confidence_calibration") or {}
        conf_fit = stored.get("fit")
    b_spec = str(run["params"].get("escalate_to") or "")
    rows_ = answer_rows(db, run["id"], b_spec)
    tid = task_id(db, run["task"])
    pks = list(run["item_ids"])
    pairs = people_pair_labels(db, tid, pks)
    has_votes = db.execute("SELECT 1 FROM preference WHERE task_id = ? LIMIT 1",
                           [tid]).fetchone() is not None
    if has_votes:
        u = Units("pair", label_source="pairwise votes (majority per pair)")
        by_item: dict[int, list[dict[str, Any]]] = {}
        for r in rows_:
            by_item.setdefault(r["key"][0], []).append(r)
        for (a, b), (winner, group) in sorted(pairs.items()):
            ra, rb = by_item.get(a, []), by_item.get(b, [])
            u.keys.append((a, b))
            u.groups.append(group)
            u.answers.append([r["key"] for r in ra + rb])
            u.ms_a.append(sum(r["a_ms"] for r in ra + rb))
            u.ms_b.append(sum(r["b_ms"] for r in ra + rb) if ra and rb and all(
                r["by_b"] for r in ra + rb) else math.nan)
            for side in ("a", "b"):
                done = side == "a" or (ra and rb and all(r["by_b"] for r in ra + rb))
                sa = _item_score(ra, side) if done else float("nan")
                sb = _item_score(rb, side) if done else float("nan")
                gap = sa - sb
                conf = abs(gap) if not math.isnan(gap) else (0.0 if side == "a" else math.nan)
                agree = (float((gap > 0) == (winner == "a")) if gap != 0 else 0.0) \
                    if not math.isnan(gap) else math.nan
                getattr(u, f"conf_{side}").append(conf)
                getattr(u, f"agree_{side}").append(agree)
        return u
    by_q, by_dim, source = answer_labels(db, tid, pks)
    u = Units("answer", label_source=source)
    for r in rows_:
        label = people_label(by_q, by_dim, r)
        u.keys.append(r["key"])
        u.groups.append(r["group"])
        u.answers.append([r["key"]])
        u.ms_a.append(r["a_ms"])
        u.ms_b.append(r["b_ms"] if r["by_b"] else math.nan)
        u.conf_a.append(E.confidence(r["a_p_yes"], r["a_verdict"], conf_fit))
        u.conf_b.append(E.confidence(r["b_p_yes"]) if r["by_b"] else math.nan)
        for side in ("a", "b"):
            v = r[f"{side}_verdict"]
            ok = math.nan if label is None or (side == "b" and not r["by_b"]) else \
                float(v == label)
            getattr(u, f"agree_{side}").append(ok)
    return u


def unit_parts(db: sqlite_utils.Database, run: dict[str, Any], groups: list[str]) -> np.ndarray:
    """Each unit's part ("dev" / "heldout" / "") from the task's split."""
    m = members(db, run["task"])
    if m is None:
        return np.array([""] * len(groups), dtype=object)
    return np.array([m[0].get(g, "") for g in groups], dtype=object)
