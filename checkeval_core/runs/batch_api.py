"""``checkeval run … --batch``: a run asked through the provider's Batch API, end to end.

For an ``openai:`` or ``openai-compat:`` judge (one address), :func:`execute_batch` writes the
run's pending requests as batch files (``runs/batch.py``), uploads each
(``files.create(purpose="batch")``), creates a batch over it (``batches.create``, endpoint
``/v1/chat/completions``, completion window 24 h), and polls ``batches.retrieve`` every
``CHECKEVAL_BATCH_POLL`` seconds (default 30), reporting the provider's own request counts.
When a batch ends, its output file (``files.content``) is stored exactly as ``--batch-in``
stores a result file; a batch that *completed* leaves nothing pending, one that *expired*,
*failed* or was *cancelled* leaves its answered requests stored and the rest pending (the run
ends ``failed`` or ``cancelled``; resuming it submits what is missing).

The client is the online backend's own (``registry.get_judge`` → ``openai_compat.OpenAIJudge``):
the same key resolution, the same check that every request goes to an address approved for the
key, no redirects. Every batch is recorded on the run as soon as the provider gives its id
(``run_batch``; ``run.batch = 'api'``), so a worker killed while a batch runs, or an app closed
meanwhile, resumes by polling that batch — never by submitting again. *Cancel* (the run's
status) cancels the run's open batches at the provider. What is paid is the batch price
(``judges/prices.py``: ``batch_price_of``), stored in ``run.actual`` with ``paid: "batch"``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from checkeval_core.judges.batch_format import URL, shard_lines
from checkeval_core.judges.registry import get_judge
from checkeval_core.runs.batch import (
    batch_requests,
    check_batchable,
    finish_if_done,
    offline_judge,
    store_batch_results,
)
from checkeval_core.runs.estimate import record_estimate
from checkeval_core.runs.jobs import get_run
from checkeval_core.store import now_iso, open_db, transaction

TERMINAL = ("completed", "failed", "expired", "cancelled")
POLL_ENV = "CHECKEVAL_BATCH_POLL"
COMPLETION_WINDOW = "24h"


def poll_seconds() -> float:
    try:
        return max(0.01, float(os.environ.get(POLL_ENV, "30")))
    except ValueError:
        return 30.0


def _open(db: Any, run_id: int) -> list[dict[str, Any]]:
    cur = db.execute("SELECT * FROM run_batch WHERE run_id = ? AND mode = 'api' AND stored = 0 "
                     "ORDER BY id", [run_id])
    cols = [c[0] for c in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def _submit(db: Any, client: Any, run: dict[str, Any], lines: list[str]) -> None:
    """Upload the pending requests and create one batch per file, recording each id as soon
    as the provider gives it."""
    for k, part in enumerate(shard_lines(lines, 1), start=1):
        name = f"checkeval-run-{run['id']}-{k:03d}.jsonl"
        up = client.files.create(file=(name, ("\n".join(part) + "\n").encode("utf-8"),
                                       "application/jsonl"), purpose="batch")
        stamp = now_iso()
        row = db.execute("INSERT INTO run_batch (run_id, judge_spec, mode, file_name, "
                         "n_requests, input_file_id, status, created_at, updated_at) VALUES "
                         "(?, ?, 'api', ?, ?, ?, 'uploaded', ?, ?)",
                         [run["id"], run["judge_spec"], name, len(part), up.id, stamp,
                          stamp]).lastrowid
        b = client.batches.create(input_file_id=up.id, endpoint=URL,
                                  completion_window=COMPLETION_WINDOW,
                                  metadata={"checkeval_run": str(run["id"])})
        db.execute("UPDATE run_batch SET batch_id = ?, status = ?, updated_at = ? WHERE id = ?",
                   [b.id, b.status, now_iso(), row])


def _counts(b: Any) -> dict[str, int]:
    c = getattr(b, "request_counts", None)
    return {k: int(getattr(c, k, 0) or 0) for k in ("total", "completed", "failed")}


def _why(b: Any) -> str:
    errs = getattr(getattr(b, "errors", None), "data", None) or []
    first = errs[0] if errs else None
    msg = getattr(first, "message", None) or getattr(first, "code", None) or ""
    return f"batch {b.id} {b.status}" + (f": {str(msg)[:300]}" if msg else "")


def execute_batch(path: str | Path, run_id: int,
                  progress: Callable[[dict[str, Any]], None] | None = None,
                  poll: float | None = None, judge: Any = None) -> dict[str, Any]:
    """Run ``run_id`` through the provider's Batch API to its end (blocking; see the module
    docstring). ``progress(view)`` gets ``{"batches", "completed", "failed", "total"}`` after
    each poll. Returns the final run row."""
    db = open_db(path)
    run = get_run(db, run_id)
    if run["status"] == "completed":
        return run
    check_batchable(run, api=True)
    wait = poll_seconds() if poll is None else poll
    stamp = now_iso()
    db.execute("UPDATE run SET batch = 'api', status = 'running', pid = ?, error = '', "
               "started_at = COALESCE(started_at, ?), heartbeat_at = ? WHERE id = ?",
               [os.getpid(), stamp, stamp, run_id])
    try:  # the estimate, once, before anything is submitted (as an online run stores it)
        record_estimate(db, run_id, offline_judge(db, run["judge_spec"]))
        client = (judge or get_judge(run["judge_spec"], db=db)).inner.client
        errors = _drive(db, path, client, run, wait, progress)
        if _status(db, run_id) == "cancelled":
            db.execute("UPDATE run SET finished_at = ?, pid = NULL WHERE id = ?",
                       [now_iso(), run_id])
            return get_run(db, run_id)
        res = finish_if_done(path, run_id)
        if res["pending"]:
            msg = "; ".join(errors) or "the batch ended"
            db.execute("UPDATE run SET status = 'failed', error = ?, finished_at = ?, "
                       "pid = NULL WHERE id = ?",
                       [f"{msg[:700]} — {res['pending']} request(s) still pending: resume "
                        f"(checkeval run --resume {run_id}) to submit them again",
                        now_iso(), run_id])
    except Exception as e:
        db.execute("UPDATE run SET status = 'failed', error = ?, finished_at = ?, pid = NULL "
                   "WHERE id = ?", [f"{type(e).__name__}: {e}"[:1000], now_iso(), run_id])
        raise
    return get_run(db, run_id)


def _status(db: Any, run_id: int) -> str:
    return db.execute("SELECT status FROM run WHERE id = ?", [run_id]).fetchone()[0]


def _drive(db: Any, path: str | Path, client: Any, run: dict[str, Any], wait: float,
           progress: Callable[[dict[str, Any]], None] | None) -> list[str]:
    """Submit (when no batch of the run is open) and poll until every open batch has ended
    and its output is stored; returns why batches ended without completing."""
    run_id = run["id"]
    if not _open(db, run_id) and _status(db, run_id) != "cancelled":
        lines = batch_requests(db, run_id, api=True)
        if lines:
            _submit(db, client, run, lines)
    errors: list[str] = []
    cancelled: set[str] = set()
    while True:
        rows = _open(db, run_id)
        if not rows:
            return errors
        stop = _status(db, run_id) == "cancelled"
        view = {"batches": [], "completed": 0, "failed": 0, "total": 0}
        for row in rows:
            if not row["batch_id"]:  # uploaded, the batch never created (killed): again
                b = client.batches.create(input_file_id=row["input_file_id"], endpoint=URL,
                                          completion_window=COMPLETION_WINDOW,
                                          metadata={"checkeval_run": str(run_id)})
                db.execute("UPDATE run_batch SET batch_id = ?, status = ? WHERE id = ?",
                           [b.id, b.status, row["id"]])
                row["batch_id"] = b.id
            if stop and row["batch_id"] not in cancelled and row["status"] not in TERMINAL:
                client.batches.cancel(row["batch_id"])
                cancelled.add(row["batch_id"])
            b = client.batches.retrieve(row["batch_id"])
            counts = _counts(b)
            view["batches"].append({"id": b.id, "status": b.status, **counts})
            for k in ("completed", "failed", "total"):
                view[k] += counts[k]
            db.execute("UPDATE run_batch SET status = ?, counts = ?, output_file_id = ?, "
                       "error_file_id = ?, updated_at = ? WHERE id = ?",
                       [b.status, json.dumps(counts), b.output_file_id or "",
                        b.error_file_id or "", now_iso(), row["id"]])
            if b.status in TERMINAL:
                if b.output_file_id:
                    data = client.files.content(b.output_file_id).read()
                    store_batch_results(path, run_id, [(f"batch {b.id} output", data)],
                                        finish=False)
                if b.status != "completed":
                    errors.append(_why(b))
                with transaction(db):
                    db.execute("UPDATE run_batch SET stored = 1, updated_at = ? WHERE id = ?",
                               [now_iso(), row["id"]])
        stamp = now_iso()
        db.execute("UPDATE run SET heartbeat_at = ?, progress_at = ? WHERE id = ?",
                   [stamp, stamp, run_id])
        if progress:
            progress(view)
        if _open(db, run_id):
            time.sleep(wait)
