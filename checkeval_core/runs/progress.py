"""What the Run page shows about runs: an ETA that does not grow while a slow item is being
judged, each run's duration, which actions a run allows, and the run list with readable column
names (the page only renders these)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlite_utils

from checkeval_core.runs.jobs import answer_count, list_runs, worker_alive
from checkeval_core.runs.labels import escalates_to, run_label
from checkeval_core.runs.options import options_text
from checkeval_core.store import loads


def eta_seconds(to_last_item_s: float | None, since_last_item_s: float | None,
                done_items: int, total_items: int) -> float | None:
    """Seconds left: the time per finished item (start → last finished item, over the items
    done) × the items left, minus the time already spent on the current item — so the
    estimate counts down while a slow item is judged (the old "time spent / items done" grew).
    None until an item is done; never below 0 (the current item is then taking longer than
    the average)."""
    if done_items <= 0 or to_last_item_s is None or since_last_item_s is None:
        return None
    if done_items >= total_items:
        return 0.0
    per_item = to_last_item_s / done_items
    return max(0.0, per_item * (total_items - done_items) - since_last_item_s)


def run_eta(run: dict[str, Any], now: datetime | None = None) -> float | None:
    """:func:`eta_seconds` for a run row (``started_at``, ``progress_at``, progress)."""
    start, last = run.get("started_at"), run.get("progress_at")
    if not start or not last:
        return None
    to_last = (datetime.fromisoformat(last) - datetime.fromisoformat(start)).total_seconds()
    return eta_seconds(to_last, seconds_since(last, now), run["progress_done"],
                       run["progress_total"])


def seconds_since(iso: str | None, now: datetime | None = None) -> float | None:
    """Seconds from an ISO timestamp (as the store writes them) to ``now``."""
    if not iso:
        return None
    t = datetime.fromisoformat(iso)
    now = now or datetime.now(t.tzinfo or UTC)
    return (now - t).total_seconds()


def run_duration(run: dict[str, Any], now: datetime | None = None) -> float | None:
    """Seconds from a run's start to its end (to ``now`` while it has not ended); None if it
    never started."""
    end = run.get("finished_at")
    s = seconds_since(run.get("started_at"), datetime.fromisoformat(end) if end else now)
    return None if s is None else max(0.0, s)


def duration_text(run: dict[str, Any], now: datetime | None = None) -> str:
    """``"2 min 05 s"`` (``"… so far"`` while pending or running), ``"not started"``."""
    s = run_duration(run, now)
    if s is None:
        return "not started"
    s = round(s)
    text = (f"{s} s" if s < 60 else f"{s // 60} min {s % 60:02d} s" if s < 3600
            else f"{s // 3600} h {s % 3600 // 60:02d} min")
    return text + (" so far" if run.get("status") in ("pending", "running")
                   or (run.get("status") == "cancelled" and not run.get("finished_at")
                       and run.get("pid")) else "")


def stopping(run: dict[str, Any]) -> bool:
    """A cancelled run whose worker is still finishing its current item: the status says
    ``cancelled`` at once, but the worker only stops between items (and then writes
    ``finished_at`` and clears ``pid``)."""
    return (run["status"] == "cancelled" and not run.get("finished_at")
            and bool(run.get("pid")) and bool(run.get("alive")))


def status_text(run: dict[str, Any]) -> str:
    """The status a person reads: ``cancelling…`` while a cancelled run's worker still
    computes its current item, else the stored status."""
    return "cancelling…" if stopping(run) else run["status"]


def actions(run: dict[str, Any]) -> dict[str, bool]:
    """Which buttons a run allows: *Cancel* while pending or running; *Resume* when it is
    cancelled or failed, or pending/running with its worker gone (killed) — not while a
    cancelled run's worker is still stopping (a second worker would run beside it). A
    completed run allows neither."""
    active = run["status"] in ("pending", "running")
    return {"cancel": active,
            "resume": (run["status"] in ("cancelled", "failed") and not stopping(run))
            or (active and not run["alive"])}


def panel(db: sqlite_utils.Database, task: str, now: datetime | None = None) -> dict[str, Any]:
    """Everything the Run page's live panel shows for a task's runs, newest first:
    ``runs`` (rows of :func:`list_runs` plus ``actions``, and ``alive``, ``n_answers`` for
    pending/running runs),
    ``active`` (progress bar fraction and text of pending/running runs, and whether the worker
    is gone), ``recent`` (one line per finished run among the 5 newest) and ``table``."""
    runs = list_runs(db, task)
    active, recent = [], []
    for r in runs:
        r.update(alive=False, n_answers=None)
        running = r["status"] in ("pending", "running")
        if running:  # only these need the worker and answers (the row is already read)
            r.update(alive=worker_alive(r["pid"]), n_answers=answer_count(db, r["id"]))
        elif r["status"] == "cancelled" and r["pid"] and not r["finished_at"]:
            r["alive"] = worker_alive(r["pid"])  # still finishing its current item?
        r["status_text"] = status_text(r)
        r["actions"] = actions(r)
        if running:
            left = run_eta(r, now)
            eta = "" if left is None else (f" · about {left:.0f} s left" if left > 0 else
                                           " · finishing the current item")
            fraction = r["progress_done"] / max(1, r["progress_total"])
            b = second_judge_pass(r)
            if b:  # the first judge is done: the bar and the text follow the second's pass
                fraction, eta = b["done"] / max(1, b["total"]), (
                    f" · second judge {b['judge']}: {b['done']} of {b['total']}")
            active.append({"run": r["id"], "fraction": fraction,
                           "text": f"Run {r['id']} · {judge_text(r)} · {r['method']} · "
                                   f"{r['progress_done']}/{r['progress_total']} items · "
                                   f"{r['n_answers']} answers · {r['tokens_in']} tokens in · "
                                   f"{r['n_errors']} errors{eta}",
                           "gone": r["status"] == "running" and not r["alive"]})
    for r in runs[:5]:
        if r["status"] not in ("pending", "running"):
            recent.append(f"Run {run_label({**r, 'status': None})} — "
                          + (f"{r['status_text']} (the worker stops after its current item)"
                             if stopping(r) else r["status"])
                          + (f": {r['error']}" if r["error"] else ""))
    return {"runs": runs, "active": active, "recent": recent, "table": run_table(runs, now)}


def second_judge_pass(run: dict[str, Any]) -> dict[str, Any] | None:
    """An escalating run in its second judge's pass (the first judge has answered every item):
    ``{"judge", "done", "total"}`` — B's requests sent of those planned — else None."""
    params = run.get("params")
    params = loads(params, {}) if isinstance(params, str) else (params or {})
    b = (params.get("escalation") or {}).get("b_progress") if isinstance(params, dict) else None
    if not b or run.get("progress_done", 0) < run.get("progress_total", 0):
        return None
    return {"judge": escalates_to(run) or "?", "done": int(b.get("done", 0)),
            "total": int(b.get("total", 0))}


def judge_text(run: dict[str, Any]) -> str:
    """``embedded`` or, for an escalating run, ``embedded → embedded:quality``."""
    b = escalates_to(run)
    return f"{run['judge_spec']} → {b}" if b else str(run["judge_spec"])


RUN_COLUMNS = {"id": "run", "judge_spec": "judge", "method": "method", "status": "status",
               "progress_done": "items done", "progress_total": "items", "tokens_in":
               "tokens in", "tokens_out": "tokens out", "cost": "cost ($)", "n_errors":
               "judge errors", "scoring_mode": "scoring", "checklist_version": "checklist v",
               "error": "message"}


def run_table(runs: list[dict[str, Any]], now: datetime | None = None) -> list[dict[str, Any]]:
    """The run list with readable column names, each run's duration and options as text."""
    return [{label: r.get(k) for k, label in RUN_COLUMNS.items()}
            | {"status": r.get("status_text") or r.get("status"),
               "duration": duration_text(r, now), "options": options_text(r.get("params"))}
            for r in runs]
