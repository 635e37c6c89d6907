"""Render bench/out/*.json (from bench/quality_sweep.sh) as the Markdown rows of the quality
table in docs/benchmarks.md: one row per judge × aggregation, ensembles, baselines.

    .venv/bin/python -m checkeval_core.bench.quality_table bench/out/tc-05b-rocketeval.json ...
"""

from __future__ import annotations

import json
import sys

from checkeval_core.stats.values import fmt, isnan

DIMS = {"summeval": ["coherence", "consistency", "fluency", "relevance"],
        "topical_chat": ["coherence", "engagingness", "groundedness", "naturalness"]}


def cell(t: dict, coefs: list[str]) -> str:
    vals = [t.get(c) for c in coefs]
    if all(isnan(v) for v in vals):
        return "—"
    return " / ".join(fmt(v, 2) for v in vals)


def rows(res: dict) -> list[str]:
    coefs = ["spearman", "kendall"] if res["level"] == "sample_level" else ["spearman", "pearson"]
    dims = DIMS[res["benchmark"]]
    opts = ", ".join(f"{k}={v}" for k, v in res["params"].items()) or "default layout"
    out = []

    def line(name: str, table: dict, cost: str) -> str:
        cells = [cell(table.get(d, {}), coefs) for d in dims]
        return (f"| {name} | " + " | ".join(cells) + f" | **{cell(table.get('AVG', {}), coefs)}**"
                f" | {cost} |")

    for r in res["runs"]:
        cost = f"{r['run_wall_s']:.0f} s" if r.get("run_wall_s") else "—"
        if r.get("run_wall_s") and r.get("cpu_s", 0) > 0.5 * r["run_wall_s"]:
            # computed in this invocation (not reused from the bench database): its CPU time
            cost += f" (CPU {r['cpu_s']:.0f} s)"
        variant = ", ".join(f"{k}={v}" for k, v in (r.get("variant") or {}).items())
        for agg, t in r["aggregations"].items():
            out.append(line(f"`{r['judge']}` {res['method']} · {agg} · {variant or opts}", t,
                            cost))
            cost = "same run"
    for agg, e in res.get("ensemble", {}).items():
        names = " + ".join(r["judge"] + (" [" + ", ".join(f"{k}={v}" for k, v in
                                                          r["variant"].items()) + "]"
                                         if r.get("variant") else "") for r in res["runs"])
        out.append(line(f"ensemble {names} · {agg}",
                        e["table"], "(the runs above)"))
    for name, t in res["baselines"].items():
        out.append(line(f"baseline: {name}", t, "0 s"))
    return out


if __name__ == "__main__":
    for path in sys.argv[1:]:
        res = json.load(open(path))
        print(f"\n<!-- {path}: {res['benchmark']} {res['docs']} groups, {res['items']} items -->")
        print("\n".join(rows(res)))
