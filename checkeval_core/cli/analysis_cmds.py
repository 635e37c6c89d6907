"""CLI for analysis: ``analyze`` (runs or an external metric file)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import typer

from checkeval_core.cli import app, bench_app, fail
from checkeval_core.store import NotFound, open_db


def _clean(x: Any) -> Any:
    """NaN → null for JSON."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


@app.command("analyze")
def analyze_cmd(run: list[int] | None = typer.Option(None, "--run", help="RUN_ID (repeat)"),
                task: str | None = typer.Option(None, "--task"),
                metric_file: Path | None = typer.Option(None, "--metric-file"),
                aggregation: str | None = typer.Option(None, "--aggregation"),
                bootstrap: int = typer.Option(200, "--bootstrap", help="resamples for CIs"),
                as_json: bool = typer.Option(False, "--json")) -> None:
    """Correlation with human scores (sample / dataset / system level), agreement, stability."""
    from checkeval_core.analysis.external import MetricFileError, import_metric
    from checkeval_core.analysis.report import analyze_metric, analyze_runs

    db = open_db()
    try:
        if metric_file is not None:
            if not task:
                fail("--metric-file needs --task NAME")
            if not metric_file.exists():
                fail(f"{metric_file}: no such file")
            res = import_metric(db, task, metric_file)
            out = analyze_metric(db, task, res["metric"], n_boot=bootstrap)
        elif run:
            out = analyze_runs(db, list(run), aggregation, n_boot=bootstrap)
        else:
            fail("give --run RUN_ID (repeatable) or --task NAME --metric-file FILE.csv")
    except (NotFound, MetricFileError, ValueError) as e:
        fail(str(e))
    out = _clean(out)
    if as_json:
        typer.echo(json.dumps(out))
        return
    blocks = out["runs"].items() if "runs" in out else [("metric", out)]
    for key, rep in blocks:
        typer.echo(f"== {key} {rep.get('judge', '')} {rep.get('method', '')}")
        for dim, d in rep["dimensions"].items():
            s = d["sample_level"]
            t = d["dataset_level"]
            typer.echo(f"{dim:>14}  sample ρ={s['spearman']} τ={s['kendall']} (n={s['n']})  "
                       f"dataset ρ={t['spearman']} r={t['pearson']} (n={t['n']})")


@bench_app.command("quality")
def bench_quality_cmd(benchmark: str = typer.Option(..., "--benchmark",
                                                    help="summeval|topical_chat"),
                      data: Path | None = typer.Option(None, "--data",
                                                       help="benchmark folder (default "
                                                            "../shared/benchmarks)"),
                      judge: str = typer.Option("embedded", "--judge"),
                      method: str = typer.Option("rocketeval", "--method"),
                      docs: int = typer.Option(2, "--docs", help="documents / contexts"),
                      questions: str = typer.Option("seed", "--questions", help="seed|all"),
                      as_json: bool = typer.Option(False, "--json")) -> None:
    """Run and analyse a benchmark subset in the papers' layout."""
    from checkeval_core.analysis.quality_bench import bench_quality, format_table

    try:
        res = bench_quality(benchmark, data, judge, method, docs=docs, questions=questions)
    except (ValueError, NotFound) as e:
        fail(str(e))
    res = _clean(res)
    typer.echo(json.dumps(res) if as_json else format_table(res))
