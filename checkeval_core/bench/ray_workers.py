"""Items per second of one run on 1 … N Ray workers (``checkeval bench ray``).

Starts a local Ray with N CPUs once, then runs the same rocketeval run — the first ``items``
SummEval demo items, the seed questions of the published checklist's first two dimensions
(``bench/pool.py``'s task) — on k = 1 … N workers (``--engine ray``), each on a fresh
database (no answer cache), ``threads`` llama.cpp threads per worker. Items per second count
from the moment every worker has built its judge (the model load is reported apart), so the
ratio is the work's, not the start-up's. All rows come from one invocation.
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from checkeval_core.bench.pool import _task
from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.ray_engine import RayEngine, import_ray, init_ray
from checkeval_core.store import open_db


def one_run(tmp: Path, judge: str, n_items: int, workers: int) -> dict[str, Any]:
    path = tmp / f"ray-{workers}-{time.time_ns()}.db"
    db = open_db(path)
    _task(db, tmp, n_items)
    rid = create_run(db, "bench", judge, "rocketeval")
    engine = RayEngine(workers=workers)
    t0 = time.perf_counter()
    try:
        run = execute_run(path, rid, engine=engine)
        end = time.perf_counter()
    finally:
        engine.shutdown()  # its CPUs for the next row's workers
    answers = {(r[0], r[1]): (r[2], r[3]) for r in db.execute(
        "SELECT item_id, question_id, verdict, p_yes FROM answer WHERE run_id = ?", [rid])}
    work = end - (engine.ready_at or t0)
    return {"workers": workers, "status": run["status"], "items": n_items,
            "requests": len(answers), "errors": run["n_errors"],
            "start_s": round((engine.ready_at or t0) - t0, 1), "seconds": round(work, 1),
            "items_per_s": round(n_items / work, 4) if work > 0 else None, "answers": answers}


def bench_ray(workers: int = 2, items: int = 6, threads: int = 1,
              judge: str = "embedded") -> dict[str, Any]:
    """One row per k = 1 … ``workers``, with the speed-up over one worker and how many
    verdicts differ from the one-worker run (and the largest p(Yes) gap)."""
    os.environ["CHECKEVAL_EMBEDDED_THREADS"] = str(threads)  # the workers get it
    ray = import_ray()
    load_before = os.getloadavg()
    init_ray(num_cpus=workers)
    try:
        with tempfile.TemporaryDirectory() as t:
            runs = [one_run(Path(t), judge, items, k) for k in range(1, workers + 1)]
    finally:
        ray.shutdown()
    ref = runs[0]["answers"]
    rows = []
    for r in runs:
        gaps = [abs(p - ref[k][1]) for k, (_, p) in r["answers"].items()
                if k in ref and p is not None and ref[k][1] is not None]
        row = {k: v for k, v in r.items() if k != "answers"}
        row["speedup"] = round(r["items_per_s"] / runs[0]["items_per_s"], 2) \
            if r["items_per_s"] and runs[0]["items_per_s"] else None
        row["verdicts_differing"] = sum(1 for k, (v, _) in r["answers"].items()
                                        if k not in ref or ref[k][0] != v)
        row["max_p_yes_gap"] = round(max(gaps), 4) if gaps else None
        rows.append(row)
    return {"judge": judge, "threads_per_worker": threads, "rows": rows,
            "machine": f"{platform.machine()} · {os.cpu_count()} CPUs",
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()]}


def format_ray(res: dict[str, Any]) -> str:
    lines = ["| workers | start s | work s | items | items/s | × one worker | verdicts ≠ | "
             "max Δp(Yes) |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['workers']} | {r['start_s']} | {r['seconds']} | {r['items']} | "
              f"{r['items_per_s']} | {r['speedup']} | {r['verdicts_differing']} | "
              f"{r['max_p_yes_gap']} |" for r in res["rows"]]
    lines.append(f"{res['judge']}, {res['threads_per_worker']} thread(s) per worker; "
                 f"{res['machine']}; load average before {res['load_average_before']}, "
                 f"after {res['load_average_after']}")
    return "\n".join(lines)
