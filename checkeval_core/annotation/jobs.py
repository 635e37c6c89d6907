"""Annotation jobs: sample items, assign each to exactly k annotators with balanced loads,
save answers as they are given (only by the people given the item, and never once they
submitted it: the judges' answers may have been shown then), submit/skip items, and settle
disagreements.

Assignment: items are dealt round-robin over the annotators (k consecutive annotators per
item, starting where the previous item stopped), so every item gets exactly k distinct
annotators and loads differ by at most one. Sampling: ``random`` (seeded) or ``stratified``
by a human-score dimension (equal numbers from each score quartile, as CheckEval samples
across quality levels).

Who: a job records its coordinator (``annotation_job.coordinator``), and its creation and every
settled answer are appended to the review history
(:func:`checkeval_core.checklists.review.record_event`) — a settled answer changed later
keeps the earlier one there.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.checklists.instance import question_applies, questions_of_item
from checkeval_core.checklists.review import record_event
from checkeval_core.checklists.versions import get_version
from checkeval_core.people import SUBMITTED
from checkeval_core.runs.registry import per_question_methods
from checkeval_core.store import dumps, loads, now_iso, rows, task_id, transaction
from checkeval_core.tasks import items
from checkeval_core.team import guarded


def sample_items(db: sqlite_utils.Database, task: str, n: int | None, strategy: str = "random",
                 dimension: str | None = None, seed: int = 0) -> list[int]:
    its = items(db, task)
    if n is None or n >= len(its):
        return [i["id"] for i in its]
    rng = random.Random(seed)
    if strategy == "stratified" and dimension:
        scored = [i for i in its if dimension in i["scores"]]
        if not scored:
            raise ValueError(f"no human scores for dimension {dimension!r} to stratify on")
        qs = np.quantile([i["scores"][dimension] for i in scored], [0.25, 0.5, 0.75])
        bins: dict[int, list[int]] = defaultdict(list)
        for i in scored:
            bins[int(np.searchsorted(qs, i["scores"][dimension], side="right"))].append(i["id"])
        for b in bins.values():
            rng.shuffle(b)
        out: list[int] = []
        while len(out) < n and any(bins.values()):
            for k in sorted(bins):
                if bins[k] and len(out) < n:
                    out.append(bins[k].pop())
        return out
    return rng.sample([i["id"] for i in its], n)


def assign(item_ids: list[int], annotators: list[str], k: int) -> list[tuple[int, str]]:
    """Every item to exactly ``k`` distinct annotators; loads balanced (max − min ≤ 1)."""
    if k < 1 or k > len(annotators):
        raise ValueError(f"overlap {k}: must be between 1 and the number of annotators "
                         f"({len(annotators)})")
    out, pos = [], 0
    for it in item_ids:
        for j in range(k):
            out.append((it, annotators[(pos + j) % len(annotators)]))
        pos = (pos + k) % len(annotators)
    return out


def create_job(db: sqlite_utils.Database, task: str, annotators: list[str], overlap: int,
               n_items: int | None = None, version: int | str = "latest",
               strategy: str = "random", dimension: str | None = None, seed: int = 0,
               name: str = "", coordinator: str = "") -> int:
    """Create a job; an identical one (same task, version, name and settings) is reused."""
    return create_job_once(db, task, annotators, overlap, n_items, version, strategy,
                           dimension, seed, name, coordinator)[0]


@guarded("job.manage", self_param="coordinator")
def create_job_once(db: sqlite_utils.Database, task: str, annotators: list[str], overlap: int,
                    n_items: int | None = None, version: int | str = "latest",
                    strategy: str = "random", dimension: str | None = None, seed: int = 0,
                    name: str = "", coordinator: str = "",
                    item_ids: list[int] | None = None) -> tuple[int, bool]:
    """``(job id, created)``: a second identical request (double click, resubmitted form)
    returns the existing job instead of assigning the same items twice. ``coordinator``: who
    creates it (recorded with the job and in the review history; the app always names one).
    ``item_ids``: the items already drawn by the caller (``strategy`` then names how), instead
    of sampling."""
    names = list(dict.fromkeys(a.strip() for a in annotators if a.strip()))
    if not names:
        raise ValueError("list at least one annotator")
    v = get_version(db, task, version)
    chosen = list(item_ids) if item_ids is not None else sample_items(
        db, task, n_items, strategy, dimension, seed)
    pairs = assign(chosen, names, overlap)
    params = {"annotators": names, "overlap": overlap, "strategy": strategy,
              "dimension": dimension, "seed": seed, "n_items": len(chosen)}
    name = name.strip() or f"{task} v{v['version']}"
    now = now_iso()
    with transaction(db):
        for jid, jparams in db.execute(
                "SELECT id, params FROM annotation_job WHERE task_id = ? AND "
                "checklist_version_id = ? AND name = ? ORDER BY id",
                [task_id(db, task), v["id"], name]).fetchall():
            if loads(jparams, {}) == params:
                return jid, False
        jid = db.execute("INSERT INTO annotation_job (task_id, checklist_version_id, name, "
                         "params, created_at, coordinator) VALUES (?, ?, ?, ?, ?, ?)",
                         [task_id(db, task), v["id"], name, dumps(params), now,
                          coordinator.strip()]).lastrowid
        record_event(db, task_id(db, task), "coordinator", "create_job",
                     actor=coordinator.strip(), job_id=jid, now=now,
                     detail={"name": name, "version": v["version"], **params})
        order = {it: i for i, it in enumerate(chosen)}
        db.conn.executemany("INSERT INTO annotation_assignment (job_id, item_id, annotator, "
                            "position, updated_at) VALUES (?, ?, ?, ?, ?)",
                            [(jid, it, a, order[it], now) for it, a in pairs])
    return jid, True


def list_jobs(db: sqlite_utils.Database, task: str | None = None) -> list[dict[str, Any]]:
    sql = ("SELECT j.*, t.name AS task, v.version FROM annotation_job j JOIN task t ON "
           "t.id = j.task_id JOIN checklist_version v ON v.id = j.checklist_version_id")
    out = rows(db, sql + (" WHERE t.name = ?" if task else "") + " ORDER BY j.id DESC",
               [task] if task else [])
    for j in out:
        j["params"] = loads(j["params"], {})
    return out


def jobs_for(db: sqlite_utils.Database, annotator: str) -> list[dict[str, Any]]:
    """The jobs that assign at least one item to ``annotator``."""
    assigned = {r[0] for r in db.execute(
        "SELECT DISTINCT job_id FROM annotation_assignment WHERE annotator = ?", [annotator])}
    return [j for j in list_jobs(db) if j["id"] in assigned]


def judge_comparison(db: sqlite_utils.Database, job_id: int, annotator: str, item_pk: int,
                     questions: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The annotator's answers beside every *completed* Yes/No judge run on the job's
    checklist version (cancelled or failed runs are left out): rows ``question, you, <run
    label>…, disagree`` (⚠️ when a judge said the other of yes/no), and the run labels.
    Blind: nothing (no row, no run) until ``annotator`` has submitted the item, nor after when
    the job hides the judges (``reveal_judges`` false)."""
    if blind(db, job_id, annotator, item_pk):
        return [], []
    vid = db.execute("SELECT checklist_version_id FROM annotation_job WHERE id = ?",
                     [job_id]).fetchone()[0]
    per_q = per_question_methods()  # one verdict per question, as the annotator gives
    runs = rows(db, "SELECT id, judge_spec, method FROM run WHERE checklist_version_id = ? "
                    f"AND status = 'completed' AND method IN ({','.join('?' * len(per_q))}) "
                    "ORDER BY id", [vid, *per_q])
    labels = [f"#{r['id']} {r['judge_spec']} {r['method']}" for r in runs]
    verdicts: dict[tuple[int, int], str] = {}
    if runs:
        for r in db.execute(
                f"SELECT run_id, question_id, verdict FROM answer WHERE item_id = ? AND unit = '' "
                f"AND run_id IN ({','.join('?' * len(runs))})", [item_pk, *[r["id"] for r in runs]]):
            verdicts[(r[0], r[1])] = r[2]
    mine = answers_of(db, job_id, annotator, item_pk)
    table = []
    for q in questions:
        row = {"question": q["text"], "you": mine.get(q["id"], "")}
        for r, label in zip(runs, labels):
            row[label] = verdicts.get((r["id"], q["id"]), "")
        others = {row[lb] for lb in labels if row[lb] in ("yes", "no")}
        row["disagree"] = "⚠️" if row["you"] in ("yes", "no") and others and \
            others != {row["you"]} else ""
        table.append(row)
    return table, labels


def _content(db: sqlite_utils.Database, job_id: int) -> dict[str, Any]:
    v = db.execute("SELECT v.content FROM annotation_job j JOIN checklist_version v ON v.id = "
                   "j.checklist_version_id WHERE j.id = ?", [job_id]).fetchone()
    if v is None:
        raise ValueError(f"no annotation job #{job_id}")
    return loads(v[0])


def _item(db: sqlite_utils.Database, item_pk: int) -> dict[str, Any]:
    found = rows(db, "SELECT id, item_id, group_id FROM item WHERE id = ?", [item_pk])
    if not found:
        raise ValueError(f"no item with internal id {item_pk}")
    return found[0]


def job_questions(db: sqlite_utils.Database, job_id: int, item_pk: int) -> list[dict[str, Any]]:
    """The item's checklist in the job's version: the global questions, its own and its
    query's — never another query's (a per-query checklist holds every query's questions)."""
    return questions_of_item(_content(db, job_id)["questions"], _item(db, item_pk))


def dimension_notes(db: sqlite_utils.Database, job_id: int) -> dict[str, dict[str, Any]]:
    """``{dimension: {"definition", "subs": {sub-dimension: description}}}`` of the job's
    checklist version (what an annotator reads before answering)."""
    return {d["name"]: {"definition": d.get("definition") or "",
                        "subs": {s["name"]: s.get("description") or ""
                                 for s in d.get("sub_dimensions", [])}}
            for d in _content(db, job_id).get("dimensions", [])}


def check_all_answered(db: sqlite_utils.Database, job_id: int, annotator: str,
                       item_pk: int) -> None:
    """ValueError unless every question of the item's checklist has this person's answer."""
    qs = job_questions(db, job_id, item_pk)
    mine = answers_of(db, job_id, annotator, item_pk)
    missing = [q for q in qs if q["id"] not in mine]
    if missing:
        raise ValueError(f"{len(missing)} of {len(qs)} questions of this item have no answer "
                         f"yet (first: {missing[0]['text'][:80]!r})")


@guarded("annotate", self_param="annotator")
def submit_item(db: sqlite_utils.Database, job_id: int, annotator: str, item_pk: int) -> None:
    """Mark the item done once every question of ITS checklist has an answer."""
    set_status(db, job_id, annotator, item_pk, "done")


def next_position(queue_rows: list[dict[str, Any]], pos: int) -> int:
    """Where to go after finishing the item at ``pos``: the next item still to do after it,
    else the first one still to do before it, else the next item (the last stays put)."""
    after = [i for i in range(pos + 1, len(queue_rows)) if queue_rows[i]["status"] == "todo"]
    before = [i for i in range(pos) if queue_rows[i]["status"] == "todo"]
    if after or before:
        return (after or before)[0]
    return min(pos + 1, len(queue_rows) - 1)


def progress_label(queue_rows: list[dict[str, Any]], pos: int) -> tuple[float, str, str]:
    """``(fraction finished, "Item 3 of 20", "7 of 20 done · 1 skipped · 12 to do")``."""
    n = len(queue_rows)
    done = sum(x["status"] == "done" for x in queue_rows)
    skipped = sum(x["status"] == "skipped" for x in queue_rows)
    return ((done + skipped) / n if n else 0.0, f"Item {pos + 1} of {n}",
            f"{done} of {n} done · {skipped} skipped · {n - done - skipped} to do")


def queue(db: sqlite_utils.Database, job_id: int, annotator: str) -> list[dict[str, Any]]:
    return rows(db, "SELECT a.item_id AS item_pk, i.item_id, a.status, a.skip_reason, "
                    "a.position FROM annotation_assignment a JOIN item i ON i.id = a.item_id "
                    "WHERE a.job_id = ? AND a.annotator = ? ORDER BY a.position",
                [job_id, annotator])


#: Why an answer of a submitted item cannot change: the judges' answers may have been shown.
FINAL = "this item is submitted: its answers are final"


def open_assignment(db: sqlite_utils.Database, job_id: int, annotator: str,
                    item_pk: int) -> str:
    """The status of ``annotator``'s assignment of the item in the job (``todo`` or
    ``skipped``); ValueError when they have none (only the people given an item answer it) or
    when they submitted it (:data:`FINAL`: the page then showed them the judges' answers)."""
    row = db.execute("SELECT status FROM annotation_assignment WHERE job_id = ? AND "
                     "annotator = ? AND item_id = ?", [job_id, annotator, item_pk]).fetchone()
    if row is None:
        raise ValueError(f"{annotator!r} was not given item {item_pk} in job #{job_id}: only "
                         "the people a job gives an item to answer it. Nothing was written.")
    if row[0] == "done":
        raise ValueError(f"{FINAL}. Nothing was written.")
    return str(row[0])


@guarded("annotate", self_param="annotator")
def save_answer(db: sqlite_utils.Database, job_id: int, annotator: str, item_pk: int,
                question_id: int, value: str) -> None:
    """Upsert one answer at once (nothing is lost on refresh or crash), on an item the job
    gave ``annotator`` and that they have not submitted yet (see :func:`open_assignment`).
    A changed answer appends the one it replaces to the history (``review_event``,
    ``change_answer``): the current answer is one row, what was given before is kept."""
    if value not in ("yes", "no", "unsure"):
        raise ValueError(f"answer {value!r}: use yes, no or unsure")
    if question_id not in {q["id"] for q in job_questions(db, job_id, item_pk)}:
        raise ValueError(f"question #{question_id} is not on this item's checklist in job "
                         f"#{job_id}")
    now = now_iso()
    with transaction(db):  # the status is read under the write lock: a submit cannot slip in
        open_assignment(db, job_id, annotator, item_pk)
        tid = db.execute("SELECT task_id FROM annotation_job WHERE id = ?",
                         [job_id]).fetchone()[0]
        was = db.execute("SELECT value, updated_at FROM annotation WHERE task_id = ? AND "
                         "annotator = ? AND kind = 'answer' AND item_id = ? AND question_id = ? "
                         "AND job_id = ?", [tid, annotator, item_pk, question_id, job_id]
                         ).fetchone()
        if was and was[0] != value:  # a change of mind: the answer it replaces stays on record
            record_event(db, tid, "annotator", "change_answer", actor=annotator, job_id=job_id,
                         detail={"item": item_pk, "question": question_id, "was": was[0],
                                 "given_at": was[1], "now": value}, now=now)
        db.execute("INSERT INTO annotation (task_id, annotator, kind, item_id, question_id, "
                   "value, job_id, created_at, updated_at) VALUES (?, ?, 'answer', ?, ?, ?, ?, "
                   "?, ?) ON CONFLICT DO UPDATE SET value = excluded.value, "
                   "updated_at = excluded.updated_at",
                   [tid, annotator, item_pk, question_id, value, job_id, now, now])


def answers_of(db: sqlite_utils.Database, job_id: int, annotator: str,
               item_pk: int) -> dict[int, str]:
    return {r[0]: r[1] for r in db.execute(
        "SELECT question_id, value FROM annotation WHERE job_id = ? AND annotator = ? AND "
        "item_id = ? AND kind = 'answer'", [job_id, annotator, item_pk])}


@guarded("annotate", self_param="annotator")
def set_status(db: sqlite_utils.Database, job_id: int, annotator: str, item_pk: int,
               status: str, reason: str = "") -> None:
    """Submit (``done``: every question of the item's checklist answered), skip (with a
    reason) or reopen (``todo``) ``annotator``'s item; refused, nothing changed, on an item not
    given to them or already submitted."""
    if status not in ("todo", "done", "skipped"):
        raise ValueError(f"status {status!r}: use todo, done or skipped")
    if status == "skipped" and not reason.strip():
        raise ValueError("skipping an item needs a reason")
    with transaction(db):
        open_assignment(db, job_id, annotator, item_pk)
        if status == "done":  # read under the write lock, as the answers are written
            check_all_answered(db, job_id, annotator, item_pk)
        db.execute("UPDATE annotation_assignment SET status = ?, skip_reason = ?, "
                   "updated_at = ? WHERE job_id = ? AND annotator = ? AND item_id = ?",
                   [status, reason, now_iso(), job_id, annotator, item_pk])


def progress(db: sqlite_utils.Database, job_id: int) -> list[dict[str, Any]]:
    return rows(db, "SELECT annotator, COUNT(*) AS assigned, SUM(status = 'done') AS done, "
                    "SUM(status = 'skipped') AS skipped FROM annotation_assignment WHERE "
                    "job_id = ? GROUP BY annotator ORDER BY annotator", [job_id])


def disagreements(db: sqlite_utils.Database, job_id: int) -> list[dict[str, Any]]:
    """(item, question) pairs where annotators gave both yes and no on items they submitted
    (an answer counts once submitted, as in :mod:`checkeval_core.people`), with any settled
    answer (only questions on the item's own checklist)."""
    out = rows(db, "SELECT a.item_id AS item_pk, i.item_id, i.group_id, q.item_id AS q_item, "
                    "q.group_id AS q_group, a.question_id, q.text AS question, "
                    "GROUP_CONCAT(a.annotator || '=' || a.value, ', ') AS answers, "
                    "adj.value AS settled FROM annotation a JOIN item i ON i.id = a.item_id "
                    "JOIN question q ON q.id = a.question_id LEFT JOIN adjudication adj ON "
                    "adj.job_id = a.job_id AND adj.item_id = a.item_id AND adj.question_id = "
                    f"a.question_id WHERE a.job_id = ? AND {SUBMITTED} AND a.kind = 'answer' "
                    "AND a.value IN "
                    "('yes', 'no') GROUP BY a.item_id, a.question_id HAVING "
                    "COUNT(DISTINCT a.value) > 1 ORDER BY i.position, a.question_id", [job_id])
    keep = []
    for r in out:
        item = {"id": r["item_pk"], "item_id": r["item_id"], "group_id": r.pop("group_id")}
        if question_applies({"item_id": r.pop("q_item"), "group_id": r.pop("q_group")}, item):
            keep.append(r)
    return keep


@guarded("job.manage", self_param="coordinator")
def adjudicate(db: sqlite_utils.Database, job_id: int, item_pk: int, question_id: int,
               value: str, coordinator: str, note: str = "") -> None:
    if value not in ("yes", "no"):
        raise ValueError("the settled answer is yes or no")
    coordinator = coordinator.strip()  # one person, however the name was padded
    if not coordinator:
        raise ValueError("enter the coordinator's name")
    now = now_iso()
    with transaction(db):
        db.execute("INSERT INTO adjudication (job_id, item_id, question_id, value, coordinator, "
                   "note, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                   "value = excluded.value, coordinator = excluded.coordinator, "
                   "note = excluded.note", [job_id, item_pk, question_id, value, coordinator,
                                            note, now])
        tid = db.execute("SELECT task_id FROM annotation_job WHERE id = ?", [job_id]).fetchone()
        if tid:
            record_event(db, tid[0], "coordinator", "settle", actor=coordinator.strip(),
                         reason=note, question_id=question_id, job_id=job_id, now=now,
                         detail={"item": item_pk, "value": value})


def blind(db: sqlite_utils.Database, job_id: int, annotator: str, item_pk: int) -> str:
    """Why ``annotator`` may not yet see the judges' answers (or anyone else's) on this item:
    '' once they submitted it in a job that shows them then (the default)."""
    row = db.execute("SELECT s.status, j.params FROM annotation_assignment s JOIN "
                     "annotation_job j ON j.id = s.job_id WHERE s.job_id = ? AND "
                     "s.annotator = ? AND s.item_id = ?", [job_id, annotator, item_pk]).fetchone()
    if row is None or row[0] != "done":
        return "Judges' answers are hidden until you submit this item (blind annotation)."
    if loads(row[1], {}).get("reveal_judges") is False:
        return "This job keeps the judges' answers hidden from annotators."
    return ""
