"""``checkeval bench pool-queue``: many annotator processes pulling from one pool on one
SQLite file.

Builds a scratch database with one task of ``items`` items and a checklist of ``questions``
Yes/No questions, and one pool job with ``k`` answers per item and short claims
(``claim_seconds``). Then ``annotators`` processes each act as one person: ask for the next
item, answer every question (one save per answer), submit, and again, until nothing is left
for them. With probability ``abandon`` a person walks away from the item they hold (no answer,
no release) and comes back under a new name — their claim must expire and the item be served
to someone else. Each process logs what it submitted and how long each call took.

Checked afterwards, on the database: nobody submitted an item twice, no item has more than
*k* submitted answers, every item has its *k*, every answer a process submitted is stored
with its value (no lost answer), and the abandoned claims were re-served. Reported: those
counts and p50 / p99 of *next item*, *save an answer* and *submit*, with the wall time.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import platform
import random
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from checkeval_core.annotation import jobs as J
from checkeval_core.annotation import pools as P
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.store import open_db

TASK = "pool-bench"


def build(path: Path, n_items: int, n_questions: int, k: int, claim_seconds: float) -> int:
    """The scratch database: the task, its frozen checklist and the pool; the pool's id."""
    db = open_db(path)
    data = path.parent / "items.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{i}", "group_id": f"g{i // 5}",
                                        "system_id": f"s{i % 5}", "source": f"Text {i}.",
                                        "output": f"Summary {i}."}) + "\n"
                            for i in range(n_items)))
    import_file(db, data, TASK, kind="summarization")
    per_sub = 5
    subs = {f"S{s}": {"seed": [f"Does summary rule {s}.{q} hold?"
                               for q in range(min(per_sub, n_questions - per_sub * s))]}
            for s in range(-(-n_questions // per_sub))}
    spec = path.parent / "checklist.json"
    spec.write_text(json.dumps({"quality": {"definition": "good", "sub_dimensions": subs}}))
    import_checklist(db, TASK, spec)
    freeze(db, TASK)
    jid, _ = P.create_pool(db, TASK, k, claim_minutes=claim_seconds / 60, coordinator="bench")
    db.close()
    return jid


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def annotator(path: str, job: int, n: int, abandon: float, seed: int, out: Any) -> None:
    """One simulated person (a process): pull, answer, submit until nothing is left."""
    db = open_db(path)
    rng = random.Random(seed)
    name, gen = f"a{n:02d}", 0
    log: dict[str, Any] = {"next": [], "save": [], "submit": [], "submitted": [],
                           "abandoned": [], "refused": 0, "start": time.time()}
    questions: dict[int, list[int]] = {}
    idle_since = None
    while True:
        t0 = time.perf_counter()
        item = P.next_item(db, job, name)
        log["next"].append(time.perf_counter() - t0)
        if item is None:
            # others may still hold items that will come back when their claims expire
            left = P.job_progress(db, job)
            if left["complete"] == left["items"]:
                break
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since > 120:
                break
            time.sleep(0.2)
            continue
        idle_since = None
        if rng.random() < abandon:  # walk away holding it; come back as someone new
            log["abandoned"].append(item)
            gen += 1
            name = f"a{n:02d}-{gen}"
            continue
        if item not in questions:
            questions[item] = [q["id"] for q in J.job_questions(db, job, item)]
        answers = {}
        for qid in questions[item]:
            value = rng.choice(("yes", "no"))
            t0 = time.perf_counter()
            J.save_answer(db, job, name, item, qid, value)
            log["save"].append(time.perf_counter() - t0)
            answers[qid] = value
        t0 = time.perf_counter()
        try:
            P.submit(db, job, name, item)
        except ValueError:
            log["refused"] += 1
            continue
        finally:
            log["submit"].append(time.perf_counter() - t0)
        log["submitted"].append([name, item, answers])
    db.close()
    log["end"] = time.time()
    out.put(log)


def bench_pool_queue(annotators: int = 20, items: int = 500, questions: int = 15, k: int = 3,
                     claim_seconds: float = 5.0, abandon: float = 0.01,
                     path: str | None = None) -> dict[str, Any]:
    if annotators < k:
        raise ValueError(f"--annotators {annotators}: fewer than k = {k}")
    folder = Path(path or tempfile.mkdtemp())
    db_file = folder / "pool.db"
    job = build(db_file, items, questions, k, claim_seconds)
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    t0 = time.perf_counter()
    procs = [ctx.Process(target=annotator, args=(str(db_file), job, n, abandon, n, out))
             for n in range(annotators)]
    for p in procs:
        p.start()
    logs = [out.get() for _ in procs]
    for p in procs:
        p.join()
    wall = time.perf_counter() - t0
    db = open_db(db_file)
    done = db.execute("SELECT item_id, annotator FROM annotation_assignment WHERE job_id = ? "
                      "AND status = 'done'", [job]).fetchall()
    per_item: dict[int, int] = {}
    for it, _ in done:
        per_item[it] = per_item.get(it, 0) + 1
    stored = {(r[0], r[1], r[2]): r[3] for r in db.execute(
        "SELECT annotator, item_id, question_id, value FROM annotation WHERE job_id = ?",
        [job])}
    submitted = [s for lg in logs for s in lg["submitted"]]
    lost = sum(stored.get((who, it, int(q))) != v for who, it, ans in submitted
               for q, v in ans.items())
    abandoned = [it for lg in logs for it in lg["abandoned"]]
    reserved = sum(per_item.get(it, 0) >= 1 for it in abandoned)
    all_next = [x for lg in logs for x in lg["next"]]
    all_save = [x for lg in logs for x in lg["save"]]
    all_submit = [x for lg in logs for x in lg["submit"]]
    ms = 1000.0
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load "
                   f"{os.getloadavg()[0]:.1f}, Python {platform.python_version()}",
        "annotators": annotators, "items": items, "questions": questions, "k": k,
        "claim_seconds": claim_seconds, "wall_s": round(wall, 1),
        "work_s": round(max(lg["end"] for lg in logs) - min(lg["start"] for lg in logs), 1),
        "submitted": len(done), "expected": k * items,
        "items_complete": sum(v == k for v in per_item.values()),
        "items_over_k": sum(v > k for v in per_item.values()),
        "same_person_twice": len(done) - len(set(done)),
        "lost_answers": lost, "answers_stored": len(stored),
        "abandoned_claims": len(abandoned), "abandoned_reserved": reserved,
        "refused_submits": sum(lg["refused"] for lg in logs),
        "next_item_ms": {"n": len(all_next), "p50": _r(_pct(all_next, .5), ms),
                         "p99": _r(_pct(all_next, .99), ms)},
        "save_ms": {"n": len(all_save), "p50": _r(_pct(all_save, .5), ms),
                    "p99": _r(_pct(all_save, .99), ms)},
        "submit_ms": {"n": len(all_submit), "p50": _r(_pct(all_submit, .5), ms),
                      "p99": _r(_pct(all_submit, .99), ms)},
    }


def _r(x: float | None, scale: float) -> float | None:
    return None if x is None else round(x * scale, 2)
