"""What the Run page shows about runs in progress: an ETA that does not grow while a slow item
is being judged, and the run list with readable column names (the page only renders these)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from checkeval_core.runs.options import options_text


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


RUN_COLUMNS = {"id": "run", "judge_spec": "judge", "method": "method", "status": "status",
               "progress_done": "items done", "progress_total": "items", "tokens_in":
               "tokens in", "tokens_out": "tokens out", "cost": "cost ($)", "n_errors":
               "judge errors", "scoring_mode": "scoring", "checklist_version": "checklist v",
               "error": "message"}


def run_table(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run list with readable column names and each run's options as text."""
    return [{label: r.get(k) for k, label in RUN_COLUMNS.items()}
            | {"options": options_text(r.get("params"))} for r in runs]
