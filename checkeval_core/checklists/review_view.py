"""What the Checklist review page shows, built from the questions as plain data.

The page reads widgets and renders; the choices behind what it renders — which statuses the
filter opens on, which questions a filter keeps, which table columns carry something, the
near-duplicate pairs, the agreement and diff summaries and the messages after an action —
live here so they are tested without Streamlit and stay the same for any other face.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
import sqlite_utils

from checkeval_core.checklists import instance as inst
from checkeval_core.checklists.evidence import evidence_text
from checkeval_core.checklists.filtering import is_flagged, similar_pairs

#: The statuses the review filter offers; "flagged" is a person's question the filter would remove.
STATUSES = ["proposed", "flagged", "kept", "filtered", "rejected"]
#: Columns of the review table that stay even when empty for every shown question.
ALWAYS_SHOWN = ("id", "status", "question")
#: The message after a decision on ``n`` questions.
DECISION_FLASH = {"keep": "Kept {n} question(s)", "reject": "Rejected {n} question(s)",
                  "edit": "Saved the edit as a new question"}


def review_filters(qs: list[dict[str, Any]]) -> dict[str, Any]:
    """The filter's choices: the flagged question ids (with the warning they call for, else
    None), the statuses it opens on (pending work if any, else the kept questions; flagged
    ones too when there are some) and the origins, dimensions and sub-dimensions present."""
    flagged = {q["id"] for q in qs if is_flagged(q)}
    pending = any(q["status"] in ("proposed", "filtered") for q in qs)
    warning = (f"{len(flagged)} question(s) a person wrote are flagged: the filter would remove "
               "them but leaves that to you (status unchanged). Keep or reject them below."
               if flagged else None)
    return {"flagged": flagged, "warning": warning,
            "statuses": (["proposed", "filtered"] if pending else ["kept"])
            + (["flagged"] if flagged else []),
            "origins": sorted({q["origin"] for q in qs}),
            "dimensions": sorted({q["dimension"] or "" for q in qs}),
            "sub_dimensions": sorted({q["sub_dimension"] or "" for q in qs})}


def shown_questions(qs: list[dict[str, Any]], flagged: set[int], statuses: Iterable[str] = (),
                    origins: Iterable[str] = (), dimensions: Iterable[str] = (),
                    sub_dimensions: Iterable[str] = (),
                    just_decided: Iterable[int] = ()) -> list[dict[str, Any]]:
    """The questions that pass the filter; an empty choice lets everything through, and
    "flagged" lets the flagged questions through whatever their status. ``just_decided``
    (the questions a person decided since choosing the filter) pass the status filter: a kept
    question stays in the list with its new status instead of vanishing under the click."""
    statuses, origins = list(statuses), list(origins)
    dimensions, sub_dimensions = list(dimensions), list(sub_dimensions)
    recent = set(just_decided)
    return [q for q in qs
            if (not statuses or q["status"] in statuses or q["id"] in recent
                or ("flagged" in statuses and q["id"] in flagged))
            and (not origins or q["origin"] in origins)
            and (not dimensions or q["dimension"] in dimensions)
            and (not sub_dimensions or q["sub_dimension"] in sub_dimensions)]


def _filled(v: Any) -> bool:
    return v is not None and v == v and str(v) != ""


def review_table(shown: list[dict[str, Any]], flagged: set[int],
                 evidence: dict[int, dict[str, Any]] | None = None,
                 provenance: dict[int, dict[str, Any]] | None = None) -> pd.DataFrame:
    """One row per shown question (a flagged one's status carries ⚑), with its latest
    ``evidence`` on dev items (:func:`checkeval_core.checklists.evidence.latest_evidence`)
    beside its text and, for a question written from examples, its ``provenance``
    (:func:`checkeval_core.checklists.editing.provenance_of`); a column empty for every row is
    left out so it takes no width, except id, status and question."""
    evidence, provenance = evidence or {}, provenance or {}
    table = pd.DataFrame([{
        "id": q["id"], "status": q["status"] + (" ⚑" if q["id"] in flagged else ""),
        "dimension": q["dimension"], "sub-dimension": q["sub_dimension"], "question": q["text"],
        "evidence on dev items": evidence_text(evidence.get(q["id"])),
        "provenance": provenance_text(provenance.get(q["id"])),
        "origin": ", ".join(q["origins"]), "parent": q["parent_id"],
        "flags": ", ".join(q["flags"]), "filter": q["filter_verdict"],
        "criterion": q["filter_criterion"], "filter reason": q["filter_reason"],
        "reason": q["reason"], "item": q["item_id"], "query": q["group_id"]} for q in shown])
    keep = set(ALWAYS_SHOWN) | {c for c in table.columns if table[c].map(_filled).any()}
    return table[[c for c in table.columns if c in keep]]


def provenance_text(prov: dict[str, Any] | None) -> str:
    """What a question grounded in examples was written from, in words ('' for others)."""
    p = prov or {}
    if p.get("pairs"):
        return "; ".join(f"{x['better_item']} (people {x['better_score']:g}) over "
                         f"{x['worse_item']} ({x['worse_score']:g}) on {x['group']}"
                         for x in p["pairs"])
    if p.get("notes"):
        return "; ".join(f"{n['kind']} on {n['where']}: {n['text']}" for n in p["notes"])
    return ""


def question_labels(shown: list[dict[str, Any]]) -> dict[int, str]:
    """``{id: "#id [status] text"}`` for the selection box."""
    return {q["id"]: f"#{q['id']} [{q['status']}] {q['text']}" for q in shown}


_ACTIONS = {"keep": "kept", "reject": "rejected", "edit": "edited",
            "send_to_review": "sent back to review", "undo_send_to_review": "sending undone",
            "filter": "filter", "settle": "settled an answer", "create_job": "created a job",
            "proposal_drop": "proposed for dropping", "proposal_new": "added by a proposal",
            "propose_rewording": "rewording proposed (Align)"}


def history_rows(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The review history of a question (:func:`checkeval_core.checklists.review.
    question_history`) as table rows, oldest first: when, who (role), what, on which question,
    why, and what it led to."""
    out = []
    for e in events:
        d = e["detail"] or {}
        note = (f"into #{d['new_question']}: {d.get('new_text', '')}" if e["action"] == "edit"
                else f"{d.get('from', '')} → {d.get('to', '')}" if e["action"] == "filter"
                else f"was {d['was']}" if "was" in d
                else f"back to {d['restored']}" if "restored" in d else "")
        if d.get("backfilled"):
            note = (note + "; " if note else "") + "recorded before the history was kept"
        out.append({"when": str(e["when"])[:19].replace("T", " "),
                    "who": e["actor"] or "—", "role": e["role"],
                    "what": _ACTIONS.get(e["action"], e["action"]),
                    "question": f"#{e['question_id']}", "reason": e["reason"], "note": note})
    return out


def near_duplicates(qs: list[dict[str, Any]], threshold: float = 0.75,
                    limit: int = 50) -> list[dict[str, Any]]:
    """Pairs of shared (not per-item, not per-query) proposed or kept questions whose texts
    are lexically similar at or above ``threshold``, most similar first, at most ``limit``."""
    pool = [q for q in qs if q["status"] in ("proposed", "kept") and q["item_id"] is None
            and not q["group_id"]]
    pairs = similar_pairs([q["text"] for q in pool], threshold=threshold)[:limit]
    return [{"a": pool[i]["id"], "question a": pool[i]["text"], "b": pool[j]["id"],
             "question b": pool[j]["text"], "similarity": s} for i, j, s in pairs]


def agreement_line(ag: dict[str, Any]) -> str | None:
    """The one-line summary of :func:`checkeval_core.checklists.review.review_agreement`, or
    None while no question has been decided by two reviewers."""
    if not ag["n_questions"]:
        return None
    return (f"{len(ag['annotators'])} reviewers, {ag['n_questions']} questions reviewed by "
            f"two or more: Fleiss κ = {ag['fleiss_kappa']:.3f} ({ag['fleiss_units']} "
            f"questions), Krippendorff α = {ag['krippendorff_alpha']:.3f} (NaN = no "
            "variation to measure)")


def diff_view(d: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """A version diff as a count line and one row per change (added, removed, edited)."""
    line = f"{len(d['added'])} added, {len(d['removed'])} removed, {len(d['edited'])} edited"
    rows = ([{"change": "added", "dimension": q["dimension"], "question": q["text"]}
             for q in d["added"]]
            + [{"change": "removed", "dimension": q["dimension"], "question": q["text"]}
               for q in d["removed"]]
            + [{"change": "edited", "dimension": e["dimension"],
                "question": f"{e['before']} → {e['after']}"} for e in d["edited"]])
    return line, rows


def versions_table(vs: list[dict[str, Any]]) -> pd.DataFrame:
    """The frozen versions without their internal row id."""
    return pd.DataFrame(vs).drop(columns=["id"])


def freeze_message(v: dict[str, Any], kind: str = "global") -> str:
    """What freezing did (from :func:`checkeval_core.checklists.versions.freeze`)."""
    if kind == "instance":
        return f"Instance version {v['version']}: {v['n_questions']} questions"
    return (f"Version {v['version']}: {v['n_questions']} questions, hash {v['hash'][:12]}"
            + ("" if v["new"] else " (identical to an existing one)"))


#: Where per-query checklists come from: a judge, an uploaded JSONL file, or the paper's
#: "Fixed" six general questions.
PER_QUERY_SOURCES = ("generate", "file", "fixed")


def per_query_checklists(db: sqlite_utils.Database, task: str, source: str, *,
                         judge: str = "", mode: str | None = None, fresh: bool = False,
                         include_reference: bool = True, data: bytes | None = None,
                         filename: str | None = None) -> dict[str, Any]:
    """Give the task's queries their checklists from ``source`` (:data:`PER_QUERY_SOURCES`);
    returns ``{"message": what was done, "problems": [what the judge's answers lacked]}``.
    Bad input raises ``ValueError`` before anything is written."""
    if source == "generate":
        r = inst.generate_group_checklists(db, task, judge, fresh=fresh,
                                           include_reference=include_reference, mode=mode)
        return {"message": (f"{r['questions']} questions for {r['groups']} queries "
                            f"({r['skipped']} skipped; {r['from_cache']} of {r['requests']} "
                            "answers from the cache — tick *Rewrite* to ask afresh)"),
                "problems": list(r["problems"])}
    if source == "file":
        r = inst.import_group_checklists(db, task, data=data, filename=filename)
        return {"message": f"Imported {r['questions']} questions for {r['groups']} queries "
                           f"from {r['file']}", "problems": []}
    if source == "fixed":
        r = inst.import_group_checklists(db, task, path=inst.fixed_checklist_path())
        return {"message": f"Fixed checklist given to {r['groups']} queries", "problems": []}
    raise ValueError(f"source {source!r}: use one of {', '.join(PER_QUERY_SOURCES)}")
