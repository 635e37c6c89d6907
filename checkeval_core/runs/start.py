"""Starting a batch of runs: every judge × every method on one task, checklist and item set.

The Run page and ``checkeval run --judge A --judge B --method M …`` both start runs through
:func:`start_runs`, so a batch is checked the same way everywhere: a malformed judge spec
starts nothing (not even the valid ones beside it), and a method that does not compute the
chosen primary aggregation keeps its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlite_utils

from checkeval_core.judges.keys import key_missing, key_problems
from checkeval_core.judges.registry import install_problems, spec_problems
from checkeval_core.runs.dedupe import create_run_once
from checkeval_core.runs.jobs import create_run
from checkeval_core.runs.registry import method as method_entry
from checkeval_core.store import db_path, transaction
from checkeval_core.team import guarded


@dataclass
class Started:
    """What :func:`start_runs` did: ``started`` (new run ids, in judge × method order),
    ``reused`` (an identical run was already pending or running: ``(run, judge, method)``)
    and ``errors`` (one message per refused judge or judge/method pair)."""

    started: list[int] = field(default_factory=list)
    reused: list[tuple[int, str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@guarded("run.start")
def start_runs(db: sqlite_utils.Database, task: str, judges: list[str], methods: list[str], *,
               checklist: str | int = "latest", limit: int | None = None,
               params: dict[str, Any] | None = None, primary: str | None = None,
               launch: Callable[[str, int], Any] | None = None,
               strict: bool = False) -> Started:
    """Create one run per judge × method; ``launch(db file, run id)`` starts each new one
    (:func:`checkeval_core.runs.start_background`: a worker process; None: the caller
    executes them, as the CLI does in the foreground).

    ``params`` are every run's options; ``primary`` is a primary aggregation given to the runs
    whose method computes it (the others keep their method's). Without ``strict`` (the Run
    page) a failing pair is reported in ``errors`` and the others start, and a run identical
    to one still pending or running is reused, never started twice (Enter and a click both
    submit). With ``strict`` (the CLI) the whole batch is one transaction: the first bad pair
    raises ValueError and nothing is created. Malformed judge specs always start nothing.
    """
    out = Started()
    judges = [j.strip() for j in judges if j and j.strip()]
    if not judges or not methods:
        out.errors.append("choose at least one judge and one method")
    out.errors += spec_problems(judges)
    if not out.errors:  # a refused key source starts nothing, before any judge call
        out.errors += key_problems(db, judges)
    second = str((params or {}).get("escalate_to") or "").strip()
    if second and not out.errors:  # the second judge is checked now, not after A's pass
        out.errors += [f"--escalate-to: {e}" for e in spec_problems([second])]
        if not out.errors:
            missing = key_missing(db, second)
            out.errors += [f"--escalate-to: {e}" for e in
                           key_problems(db, [second]) + ([missing] if missing else [])
                           + install_problems([second])]
    if not out.errors:
        for m in methods:
            try:
                method_entry(m)
            except ValueError as e:
                out.errors.append(str(e))
    if out.errors:
        if strict:
            raise ValueError("; ".join(out.errors))
        return out
    pairs = [(j, m) for j in judges for m in methods]
    if strict:
        with transaction(db):
            for j, m in pairs:
                out.started.append(create_run(db, task, j, m, checklist=checklist, limit=limit,
                                              params=_options(m, params, primary)))
    else:
        for j, m in pairs:
            try:
                rid, created = create_run_once(db, task, j, m, checklist=checklist, limit=limit,
                                               params=_options(m, params, primary))
            except (ValueError, LookupError) as e:  # bad input for this pair only
                out.errors.append(f"{j} / {m}: {e}")
                continue
            if created:
                out.started.append(rid)
            else:
                out.reused.append((rid, j, m))
    if launch is not None:
        for rid in out.started:
            launch(db_path(db), rid)
    return out


def _options(method: str, params: dict[str, Any] | None,
             primary: str | None) -> dict[str, Any]:
    opts = dict(params or {})
    if primary and primary in method_entry(method).aggregations:
        opts["aggregation"] = primary
    return opts
