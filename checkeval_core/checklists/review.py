"""Human review of questions: keep / reject / edit, by named annotators, with agreement.

Every decision is an ``annotation`` row (kind ``validation``: value keep / reject / edit, the
reason and the annotator; one current decision per annotator and question). The question's
status follows the latest decision. An edit creates a new question (origin ``edited``, parent
= the old one, kept) and rejects the old one with a note pointing to the new one.

A typed reason belongs to a rejection only: a keep or an edit that arrives with one is
refused, so a reason left over from an earlier rejection can never be stored on them.

The history: besides that current state, every decision is appended to ``review_event``
(who, in which role, when, what, why — :func:`record_event`), as are a question sent back to
review by an analysis, the undo of that, a filter's status change and an annotation job's
creation, a proposal's drops and new questions (:func:`to_review`); rows are only ever
inserted. :func:`question_history` reads a question's events with
those of the questions it was edited from, so reject → keep → edit shows all three and the
rejection's reason.

This module is the only writer of a question's ``status`` (a new question's first status is
set where it is created, :func:`checkeval_core.checklists.editing.add_question`).
"""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.checklists.editing import add_question, norm
from checkeval_core.stats.agreement import fleiss_from_labels, krippendorff_alpha
from checkeval_core.store import dumps, loads, now_iso, rows, task_id, transaction
from checkeval_core.team import guarded

DECISIONS = ("keep", "reject", "edit")
#: Who acts on questions and jobs: a reviewer on the review page, a coordinator of annotation
#: jobs, an analysis that sends questions back to review, the LLM filter.
EVENT_ROLES = ("reviewer", "coordinator", "analysis", "filter", "annotator")


@guarded("checklist.review", self_param="annotator")
def decide(db: sqlite_utils.Database, question_ids: list[int], annotator: str, decision: str,
           reason: str = "", new_text: str | None = None, role: str = "reviewer") -> list[int]:
    """Record ``decision`` by ``annotator`` (acting as ``role``) on each question and append
    it to the history; returns ids of new (edited) ones."""
    annotator = annotator.strip()
    if not annotator:
        raise ValueError("enter your name first: every decision records who made it")
    if decision not in DECISIONS:
        raise ValueError(f"decision {decision!r}: use keep, reject or edit")
    reason = (reason or "").strip()
    if decision == "reject" and not reason:
        raise ValueError("a rejection needs a reason")
    if decision != "reject" and reason:
        raise ValueError(f"a reason is recorded only with a rejection, not with {decision!r}: "
                         "nothing was saved")
    if decision == "edit" and (len(question_ids) != 1 or not (new_text or "").strip()):
        raise ValueError("an edit needs exactly one question and its new text")
    created = []
    now = now_iso()
    with transaction(db):
        for qid in question_ids:
            q = rows(db, "SELECT * FROM question WHERE id = ?", [qid])
            if not q:
                raise ValueError(f"no question #{qid}")
            q = q[0]
            why = reason
            if decision == "edit":
                # The same edit saved twice (double click, resubmitted form) reuses the
                # question it created the first time instead of adding a duplicate.
                same = db.execute("SELECT id FROM question WHERE parent_id = ? AND origin = "
                                  "'edited' AND text = ? ORDER BY id LIMIT 1",
                                  [qid, norm(new_text or "")]).fetchone()
                new_id = same[0] if same else add_question(
                    db, q["task_id"], q["dimension_id"], q["sub_dimension_id"],
                    norm(new_text or ""), origin="edited", status="kept", parent_id=qid,
                    author=annotator, item_id=q["item_id"], group_id=q.get("group_id") or "")
                created.append(new_id)
                why = f"(edited into #{new_id})"
            db.execute(
                "INSERT INTO annotation (task_id, annotator, kind, item_id, question_id, value, "
                "reason, created_at, updated_at) VALUES (?, ?, 'validation', NULL, ?, ?, ?, ?, ?) "
                "ON CONFLICT DO UPDATE SET value = excluded.value, reason = excluded.reason, "
                "updated_at = excluded.updated_at",
                [q["task_id"], annotator, qid, decision, why, now, now])
            record_event(db, q["task_id"], role, decision, actor=annotator, reason=reason,
                         question_id=qid, now=now, detail={"new_question": created[-1],
                                                           "new_text": norm(new_text or "")}
                         if decision == "edit" else None)
            status = "kept" if decision == "keep" else "rejected"
            # a keep leaves the question's own note (a filter's or generator's reason) but not
            # the reason of the rejection it overrides
            kept_note = "" if q["status"] == "rejected" else q["reason"]
            db.execute("UPDATE question SET status = ?, reason = ? WHERE id = ?",
                       [status, why if decision != "keep" else kept_note, qid])
    return created


def record_event(db: sqlite_utils.Database, task_id_: int, role: str, action: str, *,
                 actor: str = "", reason: str = "", question_id: int | None = None,
                 job_id: int | None = None, detail: dict[str, Any] | None = None,
                 now: str | None = None) -> int:
    """Append one event to the review history (inside the caller's transaction, if any);
    returns its id. Nothing here updates or deletes an event."""
    if role not in EVENT_ROLES:
        raise ValueError(f"role {role!r}: use one of {', '.join(EVENT_ROLES)}")
    return db.execute(
        "INSERT INTO review_event (task_id, question_id, job_id, actor, role, action, reason, "
        "detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [task_id_, question_id, job_id, actor or "", role, action, reason or "",
         dumps(detail or {}), now or now_iso()]).lastrowid


def question_history(db: sqlite_utils.Database, question_id: int) -> list[dict[str, Any]]:
    """Every event of the question and of the questions it was edited or generated from
    (its ``parent_id`` chain), oldest first: ``{"id", "question_id", "when", "actor", "role",
    "action", "reason", "detail"}``."""
    chain, seen, qid = [], set(), question_id
    while qid is not None and qid not in seen:  # a parent cycle cannot loop
        seen.add(qid)
        chain.append(qid)
        r = db.execute("SELECT parent_id FROM question WHERE id = ?", [qid]).fetchone()
        qid = r[0] if r else None
    out = rows(db, f"SELECT id, question_id, created_at AS 'when', actor, role, action, "
                   f"reason, detail FROM review_event WHERE question_id IN "
                   f"({','.join('?' * len(chain))}) ORDER BY id", chain)
    for e in out:
        e["detail"] = loads(e["detail"], {})
    return out


def decisions(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    return rows(db, "SELECT question_id, annotator, value, reason, updated_at FROM annotation "
                    "WHERE task_id = ? AND kind = 'validation' ORDER BY updated_at",
                [task_id(db, task)])


def review_agreement(db: sqlite_utils.Database, task: str) -> dict[str, Any]:
    """Agreement of annotators on keep vs reject (an edit counts as reject of the old text)."""
    by_q: dict[int, dict[str, str]] = {}
    for d in decisions(db, task):
        by_q.setdefault(d["question_id"], {})[d["annotator"]] = \
            "keep" if d["value"] == "keep" else "reject"
    annotators = sorted({a for v in by_q.values() for a in v})
    multi = {q: v for q, v in by_q.items() if len(v) >= 2}
    per_question = [{"question_id": q, "n_annotators": len(v),
                     "keep": sum(x == "keep" for x in v.values()),
                     "reject": sum(x == "reject" for x in v.values()),
                     "unanimous": len(set(v.values())) == 1} for q, v in multi.items()]
    fk, n_used = fleiss_from_labels([list(v.values()) for v in multi.values()])
    code = {"keep": 1.0, "reject": 0.0}
    matrix = [[code.get(by_q[q].get(a), float("nan")) for q in multi] for a in annotators]
    alpha = krippendorff_alpha(matrix) if multi else float("nan")
    return {"annotators": annotators, "n_questions": len(multi), "fleiss_kappa": fk,
            "fleiss_units": n_used, "krippendorff_alpha": alpha, "per_question": per_question}


# -- questions sent back to review by an analysis (e.g. question diagnostics) -------------------
#: Only questions in use can be sent back: a rejected or filtered question is already out of
#: the checklist, and moving it to ``proposed`` would bring it back for review unasked.
SENDABLE = ("kept",)


@guarded("checklist.edit", self_param="actor")
def send_to_review(db: sqlite_utils.Database, question_ids: list[int],
                   reason: str, actor: str = "",
                   reasons: dict[int, str] | None = None) -> dict[str, Any]:
    """Put questions back in the review queue (status ``proposed``, ``reason`` recorded) in one
    transaction, each with a line in its review history.

    ``reasons`` gives a question its own reason (the evidence behind its flags) instead of
    ``reason``. Returns ``{"moved": [ids], "skipped": {id: why}, "previous": [{"id",
    "status", "reason", "sent"}]}``; ``previous`` is what :func:`undo_send_to_review`
    restores. Pressing twice is harmless: a question already moved is no longer ``kept`` and
    is skipped."""
    why = f"diagnostics: {reason}"[:500]
    moved: list[int] = []
    skipped: dict[int, str] = {}
    previous: list[dict[str, Any]] = []
    with transaction(db):
        for qid in dict.fromkeys(int(q) for q in question_ids):
            q = rows(db, "SELECT id, task_id, status, reason FROM question WHERE id = ?", [qid])
            if not q:
                skipped[qid] = "no such question"
                continue
            if q[0]["status"] not in SENDABLE:
                skipped[qid] = f"status is {q[0]['status']!r}, not kept"
                continue
            own = (f"diagnostics: {reasons[qid]}"[:500] if reasons and reasons.get(qid)
                   else why)
            previous.append({"id": qid, "status": q[0]["status"], "reason": q[0]["reason"],
                             "sent": own})
            db.execute("UPDATE question SET status = 'proposed', reason = ? WHERE id = ?",
                       [own, qid])
            record_event(db, q[0]["task_id"], "analysis", "send_to_review", actor=actor,
                         reason=own, question_id=qid, detail={"was": q[0]["status"]})
            moved.append(qid)
    return {"moved": moved, "skipped": skipped, "previous": previous, "reason": why}


@guarded("checklist.edit")
def undo_send_to_review(db: sqlite_utils.Database, sent: dict[str, Any]) -> dict[str, Any]:
    """Restore what :func:`send_to_review` changed (its returned dict), in one transaction.

    A question a reviewer decided on since (no longer ``proposed`` with the sent reason) keeps
    that decision: it is listed under ``kept_decision`` instead of being overwritten. Pressing
    twice is harmless (the second time everything is already restored)."""
    restored: list[int] = []
    kept_decision: list[int] = []
    with transaction(db):
        for p in sent.get("previous", []):
            n = db.execute("UPDATE question SET status = ?, reason = ? WHERE id = ? AND "
                           "status = 'proposed' AND reason IS ?",
                           [p["status"], p["reason"], p["id"],
                            p.get("sent", sent.get("reason"))]).rowcount
            if n:
                restored.append(p["id"])
                tid = db.execute("SELECT task_id FROM question WHERE id = ?",
                                 [p["id"]]).fetchone()[0]
                record_event(db, tid, "analysis", "undo_send_to_review",
                             question_id=p["id"], detail={"restored": p["status"]})
                continue
            now = rows(db, "SELECT status, reason FROM question WHERE id = ?", [p["id"]])
            if now and (now[0]["status"], now[0]["reason"]) != (p["status"], p["reason"]):
                kept_decision.append(p["id"])
    return {"restored": restored, "kept_decision": kept_decision}


# -- a checklist proposal's review queue ---------------------------------------------------------
PREFIX = "proposal: drop — "


def _repeats_last(db: sqlite_utils.Database, qid: int, action: str, reason: str) -> bool:
    """Whether the question's latest history line is this action with this reason (a second
    press of the same button then adds no line)."""
    last = db.execute("SELECT action, reason FROM review_event WHERE question_id = ? ORDER BY "
                      "id DESC LIMIT 1", [qid]).fetchone()
    return last is not None and (last[0], last[1]) == (action, reason)


@guarded("checklist.edit", self_param="actor")
def to_review(db: sqlite_utils.Database, proposal: dict[str, Any],
              actor: str = "") -> dict[str, Any]:
    """Queue a checklist proposal (:func:`checkeval_core.analysis.proposal.propose`) for a
    person, in one transaction; nothing is applied.

    Each dropped question that is kept goes back to ``proposed`` with its evidence as the
    reason (the Checklist review page keeps or rejects it); each new question without a
    problem is added as ``proposed`` with origin ``proposal`` (and a ``proposal`` flag). Each
    appends a line to the question's review history (role ``analysis``, action
    ``proposal_drop`` / ``proposal_new``, the reason). Pressing twice adds nothing twice.
    Returns ``{"queued", "added", "skipped"}``."""
    tid = task_id(db, proposal["task"])
    queued, added, skipped = 0, [], []
    runs = list(proposal.get("runs") or [])
    with transaction(db):
        for d in proposal["dropped"]:
            why = (PREFIX + d["reason"])[:500]
            # a question asked of every query is dropped from each query's copy
            for qid in d["question"].get("ids") or [d["question"]["id"]]:
                q = db.execute("SELECT status, reason FROM question WHERE id = ? AND "
                               "task_id = ?", [qid, tid]).fetchone()
                if q is None or q[0] == "rejected":
                    skipped.append(qid)
                    continue
                if q[0] == "kept":
                    db.execute("UPDATE question SET status = 'proposed', reason = ? WHERE "
                               "id = ?", [why, qid])
                if q[0] in ("kept", "proposed") and not _repeats_last(db, qid, "proposal_drop",
                                                                      why):
                    record_event(db, tid, "analysis", "proposal_drop", actor=actor, reason=why,
                                 question_id=qid, detail={"was": q[0], "rule": d.get("rule"),
                                                          "runs": runs})
                queued += 1
        for nq in proposal.get("new_questions", {}).get("questions", []):
            if nq["problem"]:
                continue
            dim = db.execute("SELECT id FROM dimension WHERE task_id = ? AND name = ?",
                             [tid, nq["dimension"]]).fetchone()
            like = db.execute("SELECT q.id, q.sub_dimension_id FROM question q WHERE "
                              "q.task_id = ? AND q.dimension_id IS ? AND q.group_id = ? "
                              "ORDER BY q.id LIMIT 1",
                              [tid, dim[0] if dim else None, nq["group_id"]]).fetchone()
            same = db.execute("SELECT id FROM question WHERE task_id = ? AND text = ? AND "
                              "group_id = ?", [tid, norm(nq["text"]), nq["group_id"]]).fetchone()
            if same:
                continue
            src = nq["source"]
            why = (f"proposal: new — the kept questions order dev items "
                   f"#{src['better_item']} (rated better) and #{src['worse_item']} the wrong way")
            qid = add_question(db, tid, dim[0] if dim else None, like[1] if like else None,
                               nq["text"], origin="proposal", status="proposed",
                               model=nq["judge"], prompt_version=nq["prompt_version"],
                               flags=["proposal"], group_id=nq["group_id"], reason=why)
            record_event(db, tid, "analysis", "proposal_new", actor=actor, reason=why,
                         question_id=qid, detail={"better_item": src["better_item"],
                                                  "worse_item": src["worse_item"],
                                                  "judge": nq["judge"], "runs": runs})
            added.append(qid)
    return {"queued": queued, "added": added, "skipped": skipped}


# -- status changes made by the filter and by instance checklists --------------------------------
@guarded("checklist.edit")
def mark_filtered(db: sqlite_utils.Database, question: dict[str, Any], why: str,
                  judge: str) -> None:
    """The LLM filter removes ``question`` (a row with ``id``, ``task_id``, ``status``): status
    ``filtered`` with ``why``, and a line in its history (inside the caller's transaction)."""
    db.execute("UPDATE question SET status = 'filtered', reason = ? WHERE id = ?",
               [why, question["id"]])
    record_event(db, question["task_id"], "filter", "filter", actor=judge, reason=why,
                 question_id=question["id"], detail={"from": question["status"],
                                                     "to": "filtered"})


@guarded("checklist.edit")
def retire_query_questions(db: sqlite_utils.Database, tid: int, groups: list[str],
                           why: str) -> int:
    """Mark the live per-query questions of ``groups`` rejected with ``why`` (kept for history
    and old versions) when their query's checklist is regenerated or replaced; returns how
    many."""
    n = 0
    for g in groups:
        n += db.execute("UPDATE question SET status = 'rejected', reason = ? WHERE task_id = ? "
                        "AND group_id = ? AND item_id IS NULL AND status != 'rejected'",
                        [why, tid, g]).rowcount
    return n


@guarded("checklist.edit")
def restore_filtered(db: sqlite_utils.Database) -> int:
    """Every ``filtered`` question back to ``proposed`` — for a benchmark that runs the filter
    twice on the same pool in a scratch database; returns how many."""
    return db.execute("UPDATE question SET status = 'proposed' WHERE status = "
                      "'filtered'").rowcount
