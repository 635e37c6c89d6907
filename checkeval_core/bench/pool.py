"""Throughput of one run on 1 … N OpenAI-compatible servers: a pool of ``llama_cpp.server``
processes serving the embedded judge's GGUF on this machine.

    .venv/bin/python -m checkeval_core.bench.pool [--servers 2] [--items 8] [--threads 1] [--rounds 1] [--out FILE.json]

Starts ``--servers`` servers (``--threads`` threads each) on free 127.0.0.1 ports, then runs
the same rocketeval run — the first ``--items`` SummEval demo items, the seed questions of
the published checklist's first two dimensions — with the first k servers as one judge
(k = 1: a plain ``openai-compat`` spec; k > 1: a pool), each on a fresh database (no answer
cache), ``--rounds`` times with the order of k reversed every other round. Prints seconds,
requests per second and the ratio to one server per k, how many verdicts differ from the
(first) one-server run and the largest p(Yes) gap to it. Servers are stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.config import data_dir, repo_root
from checkeval_core.datasets import import_file
from checkeval_core.judges.model_files import model_path
from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.options import check_out_path
from checkeval_core.store import open_db

SERVE = ("import runpy\n"
         "from checkeval_core.judges.embedded import llama_model_defaults\n"
         "with llama_model_defaults():\n"
         "    runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)\n")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_servers(n: int, threads: int, log_dir: Path) -> list[tuple[subprocess.Popen, str]]:
    gguf = model_path("")
    out = []
    for i in range(n):
        port = _free_port()
        log = open(log_dir / f"server-{i}.log", "w")
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVE, "--model", str(gguf), "--model_alias", "judge",
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--seed", "1234",
             "--n_threads", str(threads), "--n_threads_batch", str(threads)],
            stdout=log, stderr=subprocess.STDOUT, cwd=repo_root(),
            env=dict(os.environ, PYTHONPATH=str(repo_root())))
        out.append((proc, f"http://127.0.0.1:{port}/v1"))
    deadline = time.time() + 600
    for proc, url in out:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited {proc.returncode} (logs in {log_dir})")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError("a server did not start within 600 s")
            time.sleep(0.5)
    return out


def _task(db: Any, tmp: Path, n_items: int) -> None:
    rows = [json.loads(line) for line in
            (data_dir() / "summeval_demo.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()][:n_items]
    src = tmp / "items.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    import_file(db, src, "bench", kind="summarization")
    full = json.loads((data_dir() / "checklists" / "summeval.json").read_text(encoding="utf-8"))
    cut = {}
    for d, v in list(full.items())[:2]:
        cut[d] = {"definition": v["definition"],
                  "sub_dimensions": {s: {"seed": q["seed"]} for s, q in
                                     v["sub_dimensions"].items()}}
    c = tmp / "checklist.json"
    c.write_text(json.dumps(cut), encoding="utf-8")
    import_checklist(db, "bench", c)
    freeze(db, "bench")


def one_run(urls: list[str], n_items: int, tmp: Path) -> dict[str, Any]:
    path = tmp / f"pool-{len(urls)}-{time.time_ns()}.db"
    db = open_db(path)
    _task(db, tmp, n_items)
    spec = f"openai-compat:{','.join(urls)}#judge"
    rid = create_run(db, "bench", spec, "rocketeval")
    t0 = time.perf_counter()
    run = execute_run(path, rid)
    seconds = time.perf_counter() - t0
    answers = {(r[0], r[1]): (r[2], r[3]) for r in db.execute(
        "SELECT item_id, question_id, verdict, p_yes FROM answer WHERE run_id = ?", [rid])}
    return {"servers": len(urls), "status": run["status"], "seconds": round(seconds, 2),
            "requests": len(answers), "errors": run["n_errors"], "answers": answers}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servers", type=int, default=2)
    ap.add_argument("--items", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if args.servers < 1 or args.items < 1 or args.threads < 1 or args.rounds < 1:
        ap.error("--servers, --items, --threads and --rounds must be ≥ 1")
    if args.out:
        try:  # before the servers start: the file is written after all the work
            check_out_path(args.out)
        except ValueError as e:
            ap.error(str(e))
    os.environ.setdefault("CHECKEVAL_CONCURRENCY", "1")  # a llama.cpp server answers one at a time
    os.environ.setdefault("CHECKEVAL_TIMEOUT", "600")
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        servers = start_servers(args.servers, args.threads, tmp)
        try:
            for r in range(args.rounds):
                ks = list(range(1, args.servers + 1))
                for k in (ks if r % 2 == 0 else ks[::-1]):
                    res = one_run([u for _, u in servers[:k]], args.items, tmp)
                    res["round"] = r
                    results.append(res)
                    print(f"round {r}: {k} server(s): {res['seconds']} s, {res['requests']} "
                          f"requests, {res['errors']} errors, {res['status']}", flush=True)
        finally:
            for proc, _ in servers:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
    base = [x for x in results if x["servers"] == 1]
    ref = base[0]["answers"] if base else {}
    rows = []
    for k in range(1, args.servers + 1):
        mine = [x for x in results if x["servers"] == k]
        secs = sum(x["seconds"] for x in mine) / len(mine)
        n = mine[0]["requests"]
        flips = sum(1 for x in mine for key, (v, _) in x["answers"].items()
                    if key not in ref or ref[key][0] != v)
        gaps = [abs(p - ref[key][1]) for x in mine for key, (_, p) in x["answers"].items()
                if key in ref and p is not None and ref[key][1] is not None]
        rows.append({"servers": k, "seconds": round(secs, 1), "requests": n,
                     "requests_per_s": round(n / secs, 3) if secs else None,
                     "speedup": round(base and (sum(x["seconds"] for x in base) / len(base))
                                      / secs, 2) if secs else None,
                     "verdicts_differing_from_one_server": flips,
                     "max_p_yes_gap": round(max(gaps), 4) if gaps else None})
    print("\n| servers | seconds | requests | requests/s | × one server | verdicts ≠ one server "
          "| max |Δ p(Yes)| |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['servers']} | {row['seconds']} | {row['requests']} | "
              f"{row['requests_per_s']} | {row['speedup']} | "
              f"{row['verdicts_differing_from_one_server']} | {row['max_p_yes_gap']} |")
    meta = {"machine": f"{platform.machine()} · {os.cpu_count()} CPUs",
            "load_average": os.getloadavg(), "threads_per_server": args.threads,
            "items": args.items, "rounds": args.rounds}
    print(json.dumps(meta))
    if args.out:
        Path(args.out).write_text(json.dumps({"meta": meta, "rows": rows, "runs": [
            {k: v for k, v in x.items() if k != "answers"} for x in results]}, indent=1))


if __name__ == "__main__":
    main()
