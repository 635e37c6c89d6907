"""``checkeval bench quality``: reproduce the papers' correlation protocol on a benchmark.

Imports the first N documents (SummEval: × 16 systems) or contexts (Topical-Chat: × 6
responses) from the benchmark folder into a scratch task, imports the CheckEval authors'
published checklist (seed questions only, or all), freezes it, runs the judge with the method,
and reports the papers' layout: SummEval sample-level (per-document) Spearman ρ and Kendall τ;
Topical-Chat turn-level Spearman ρ and Pearson r; per dimension and averaged.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from checkeval_core.analysis.report import analyze_runs
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import db_path, open_db

BENCHMARKS = {
    "summeval": {"file": "summeval.jsonl", "checklist": "summeval.json", "kind":
                 "summarization", "level": "sample_level", "coefs": ("spearman", "kendall"),
                 "group": "doc_id"},
    "topical_chat": {"file": "topical_chat.jsonl", "checklist": "topical_chat.json", "kind":
                     "dialogue", "level": "dataset_level", "coefs": ("spearman", "pearson"),
                     "group": "context_id"},
}


def default_data_dir() -> Path:
    from checkeval_core.config import repo_root

    return repo_root().parent / "shared" / "benchmarks"


def bench_quality(benchmark: str, data: str | Path | None, judge: str, method: str,
                  docs: int = 2, questions: str = "seed", db_file: str | Path | None = None,
                  n_boot: int = 200) -> dict[str, Any]:
    if benchmark not in BENCHMARKS:
        raise ValueError(f"--benchmark {benchmark!r}: use summeval or topical_chat")
    b = BENCHMARKS[benchmark]
    src = Path(data) if data else default_data_dir()
    if not (src / b["file"]).exists():
        raise ValueError(f"{src / b['file']}: not found (give --data DIR)")
    tmp = Path(tempfile.mkdtemp())
    db = open_db(db_file or tmp / "quality.db")
    rows, groups = [], []
    for line in (src / b["file"]).read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        g = str(r[b["group"]])
        if g not in groups:
            if len(groups) == docs:
                continue
            groups.append(g)
        rows.append({"id": r.get("id") or f"{g}-{r['system_id']}", "group_id": g,
                     "system_id": r["system_id"], "source": r.get("source", ""),
                     "context": r.get("context", ""), "fact": r.get("fact", ""),
                     "reference": r.get("reference", ""), "output": r["output"],
                     "scores": r["scores"]})
    task = f"{benchmark}-{docs}-{questions}"
    if not db.execute("SELECT 1 FROM task WHERE name = ?", [task]).fetchone():
        f = tmp / "data.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        import_file(db, f, task, kind=b["kind"])
        ck = json.loads((src / "checklists" / b["checklist"]).read_text(encoding="utf-8"))
        if questions == "seed":
            ck = {d: {"definition": v["definition"], "sub_dimensions": {
                s: {"seed": q["seed"]} for s, q in v["sub_dimensions"].items()}}
                for d, v in ck.items()}
        cf = tmp / "checklist.json"
        cf.write_text(json.dumps(ck), encoding="utf-8")
        import_checklist(db, task, cf)
        freeze(db, task, note=f"published checklist ({questions})")
    t0 = time.perf_counter()
    rid = create_run(db, task, judge, method)
    run = execute_run(db_path(db), rid)
    wall = time.perf_counter() - t0
    rep = analyze_runs(db, [rid], n_boot=n_boot)["runs"][str(rid)]
    table = {dim: {c: d[b["level"]][c] for c in b["coefs"]} for dim, d in
             rep["dimensions"].items()}
    table["AVG"] = {c: rep["average"][b["level"]][c] for c in b["coefs"]}
    aggs = {}
    for agg in ("share_yes", "mean_p_yes", "supervised", "linear", "weighted", "likert",
                "likert_prob"):
        try:
            r2 = analyze_runs(db, [rid], aggregation=agg, n_boot=0)["runs"][str(rid)]
        except Exception:  # noqa: BLE001 - an aggregation this method does not produce
            continue
        if r2["dimensions"]:
            aggs[agg] = {c: r2["average"][b["level"]][c] for c in b["coefs"]}
    return {"benchmark": benchmark, "judge": judge, "method": method, "docs": len(groups),
            "items": len(rows), "questions": questions, "level": b["level"],
            "n_answers": run["n_answers"], "wall_s": round(wall, 1), "table": table,
            "aggregations": aggs, "primary_aggregation": rep["aggregation"]}


def format_table(res: dict[str, Any]) -> str:
    coefs = list(next(iter(res["table"].values())).keys())
    lines = [f"{res['benchmark']} · {res['judge']} · {res['method']} · {res['docs']} groups, "
             f"{res['items']} items · {res['questions']} questions · {res['level']} · "
             f"{res['wall_s']} s",
             "dimension".ljust(14) + "".join(c.rjust(10) for c in coefs)]
    for dim, vals in res["table"].items():
        lines.append(dim.ljust(14) + "".join(f"{vals[c]:10.3f}" for c in coefs))
    for agg, vals in res["aggregations"].items():
        lines.append(f"  AVG with {agg}: " + ", ".join(f"{c} {v:.3f}" for c, v in vals.items()))
    return "\n".join(lines)
