"""Creating, executing, resuming and cancelling runs.

A run executes item by item (items of one group together, so a prefix-reusing judge
evaluates a shared source once). For each item, the work whose answers are not stored yet is
sent to the judge (through the request cache), and the answers are committed at once: a run
killed at any moment keeps every answer it got, and a resumed run asks only for the missing
ones. Progress, tokens, cost and errors are written to the ``run`` row; the worker never
imports Streamlit and opens its own connection. Scores are computed when all items are done.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from checkeval_core.checklists.versions import get_version, version_by_id
from checkeval_core.config import cache_dir
from checkeval_core.judges.registry import get_judge, parse_spec
from checkeval_core.runs.escalation import cascade
from checkeval_core.runs.escalation import options as escalation
from checkeval_core.runs.escalation.estimate import stored_run_estimate
from checkeval_core.runs.estimate import record_actual, record_estimate
from checkeval_core.runs.options import (
    check_limit,
    check_method,
    check_params,
    max_error_share,
)
from checkeval_core.runs.registry import method as method_entry
from checkeval_core.runs.score_write import compute_scores
from checkeval_core.stats.values import pct
from checkeval_core.store import (
    NotFound,
    db_path,
    dumps,
    loads,
    now_iso,
    open_db,
    rows,
    task_id,
    transaction,
)
from checkeval_core.tasks import get_task, items
from checkeval_core.team import guarded, require


def run_params(method: str, version: dict[str, Any],
               params: dict[str, Any] | None) -> dict[str, Any]:
    """The options a run on ``version`` is stored with: the ones asked for, plus the method's
    primary aggregation and, on a per-query checklist set, ``instance`` (supervised scores fit
    within a query) unless the user chose otherwise."""
    p = dict(params or {})
    p.setdefault("aggregation", method_entry(method).primary)
    if version.get("kind") == "instance":
        p.setdefault("instance", True)
    return p


@guarded("run.start")
def create_run(db: sqlite_utils.Database, task: str, judge_spec: str, method: str,
               checklist: str | int = "latest", limit: int | None = None,
               item_ids: list[str] | None = None, params: dict[str, Any] | None = None) -> int:
    """Register a run (status ``pending``); returns its id."""
    check_method(method)
    check_limit(limit)  # the one rule the CLI and the Run page share
    check_params(method, dict(params or {}))
    escalation.check_options(db, task, judge_spec, dict(params or {}), method)
    spec = parse_spec(judge_spec).spec
    tid = task_id(db, task)
    version = get_version(db, task, checklist)
    chosen = items(db, task, limit=limit, item_ids=item_ids)
    if not chosen:
        raise ValueError(f"task {task!r}: no items selected")
    if item_ids is not None and len(chosen) != len(set(item_ids)):
        missing = sorted(set(item_ids) - {i["item_id"] for i in chosen})
        raise ValueError(f"task {task!r} has no item(s) {', '.join(missing)}")
    p = run_params(method, version, params)
    return db.execute(
        "INSERT INTO run (task_id, checklist_version_id, judge_spec, method, params, item_ids, "
        "status, progress_total, created_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
        [tid, version["id"], spec, method, dumps(p), dumps([i["id"] for i in chosen]),
         len(chosen), now_iso()]).lastrowid


def get_run(db: sqlite_utils.Database, run_id: int) -> dict[str, Any]:
    r = rows(db, "SELECT r.*, t.name AS task, v.version AS checklist_version FROM run r "
                 "JOIN task t ON t.id = r.task_id "
                 "LEFT JOIN checklist_version v ON v.id = r.checklist_version_id WHERE r.id = ?",
             [run_id])
    if not r:
        raise NotFound(f"no run {run_id}")
    run = r[0]
    run["params"] = loads(run["params"], {})
    run["item_ids"] = loads(run["item_ids"], [])
    run["n_answers"] = answer_count(db, run_id)
    run["alive"] = worker_alive(run["pid"])
    return run


def answer_count(db: sqlite_utils.Database, run_id: int) -> int:
    """How many answers a run has stored so far."""
    return db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ?", [run_id]).fetchone()[0]


def list_runs(db: sqlite_utils.Database, task: str | None = None) -> list[dict[str, Any]]:
    sql = ("SELECT r.id, t.name AS task, r.judge_spec, r.method, r.status, r.progress_done, "
           "r.progress_total, r.tokens_in, r.tokens_out, r.cost, r.n_errors, r.scoring_mode, "
           "r.created_at, r.started_at, r.finished_at, r.progress_at, r.error, r.pid, r.params, "
           "json_array_length(r.item_ids) AS n_items, v.version AS "
           "checklist_version FROM run r JOIN task t ON t.id = r.task_id LEFT JOIN "
           "checklist_version v ON v.id = r.checklist_version_id")
    params: list[Any] = []
    if task:
        sql += " WHERE t.name = ?"
        params.append(task)
    return rows(db, sql + " ORDER BY r.id DESC", params)


class RunBusy(ValueError):
    """The run's worker is still alive: it cannot be resumed twice."""


@guarded("run.start")
def prepare_resume(db: sqlite_utils.Database, run_id: int) -> dict[str, Any]:
    """Make a run resumable — what the CLI's ``--resume`` and the Run page's *Resume* both do.

    A completed run is left alone (``{"status": "completed", "reasked": 0}``). Otherwise, in
    one transaction: the answers that carry a judge error (transport/HTTP failures, never
    cached) are deleted so the resumed run asks them again — unparsable answers are real
    answers and are kept — and the run goes back to ``pending``. Raises :class:`RunBusy` when
    another live process is running it, :class:`NotFound` for an unknown run.
    """
    run = get_run(db, run_id)
    if run["status"] == "completed":
        return {"run": run_id, "status": "completed", "reasked": 0}
    if run["status"] in ("running", "cancelled") and run["alive"] and \
            run["pid"] != os.getpid():
        raise RunBusy(f"run {run_id} is still {run['status']} (pid {run['pid']}): "
                      "its worker finishes the current item first")
    with transaction(db):
        n = db.execute("DELETE FROM answer WHERE run_id = ? AND error != ''", [run_id]).rowcount
        # the time the run sat stopped is not part of its duration: move its start (and the
        # last progress, which the ETA measures from the start) forward by the pause
        start, prog = _after_pause(run, now_iso())
        db.execute("UPDATE run SET status = 'pending', error = '', finished_at = NULL, "
                   "started_at = ?, progress_at = ?, n_errors = MAX(0, n_errors - ?) "
                   "WHERE id = ?", [start, prog, n, run_id])
    return {"run": run_id, "status": "pending", "reasked": n}


def _after_pause(run: dict[str, Any], now: str) -> tuple[str | None, str | None]:
    """``(started_at, progress_at)`` of a run about to resume, both moved forward by the time
    since it stopped (``finished_at``; a killed worker's last ``heartbeat_at``)."""
    stopped = run.get("finished_at") or run.get("heartbeat_at")
    if not run.get("started_at") or not stopped:
        return run.get("started_at"), run.get("progress_at")
    pause = datetime.fromisoformat(now) - datetime.fromisoformat(stopped)
    if pause.total_seconds() <= 0:
        return run["started_at"], run.get("progress_at")

    def shift(iso: str | None) -> str | None:
        return None if not iso else (datetime.fromisoformat(iso) + pause).isoformat(
            timespec="milliseconds")

    return shift(run["started_at"]), shift(run.get("progress_at"))


def error_share(db: sqlite_utils.Database, run_id: int) -> tuple[int, int]:
    """(answers with a judge error, all answers) of a run."""
    r = db.execute("SELECT COALESCE(SUM(error != ''), 0), COUNT(*) FROM answer WHERE run_id = ?",
                   [run_id]).fetchone()
    return int(r[0]), int(r[1])


@guarded("run.start")
def cancel_run(db: sqlite_utils.Database, run_id: int) -> None:
    """Ask a run to stop after the current item (the worker checks between items)."""
    db.execute("UPDATE run SET status = 'cancelled' WHERE id = ? AND status IN "
               "('pending', 'running')", [run_id])


def worker_alive(pid: int | None) -> bool:
    """Whether the worker process ``pid`` still runs (a zombie does not)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:  # a zombie (exited child not yet reaped) is not alive
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True


def start_background(path: str | Path, run_id: int, engine: Sequence[str] = ()) -> int:
    """Run ``run_id`` in a detached worker process (``checkeval run --resume``, with the
    ``engine`` options of ``runs/ray_engine.engine_args``); returns pid. A worker that exits
    with an error before it starts the run (a Ray cluster it cannot join) leaves the run
    failed with its last line of output, so the page says why and offers *Resume*. Behind a
    login, only a role that may start runs may start its worker (which spends as the local
    operator), whoever called this."""
    db = open_db(path)
    try:
        require(db, "run.start")
    finally:
        db.close()
    log_dir = cache_dir() / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_file = log_dir / f"run-{run_id}.log"
    with open(log_file, "ab") as log:  # the worker holds its own copy
        start = log.tell()
        proc = subprocess.Popen([sys.executable, "-m", "checkeval_core", "--db", str(path),
                                 "run", "--resume", str(run_id), "--quiet", *engine],
                                stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    db = open_db(path)
    try:  # the worker writes its pid too; not over a run it has already finished
        db.execute("UPDATE run SET pid = ? WHERE id = ? AND status IN ('pending', 'running')",
                   [proc.pid, run_id])
    finally:
        db.close()
    # reaped when it ends: unwaited, a finished worker stayed a zombie of the app server for
    # as long as the server ran (one process-table entry per run)
    threading.Thread(target=_reap, args=(proc, path, run_id, log_file, start),
                     name=f"reap-run-{run_id}", daemon=True).start()
    return proc.pid


def _reap(proc: subprocess.Popen[bytes], path: str | Path, run_id: int, log_file: Path,
          start: int) -> None:
    """Wait for a worker; one that failed before it started its run fails the run."""
    if proc.wait() == 0:
        return
    try:
        with open(log_file, "rb") as f:
            f.seek(start)
            lines = [ln.strip() for ln in f.read().decode("utf-8", "replace").splitlines()]
        why = next((ln for ln in reversed(lines) if ln), f"exit status {proc.returncode}")
        db = open_db(path)
        try:  # only a run this worker never started (still pending under its pid)
            db.execute("UPDATE run SET status = 'failed', error = ?, finished_at = ?, "
                       "pid = NULL WHERE id = ? AND status = 'pending' AND pid = ?",
                       [f"the worker stopped before the run started: {why}"[:1000], now_iso(),
                        run_id, proc.pid])
        finally:
            db.close()
    except (OSError, sqlite3.Error):  # the log or the database gone meanwhile: Resume remains
        pass


def _store(db: sqlite_utils.Database, run_id: int, item_pk: int, answers: list[dict[str, Any]],
           cached: bool, res: Any, judge: str = "") -> int:
    n = 0
    for a in answers:
        cur = db.execute(
            "INSERT OR IGNORE INTO answer (run_id, item_id, question_id, unit, dimension, verdict, "
            "p_yes, value, mode, raw, error, cached, tokens_in, tokens_out, latency_ms, "
            "created_at, judge) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [run_id, item_pk, a["question_id"], a["unit"], a["dimension"], a["verdict"],
             a["p_yes"], a["value"], a["mode"], (a["raw"] or "")[:2000], a["error"] or "",
             int(cached), res.tokens_in, res.tokens_out, res.latency_ms, now_iso(), judge])
        n += cur.rowcount
    return n


def _todo(db: sqlite_utils.Database, run_id: int, it: dict[str, Any], plan: Any,
          ctx: dict[str, Any]) -> list[Any]:
    """The work of item ``it`` whose answers are not stored yet."""
    have = {(r[0], r[1]) for r in db.execute(
        "SELECT question_id, unit FROM answer WHERE run_id = ? AND item_id = ?",
        [run_id, it["id"]])}
    return [w for w in plan(it, ctx) if not all((q, u) in have for q, u, _ in w.targets)]


def _save(db: sqlite_utils.Database, run: dict[str, Any], batch: list[Any], results: list[Any],
          modes: set[str]) -> None:
    """Parse and store the answers to ``batch`` and count them on the run, in one
    transaction (the one store path of every engine)."""
    with transaction(db):
        n_err = 0
        for w, res in zip(batch, results):
            answers = w.parse(res)
            modes.update(a["mode"] for a in answers)
            n_err += bool(res.error)
            _store(db, run["id"], w.item_pk, answers, res.cached, res, run["judge_spec"])
        db.execute("UPDATE run SET n_errors = n_errors + ?, tokens_in = tokens_in + ?,"
                   " tokens_out = tokens_out + ?, heartbeat_at = ? WHERE id = ?",
                   [n_err, sum(r.tokens_in for r in results if not r.cached),
                    sum(r.tokens_out for r in results if not r.cached), now_iso(), run["id"]])


def _cancelled(db: sqlite_utils.Database, run_id: int) -> bool:
    return db.execute("SELECT status FROM run WHERE id = ?", [run_id]).fetchone()[0] == \
        "cancelled"


def execute_run(path: str | Path, run_id: int,
                progress: Any = None, judge: Any = None, engine: Any = None) -> dict[str, Any]:
    """Execute (or resume) a run to the end; blocking. ``progress(done, total)`` is called
    after each item. ``engine`` (``runs/ray_engine.RayEngine``) has the items answered by
    workers elsewhere, stored here as they arrive (its owner shuts it down); None: this
    process asks the judge.
    Returns the final run row."""
    db = open_db(path)
    run = get_run(db, run_id)
    if run["status"] == "completed":
        return run
    task = get_task(db, run["task"])
    content = version_by_id(db, run["checklist_version_id"])["content"]
    m = method_entry(run["method"])
    db.execute("UPDATE run SET status = 'running', pid = ?, started_at = COALESCE(started_at, ?),"
               " heartbeat_at = ?, error = '' WHERE id = ?", [os.getpid(), now_iso(), now_iso(),
                                                              run_id])
    try:  # a judge that cannot be built (a refused key source) fails the run, said on it
        j = judge or (engine.judge(run["judge_spec"], db) if engine is not None
                      else get_judge(run["judge_spec"], db=db))
    except Exception as e:
        db.execute("UPDATE run SET status = 'failed', error = ?, finished_at = ?, pid = NULL "
                   "WHERE id = ?", [f"{type(e).__name__}: {e}"[:1000], now_iso(), run_id])
        raise
    # the estimate (both judges of an escalating run), once, before any judge call
    cost_before = record_estimate(db, run_id, j, stored_run_estimate)
    # what a planner may read (see runs/methods.py); params is the run's own dict, so a
    # prepare step that stores a derived option (SEAL's weights) is seen by the planner
    ctx = {"kind": task["kind"], "content": content, "params": run["params"],
           "definitions": {d["name"]: d.get("definition", "") for d in content["dimensions"]},
           "db": db, "run": run, "judge": j}
    its = items(db, run["task"], pks=list(run["item_ids"]))  # only the run's items
    its.sort(key=lambda i: (i["group_id"], i["position"]))
    done = 0
    modes: set[str] = set()

    def stopped() -> dict[str, Any]:
        db.execute("UPDATE run SET finished_at = ?, pid = NULL WHERE id = ?",
                   [now_iso(), run_id])
        return get_run(db, run_id)

    def item_done(n: int) -> None:
        stamp = now_iso()
        db.execute("UPDATE run SET progress_done = ?, heartbeat_at = ?, progress_at = ?, "
                   "cost = ? WHERE id = ?", [n, stamp, stamp, getattr(j, "cost", 0.0), run_id])
        if progress:
            progress(n, len(its))

    try:
        if m.prepare:
            m.prepare(ctx)
        if engine is not None and not engine.drive(
                j, its, lambda it: _todo(db, run_id, it, m.plan, ctx),
                lambda batch, results: _save(db, run, batch, results, modes),
                lambda: _cancelled(db, run_id), item_done):
            return stopped()
        # a pool of servers takes several items per call (each item's questions to one server)
        step = max(1, int(getattr(j.capabilities, "items_at_once", 1) or 1))
        for start in range(0, len(its) if engine is None else 0, step):
            window = its[start:start + step]
            if _cancelled(db, run_id):
                return stopped()
            todo = [w for it in window for w in _todo(db, run_id, it, m.plan, ctx)]
            for kind in ("binary", "generate"):
                batch = [w for w in todo if w.kind == kind]
                if batch:
                    _save(db, run, batch, (j.binary if kind == "binary" else j.generate)(
                        [w.request for w in batch]), modes)
            done += len(window)
            item_done(done)
        limit = max_error_share(run["params"])
        if escalation.enabled(run["params"]):
            esc = cascade.escalate(db, run, ctx, its, m.plan)
            if esc is None:  # cancelled meanwhile
                return stopped()
            b_problem = cascade.b_error_problem(esc, limit, run_id)
            if b_problem:  # the second judge's errors fail the run as an ordinary run's do
                db.execute("UPDATE run SET status = 'failed', error = ?, finished_at = ?, "
                           "pid = NULL WHERE id = ?", [b_problem, now_iso(), run_id])
                return get_run(db, run_id)
        n_err, n_all = error_share(db, run_id)
        if n_all and n_err / n_all > limit:
            first = db.execute("SELECT error FROM answer WHERE run_id = ? AND error != '' "
                               "ORDER BY id LIMIT 1", [run_id]).fetchone()[0]
            msg = (f"{n_err} of {n_all} answers ({pct(n_err / n_all)}) are judge errors, above "
                   f"max_error_share={limit:g}; first error: {first[:300]} — fix the judge and "
                   f"resume (checkeval run --resume {run_id}) to ask them again")
            db.execute("UPDATE run SET status = 'failed', error = ?, finished_at = ?, "
                       "pid = NULL WHERE id = ?", [msg, now_iso(), run_id])
            return get_run(db, run_id)
        compute_scores(db, run_id)
        mode = "logprob" if modes == {"logprob"} else ("text" if modes == {"text"} else
                                                       "mixed" if modes else "")
        db.execute("UPDATE run SET status = 'completed', finished_at = ?, scoring_mode = ?, "
                   "pid = NULL WHERE id = ?", [now_iso(), mode, run_id])
    except Exception as e:
        db.execute("UPDATE run SET status = 'failed', error = ?, finished_at = ?, pid = NULL "
                   "WHERE id = ?", [f"{type(e).__name__}: {e}"[:1000], now_iso(), run_id])
        raise
    finally:
        record_actual(db, run_id, j, cost_before)  # beside the estimate, on every exit
    return get_run(db, run_id)


def wait_for(db_file: str | Path, run_id: int, timeout: float = 600) -> dict[str, Any]:
    """Poll until the run leaves pending/running (for tests and scripts)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        run = get_run(open_db(db_file), run_id)
        if run["status"] not in ("pending", "running"):
            return run
        time.sleep(0.2)
    raise TimeoutError(f"run {run_id} still running after {timeout} s")


__all__ = ["create_run", "execute_run", "start_background", "cancel_run", "get_run",
           "list_runs", "wait_for", "db_path", "prepare_resume", "RunBusy", "error_share"]
