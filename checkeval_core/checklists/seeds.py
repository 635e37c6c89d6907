"""Seed questions as a person edits them: the CheckEval authors' preset seeds, saving the
seeds of one sub-dimension in one step, and each seed's fate (status, the filter's flag, the
question an edit replaced it with).

The Dimensions page and the CLI (``checklist preset``) both call these, so a preset is added
and a set of seed edits is saved the same way everywhere: all of it or nothing.
"""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils

from checkeval_core.checklists.editing import (
    InUse,
    add_seed,
    delete_question,
    norm,
    questions,
    set_question_text,
)
from checkeval_core.checklists.filtering import is_flagged
from checkeval_core.checklists.io import import_checklist
from checkeval_core.config import data_dir
from checkeval_core.store import rows, transaction

#: preset name -> file under data/checklists (the seed questions of the CheckEval paper)
PRESETS = {"SummEval": "summeval.json", "Topical-Chat": "topical_chat.json"}


def preset_seeds(preset: str) -> dict[str, Any]:
    """The preset's dimensions, definitions and seed questions only (no generated ones)."""
    key = {k.lower(): k for k in PRESETS}.get(preset.strip().lower())
    if key is None:
        raise ValueError(f"preset {preset!r}: use one of {', '.join(PRESETS)}")
    return seeds_only(json.loads((data_dir() / "checklists" / PRESETS[key]).read_text(
        encoding="utf-8")))


def seeds_only(checklist: dict[str, Any]) -> dict[str, Any]:
    """A checklist in the CheckEval authors' JSON layout cut down to its dimensions,
    definitions and seed questions (the diversified and elaborated ones left out)."""
    return {d: {"definition": v["definition"], "sub_dimensions": {
        s: {"seed": q["seed"]} for s, q in v["sub_dimensions"].items()}}
        for d, v in checklist.items()}


def add_preset_seeds(db: sqlite_utils.Database, task: str, preset: str,
                     author: str = "preset") -> dict[str, Any]:
    """Add a preset's seed questions to ``task`` (atomic; a seed already there is not added
    twice). Returns :func:`~checkeval_core.checklists.io.import_checklist`'s counts."""
    data = json.dumps(preset_seeds(preset)).encode("utf-8")
    return import_checklist(db, task, f"{preset}.json", author=author, data=data)


def save_seeds(db: sqlite_utils.Database, sub_id: int, texts: dict[int, str],
               new_seed: str = "", author: str = "") -> dict[str, Any]:
    """Save a sub-dimension's seed questions as edited: ``texts`` maps a seed's id to its new
    text (empty = delete it), ``new_seed`` is added unless already there.

    All or nothing: when any deletion or rewording is refused because people answered or
    reviewed the question, :class:`~checkeval_core.checklists.editing.InUse` names every refusal and nothing
    is changed. Returns ``{"changed", "deleted", "added"}`` (``added``: the new seed was new).
    """
    sub = rows(db, "SELECT s.id, s.dimension_id, d.task_id FROM sub_dimension s JOIN dimension "
                   "d ON d.id = s.dimension_id WHERE s.id = ?", [sub_id])
    if not sub:
        raise ValueError(f"no sub-dimension #{sub_id}")
    current = {r["id"]: r["text"] for r in rows(
        db, "SELECT id, text FROM question WHERE sub_dimension_id = ?", [sub_id])}
    problems: list[str] = []
    changed = deleted = 0
    added = False
    with transaction(db):
        for qid, text in texts.items():
            if qid not in current:
                raise ValueError(f"question #{qid} is not in this sub-dimension")
            text = norm(text)
            try:
                if not text:
                    delete_question(db, qid)
                    deleted += 1
                elif text != current[qid]:
                    set_question_text(db, qid, text)
                    changed += 1
            except InUse as e:
                problems.append(str(e))
        if problems:
            raise InUse("\n".join(problems))
        if norm(new_seed):
            added = add_seed(db, sub[0]["task_id"], sub[0]["dimension_id"], sub_id, new_seed,
                             author=author)[1]
    return {"changed": changed, "deleted": deleted, "added": added}


def seed_questions(db: sqlite_utils.Database, task: str,
                   dimension: str) -> dict[int, list[dict[str, Any]]]:
    """The seeds of each sub-dimension of ``dimension`` (by sub-dimension id), each with
    ``note``: its status, the filter's flag, and the question an edit replaced it with."""
    qs = questions(db, task, dimension=dimension)
    by_id = {q["id"]: q for q in qs}
    successors: dict[int, list[dict[str, Any]]] = {}
    for q in qs:
        if q["origin"] == "edited" and q["parent_id"] in by_id:
            successors.setdefault(q["parent_id"], []).append(q)
    out: dict[int, list[dict[str, Any]]] = {}
    for q in qs:
        if "seed" not in q["origins"]:
            continue
        parts = [q["status"]]
        if is_flagged(q):
            parts.append(f"the filter would remove it ({q['filter_criterion']}: "
                         f"{q['filter_reason']}) — your call on Checklist review")
        elif q["status"] == "filtered":
            parts.append(f"by the filter: {q['filter_reason']}")
        for s in successors.get(q["id"], []):
            parts.append(f"edited into #{s['id']} ({s['status']}): {s['text']}")
        out.setdefault(q["sub_dimension_id"], []).append(
            {**q, "successors": successors.get(q["id"], []), "note": " · ".join(parts)})
    return out
