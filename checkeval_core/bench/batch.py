"""Storing batch results: CPU seconds to check and store a result file, at two sizes.

    .venv/bin/python -m checkeval_core.bench.batch [--items 3 6] [--json]

For each ``--items`` n: a fresh database with the demo (no pre-computed runs), a ``fake``
rocketeval run of the first n SummEval demo items written as one batch file
(``runs/batch.write_batch_files``), a result file in OpenAI's batch output format answering
every line with the fake judge's answer (log-probabilities of Yes and No), then
``runs/batch.store_batch_results`` timed in process CPU seconds (the machine is shared; wall
time is printed beside it). The ``openai`` package is imported before timing. Reports the
requests, seconds, microseconds per request and the per-request ratio of the larger size to
the smaller (≈ 1: the cost grows linearly with the file).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from checkeval_core.demo import load_demo
from checkeval_core.judges.batch_format import chat_completion
from checkeval_core.judges.fake import FakeJudge
from checkeval_core.runs.batch import (
    offline_judge,
    plan_run,
    store_batch_results,
    write_batch_files,
)
from checkeval_core.runs.jobs import create_run, get_run
from checkeval_core.store import open_db


def _result_line(i: int, cid: str, model: str, text: str, p_yes: float | None,
                 n_in: int) -> str:
    body = chat_completion(model, text, p_yes, n_in, 1, f"chatcmpl-{i}")
    return json.dumps({"id": f"batch_req_{i}", "custom_id": cid, "error": None,
                       "response": {"status_code": 200, "request_id": f"r{i}", "body": body}})


def one_size(items: int, workdir: Path) -> dict[str, Any]:
    workdir.mkdir(parents=True)
    path = workdir / "bench.db"
    db = open_db(path)
    os.environ["CHECKEVAL_DEMO_RUNS"] = "0"
    load_demo(db)
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=items)
    written = write_batch_files(db, rid, workdir / "in")
    run = get_run(db, rid)
    plan = plan_run(db, run, offline_judge(db, "fake"))
    fake = FakeJudge()
    lines = []
    for i, line in enumerate(Path(written["files"][0]).read_text("utf-8").splitlines()):
        cid = json.loads(line)["custom_id"]
        r = fake.binary([plan.pending[cid].request])[0]
        lines.append(_result_line(i, cid, "fake", r.raw, r.p_yes, r.tokens_in))
    data = ("\n".join(lines) + "\n").encode("utf-8")
    c0, w0 = time.process_time(), time.perf_counter()
    res = store_batch_results(path, rid, [("out.jsonl", data)])
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    assert res["status"] == "completed" and res["stored"] == len(lines), res
    return {"items": items, "requests": len(lines), "bytes": len(data),
            "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "us_per_request": round(cpu / len(lines) * 1e6, 1)}


def bench_batch(sizes: tuple[int, ...] = (3, 6)) -> dict[str, Any]:
    from openai.types.chat import ChatCompletion  # noqa: F401 - imported before timing

    with tempfile.TemporaryDirectory() as tmp:
        rows = [one_size(n, Path(tmp) / str(k)) for k, n in enumerate(sizes)]
    ratio = rows[-1]["us_per_request"] / rows[0]["us_per_request"] if len(rows) > 1 else None
    return {"rows": rows, "per_request_ratio": None if ratio is None else round(ratio, 2),
            "machine": f"{platform.machine()} · {os.cpu_count()} CPUs",
            "load": round(os.getloadavg()[0], 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, nargs="+", default=[3, 6])
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    res = bench_batch(tuple(a.items))
    if a.json:
        print(json.dumps(res))
        return
    for r in res["rows"]:
        print(f"{r['items']} items · {r['requests']} requests · {r['bytes']:,} bytes: "
              f"{r['cpu_s']} s CPU ({r['wall_s']} s wall) · {r['us_per_request']} µs/request")
    print(f"per-request ratio {res['per_request_ratio']} · {res['machine']} · load "
          f"{res['load']}")


if __name__ == "__main__":
    main()
