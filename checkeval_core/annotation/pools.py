"""Pools: annotation jobs where each item needs *k* answers from *k* different people and
annotators pull the next item, plus what a coordinator watches — per person done, held,
left, median time per item and agreement with the others so far — and people's agreement
with each other per job and question.

The rules, each kept inside one ``BEGIN IMMEDIATE`` transaction so that any number of
processes may pull from one SQLite file at once:

* **next item**: the item a person already holds, else the first pool item (items with the
  most submitted answers first, then the job's order) that they have not submitted or
  skipped, that has fewer than *k* submitted answers, and that nobody else holds;
* **claims** hold for the job's ``claim_minutes`` (default 30); a released or expired claim
  returns the item to the pool (the row stays, ``expires_at`` says until when it held);
* **submit**: on a live claim, or on an expired one only while nobody else holds the item
  and it still has fewer than *k* submitted answers — so no item ever gets more than *k*
  submitted answers, and nobody answers an item twice;
* **hand on**: a coordinator releases a person's open claims of a pool (others pull them) or,
  on a fixed job, moves that person's open items to others, recorded in the review history.

Answers saved on a claim that expired before it was submitted stay stored under their
author but are not a submission: progress and agreement here count submitted items only.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlite_utils

from checkeval_core.annotation.agreement_report import group_interval
from checkeval_core.annotation.jobs import (
    check_all_answered,
    sample_items,
    set_status,
)
from checkeval_core.checklists.review import record_event
from checkeval_core.checklists.versions import get_version
from checkeval_core.people import SUBMITTED
from checkeval_core.stats.agreement import alpha_binary_ci, binary_alpha, fleiss_from_labels
from checkeval_core.store import dumps, loads, rows, task_id, transaction
from checkeval_core.tasks import item_groups
from checkeval_core.team import guarded

DEFAULT_CLAIM_MINUTES = 30.0


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="milliseconds")


def _now(now: datetime | None) -> datetime:
    return now or datetime.now(UTC)


def job_meta(db: sqlite_utils.Database, job_id: int) -> dict[str, Any]:
    found = rows(db, "SELECT id, task_id, name, params, mode, claim_minutes, coordinator FROM "
                     "annotation_job WHERE id = ?", [job_id])
    if not found:
        raise ValueError(f"no annotation job #{job_id}")
    j = found[0]
    j["params"] = loads(j["params"], {})
    j["k"] = int(j["params"].get("overlap") or 1)
    return j


@guarded("job.manage", self_param="coordinator")
def create_pool(db: sqlite_utils.Database, task: str, k: int, n_items: int | None = None,
                version: int | str = "latest", strategy: str = "random",
                dimension: str | None = None, seed: int = 0, name: str = "",
                coordinator: str = "", annotators: list[str] | None = None,
                claim_minutes: float = DEFAULT_CLAIM_MINUTES,
                item_ids: list[int] | None = None,
                reveal_judges: bool = True) -> tuple[int, bool]:
    """``(job id, created)`` of a pool: ``k`` answers per item from different people.
    ``annotators`` limits who may pull (empty: anyone — behind a login, anyone with the
    annotator role); ``reveal_judges`` false keeps the judges' answers hidden from annotators
    even after they submit. An identical request returns the existing pool."""
    if int(k) < 1:
        raise ValueError(f"k {k}: each item needs at least 1 answer")
    if not claim_minutes or float(claim_minutes) <= 0:
        raise ValueError(f"claim_minutes {claim_minutes}: a claim must hold for some time")
    members = list(dict.fromkeys(a.strip() for a in (annotators or []) if a.strip()))
    if members and int(k) > len(members):
        raise ValueError(f"k {k}: more than the {len(members)} people allowed to answer")
    v = get_version(db, task, version)
    chosen = list(item_ids) if item_ids is not None else sample_items(
        db, task, n_items, strategy, dimension, seed)
    if not chosen:
        raise ValueError(f"task {task!r} has no item to put in a pool")
    params = {"annotators": members, "overlap": int(k), "strategy": strategy,
              "dimension": dimension, "seed": seed, "n_items": len(chosen), "pool": True,
              "reveal_judges": bool(reveal_judges)}
    name = name.strip() or f"{task} v{v['version']} pool"
    tid = task_id(db, task)
    now = _iso(_now(None))
    with transaction(db):
        for jid, jparams in db.execute(
                "SELECT id, params FROM annotation_job WHERE task_id = ? AND "
                "checklist_version_id = ? AND name = ? AND mode = 'pool' ORDER BY id",
                [tid, v["id"], name]).fetchall():
            if loads(jparams, {}) == params:
                return jid, False
        jid = db.execute("INSERT INTO annotation_job (task_id, checklist_version_id, name, params, "
                         "created_at, coordinator, mode, claim_minutes) VALUES "
                         "(?, ?, ?, ?, ?, ?, 'pool', ?)",
                         [tid, v["id"], name, dumps(params), now, coordinator.strip(),
                          float(claim_minutes)]).lastrowid
        record_event(db, tid, "coordinator", "create_job", actor=coordinator.strip(),
                     job_id=jid, now=now, detail={"name": name, "version": v["version"],
                                                  "claim_minutes": float(claim_minutes),
                                                  **params})
        db.conn.executemany("INSERT INTO annotation_pool_item (job_id, item_id, position) "
                            "VALUES (?, ?, ?)", [(jid, it, i) for i, it in enumerate(chosen)])
    return jid, True


def may_pull(db: sqlite_utils.Database, job_id: int, annotator: str) -> bool:
    members = job_meta(db, job_id)["params"].get("annotators") or []
    return not members or annotator in members


def pools_for(db: sqlite_utils.Database, annotator: str) -> list[int]:
    """The pool jobs ``annotator`` may pull from."""
    return [r[0] for r in db.execute("SELECT id FROM annotation_job WHERE mode = 'pool' "
                                     "ORDER BY id DESC") if may_pull(db, r[0], annotator)]


_LIVE = "(a.status = 'todo' AND (a.expires_at IS NULL OR a.expires_at > :now))"


@guarded("annotate", self_param="annotator", audit=False)  # asked on every page view
def next_item(db: sqlite_utils.Database, job_id: int, annotator: str,
              now: datetime | None = None) -> int | None:
    """The item ``annotator`` should answer next in pool ``job_id`` (claimed for them), or
    ``None`` when nothing is left for them."""
    who = annotator.strip()
    if not who:
        raise ValueError("enter the annotator's name")
    meta = job_meta(db, job_id)
    if meta["mode"] != "pool":
        raise ValueError(f"job #{job_id} assigns fixed items: open its queue instead")
    if not may_pull(db, job_id, who):
        raise ValueError(f"{who} is not among the people of pool #{job_id}")
    with transaction(db):
        # the time is read once the write lock is held: a claim is judged live or expired at
        # the moment of the decision, not before a wait for the lock
        t = _now(now)
        p = {"job": job_id, "me": who, "now": _iso(t), "k": meta["k"],
             "until": _iso(t + timedelta(minutes=float(meta["claim_minutes"])))}
        held = db.execute(f"SELECT a.item_id FROM annotation_assignment a WHERE a.job_id = :job "
                          f"AND a.annotator = :me AND {_LIVE} ORDER BY a.position LIMIT 1",
                          p).fetchone()
        if held:
            return int(held[0])
        found = db.execute(
            "SELECT p.item_id, p.position FROM annotation_pool_item p "
            "LEFT JOIN (SELECT item_id, SUM(status = 'done') AS done, "
            f"SUM({_LIVE}) AS live, SUM(annotator = :me AND status IN "
            "('done', 'skipped')) AS mine FROM annotation_assignment a WHERE job_id = :job "
            "GROUP BY item_id) s ON s.item_id = p.item_id WHERE p.job_id = :job AND "
            "COALESCE(s.mine, 0) = 0 AND COALESCE(s.live, 0) = 0 AND COALESCE(s.done, 0) < :k "
            "ORDER BY COALESCE(s.done, 0) DESC, p.position LIMIT 1", p).fetchone()
        if not found:
            return None
        p["item"], p["pos"] = found
        db.execute("INSERT INTO annotation_assignment (job_id, item_id, annotator, position, "
                   "status, updated_at, claimed_at, expires_at) VALUES (:job, :item, :me, :pos, "
                   "'todo', :now, :now, :until) ON CONFLICT (job_id, item_id, annotator) DO "
                   "UPDATE SET claimed_at = :now, expires_at = :until, updated_at = :now", p)
        return int(p["item"])


@guarded("annotate", self_param="annotator")
def release(db: sqlite_utils.Database, job_id: int, annotator: str, item_pk: int,
            now: datetime | None = None) -> bool:
    """Give a held item back to the pool; ``False`` when it was not held."""
    n = db.execute("UPDATE annotation_assignment SET expires_at = ?, updated_at = ? WHERE "
                   "job_id = ? AND annotator = ? AND item_id = ? AND status = 'todo' AND "
                   "expires_at IS NOT NULL AND expires_at > ?",
                   [_iso(_now(now))] * 2 + [job_id, annotator, item_pk, _iso(_now(now))]
                   ).rowcount
    return n > 0


@guarded("annotate", self_param="annotator")
def submit(db: sqlite_utils.Database, job_id: int, annotator: str, item_pk: int,
           now: datetime | None = None) -> None:
    """Submit a pool item (every question of its checklist answered). On an expired claim
    only while nobody else holds it and it still needs answers; else refused, nothing
    changed."""
    check_all_answered(db, job_id, annotator, item_pk)
    k = job_meta(db, job_id)["k"]
    with transaction(db):
        # read under the write lock (see next_item): a claim that expired while this call
        # waited for the lock must not count as live
        p = {"job": job_id, "me": annotator, "item": item_pk, "now": _iso(_now(now))}
        row = db.execute("SELECT status, expires_at IS NULL OR expires_at > :now FROM "
                         "annotation_assignment WHERE job_id = :job AND annotator = :me AND "
                         "item_id = :item", p).fetchone()
        if row is None:
            raise ValueError(f"item {item_pk} was never given to {annotator} in job #{job_id}")
        if row[0] != "todo":
            raise ValueError(f"this item is already {row[0]}")
        if not row[1]:
            done, others = db.execute(
                f"SELECT SUM(a.status = 'done'), SUM(a.annotator != :me AND {_LIVE}) FROM "
                "annotation_assignment a WHERE a.job_id = :job AND a.item_id = :item",
                p).fetchone()
            if (others or 0) or (done or 0) >= k:
                raise ValueError("your claim on this item expired and it went to someone "
                                 "else: your answers are kept but not counted; take the next "
                                 "item")
        set_status(db, job_id, annotator, item_pk, "done")


@guarded("job.manage", self_param="coordinator")
def hand_on(db: sqlite_utils.Database, job_id: int, person: str, to: list[str] | None = None,
            coordinator: str = "", now: datetime | None = None) -> dict[str, Any]:
    """Hand ``person``'s open items on: in a pool their claims are released (others pull
    them); in a fixed job each open item moves to the next of ``to`` who does not have it.
    ``{"moved": n, "released": n, "kept": n}`` (kept: nobody in ``to`` could take it)."""
    meta = job_meta(db, job_id)
    t = _iso(_now(now))
    out = {"moved": 0, "released": 0, "kept": 0}
    with transaction(db):
        if meta["mode"] == "pool":
            out["released"] = db.execute(
                "UPDATE annotation_assignment SET expires_at = ?, updated_at = ? WHERE job_id = ? "
                "AND annotator = ? AND status = 'todo' AND expires_at > ?",
                [t, t, job_id, person, t]).rowcount
        else:
            targets = [x.strip() for x in (to or []) if x.strip() and x.strip() != person]
            if not targets:
                raise ValueError("name at least one other person to hand the items to")
            open_items = [r[0] for r in db.execute(
                "SELECT item_id FROM annotation_assignment WHERE job_id = ? AND annotator = ? "
                "AND status = 'todo' ORDER BY position", [job_id, person])]
            turn = 0
            for item in open_items:
                has = {r[0] for r in db.execute("SELECT annotator FROM annotation_assignment "
                                                "WHERE job_id = ? AND item_id = ?",
                                                [job_id, item])}
                free = [targets[(turn + i) % len(targets)] for i in range(len(targets))
                        if targets[(turn + i) % len(targets)] not in has]
                if not free:
                    out["kept"] += 1
                    continue
                db.execute("UPDATE annotation_assignment SET annotator = ?, updated_at = ? "
                           "WHERE job_id = ? AND annotator = ? AND item_id = ?",
                           [free[0], t, job_id, person, item])
                turn = (targets.index(free[0]) + 1) % len(targets)
                out["moved"] += 1
        record_event(db, meta["task_id"], "coordinator", "hand_on", actor=coordinator.strip(),
                     job_id=job_id, now=t, detail={"from": person, "to": to or [], **out})
    return out


def _submitted(db: sqlite_utils.Database, job_id: int) -> list[dict[str, Any]]:
    """Yes/No answers of submitted items of the job (the one read of people's answers here)."""
    return rows(db, "SELECT a.annotator, a.item_id AS item_pk, a.question_id, a.value FROM "
                    f"annotation a WHERE a.job_id = ? AND {SUBMITTED} AND a.kind = 'answer' "
                    "AND a.value IN ('yes', 'no')", [job_id])


def _ts(text: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None


def people_progress(db: sqlite_utils.Database, job_id: int,
                    now: datetime | None = None) -> list[dict[str, Any]]:
    """Per person: ``annotator, assigned`` (items given or ever claimed), ``done, skipped,
    held, left, median s per item`` and agreement with the others' majority on the answers
    they share (``agrees with others``: n of m; ties among the others left out)."""
    meta = job_meta(db, job_id)
    t = _iso(_now(now))
    assign = rows(db, "SELECT annotator, item_id, status, claimed_at, expires_at, updated_at "
                      "FROM annotation_assignment WHERE job_id = ?", [job_id])
    first = {(r[0], r[1]): r[2] for r in db.execute(
        "SELECT annotator, item_id, MIN(created_at) FROM annotation WHERE job_id = ? AND "
        "kind = 'answer' GROUP BY annotator, item_id", [job_id])}
    units: dict[tuple[int, int], dict[str, str]] = defaultdict(dict)
    for r in _submitted(db, job_id):
        units[(r["item_pk"], r["question_id"])][r["annotator"]] = r["value"]
    done_per_item: dict[int, int] = defaultdict(int)
    for r in assign:
        done_per_item[r["item_id"]] += r["status"] == "done"
    out = []
    for person in sorted({r["annotator"] for r in assign}):
        mine = [r for r in assign if r["annotator"] == person]
        done = [r for r in mine if r["status"] == "done"]
        live = [r for r in mine if r["status"] == "todo" and
                (r["expires_at"] is None or r["expires_at"] > t)]
        if meta["mode"] == "pool":
            # still open to them: not submitted or skipped by them, not held by them now,
            # still short of k answers
            closed = {r["item_id"] for r in mine if r["status"] in ("done", "skipped")} | \
                {r["item_id"] for r in live}
            left = sum(1 for it in _pool_items(db, job_id) if it not in closed and
                       done_per_item[it] < meta["k"])
            held = len(live)
        else:
            left, held = len(live), 0
        secs = []
        for r in done:
            start = _ts(r["claimed_at"] or first.get((person, r["item_id"])))
            end = _ts(r["updated_at"])
            if start and end and end >= start:
                secs.append((end - start).total_seconds())
        agree = n = 0
        for by in units.values():
            if person not in by:
                continue
            others = [v for a, v in by.items() if a != person]
            y, no = others.count("yes"), others.count("no")
            if y == no:
                continue
            n += 1
            agree += by[person] == ("yes" if y > no else "no")
        out.append({"annotator": person, "assigned": len(mine), "done": len(done),
                    "skipped": sum(r["status"] == "skipped" for r in mine), "held": held,
                    "left": left, "median s per item": statistics.median(secs) if secs else None,
                    "agrees with others": f"{agree}/{n}" if n else "no shared item yet"})
    return out


def _pool_items(db: sqlite_utils.Database, job_id: int) -> list[int]:
    return [r[0] for r in db.execute("SELECT item_id FROM annotation_pool_item WHERE job_id = ? "
                                     "ORDER BY position", [job_id])]


def job_progress(db: sqlite_utils.Database, job_id: int) -> dict[str, Any]:
    """The job as a whole: items, items with all *k* answers, submitted answers, needed."""
    meta = job_meta(db, job_id)
    per_item = dict(db.execute("SELECT item_id, SUM(status = 'done') FROM annotation_assignment "
                               "WHERE job_id = ? GROUP BY item_id", [job_id]).fetchall())
    its = _pool_items(db, job_id) if meta["mode"] == "pool" else list(per_item)
    k = meta["k"]
    return {"items": len(its), "complete": sum(per_item.get(i, 0) >= k for i in its),
            "submitted": sum(per_item.get(i, 0) for i in its), "needed": k * len(its)}


def _alpha_units(by_unit: dict[Any, dict[str, str]], group_of: dict[int, Any]
                 ) -> dict[str, Any]:
    multi = {u: v for u, v in by_unit.items() if len(v) >= 2}
    if not multi:
        return {"alpha": None, "ci": None, "units": 0, "groups": 0,
                "reason": "no item has submitted Yes/No answers from two people yet"}
    yes = sum(list(v.values()).count("yes") for v in multi.values())
    no = sum(list(v.values()).count("no") for v in multi.values())
    w = sum(list(v.values()).count("yes") * list(v.values()).count("no") / (len(v) - 1)
            for v in multi.values())
    alpha = binary_alpha([yes, no, w])
    ci = alpha_binary_ci(multi, {u: group_of.get(u[0]) for u in multi})
    groups = len({group_of.get(u[0]) for u in multi})
    reason = ci["reason"]
    if alpha != alpha:  # NaN
        alpha, reason = None, "every answer is the same: chance agreement is 1, α undefined"
    return {"alpha": alpha, "ci": None if ci["reason"] else ci["ci"], "units": len(multi),
            "groups": groups, "reason": reason}


def people_agreement(db: sqlite_utils.Database, job_id: int) -> dict[str, Any]:
    """People's agreement with each other on a job's submitted items: Krippendorff α over
    all (item, question) units with its group-bootstrap interval, and per question α and
    Fleiss κ (units with two or more people), each with its interval or the reason none."""
    by_unit: dict[tuple[int, int], dict[str, str]] = defaultdict(dict)
    for r in _submitted(db, job_id):
        by_unit[(r["item_pk"], r["question_id"])][r["annotator"]] = r["value"]
    group_of = {pk: g for pk, (g, _) in item_groups(db, {u[0] for u in by_unit}).items()}
    overall = _alpha_units(by_unit, group_of)
    texts = dict(db.execute("SELECT id, text FROM question WHERE id IN (SELECT DISTINCT "
                            "question_id FROM annotation WHERE job_id = ?)", [job_id]).fetchall())
    per_q = []
    for qid in sorted({u[1] for u in by_unit}):
        sub = {u: v for u, v in by_unit.items() if u[1] == qid}
        a = _alpha_units(sub, group_of)
        multi = [u for u, v in sub.items() if len(v) >= 2]
        kappa, _ = fleiss_from_labels([list(sub[u].values()) for u in multi]) if multi else \
            (float("nan"), 0)
        k_ci = group_interval(multi, group_of, lambda us, sub=sub: fleiss_from_labels(
            [list(sub[u].values()) for u in us])[0]) if multi else \
            {"ci": None, "reason": "no shared item"}
        per_q.append({"question_id": qid, "question": texts.get(qid, ""), **a,
                      "fleiss_kappa": None if kappa != kappa else kappa,
                      "kappa_ci": None if k_ci["reason"] else k_ci["ci"],
                      "kappa_reason": k_ci["reason"]})
    return {"overall": overall, "per_question": per_q}
