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
                ensemble: bool = typer.Option(False, "--ensemble",
                                              help="also score the mean of the runs' "
                                                   "standardised scores (2+ runs)"),
                ensemble_mode: str = typer.Option("mean", "--ensemble-mode",
                                                  help="mean | stack (calibration on all "
                                                       "runs' answers) | stack_len"),
                rankings: bool = typer.Option(False, "--rankings", help="list level: system "
                                              "scores, ranks, τ/ρ vs reference ratings, Elo"),
                pairs: bool = typer.Option(False, "--pairs", help="instance level: agreement "
                                           "with human pairwise preferences"),
                tie_margin: float = typer.Option(0.1, "--tie-margin",
                                                 help="score gap below which two answers tie"),
                reference: str | None = typer.Option(None, "--reference",
                                                     help="reference rating source"),
                shared_items: bool = typer.Option(False, "--shared-items",
                                                  help="compare several runs on the items "
                                                       "they all scored"),
                as_json: bool = typer.Option(False, "--json")) -> None:
    """Correlation with human scores (sample / dataset / system level), agreement, stability."""
    if rankings or pairs:
        from checkeval_core.cli.ranking_cmds import analyze_rankings

        analyze_rankings(run, aggregation, rankings, pairs, tie_margin, reference, bootstrap,
                         as_json)
        return
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
            out = analyze_runs(db, list(run), aggregation, n_boot=bootstrap,
                               shared=shared_items)
            if ensemble:
                from checkeval_core.analysis.ensemble import analyze_ensemble

                out["ensemble"] = analyze_ensemble(db, list(run), aggregation, n_boot=bootstrap,
                                                   mode=ensemble_mode)
        else:
            fail("give --run RUN_ID (repeatable) or --task NAME --metric-file FILE.csv")
    except (NotFound, MetricFileError, ValueError) as e:
        fail(str(e))
    out = _clean(out)
    if as_json:
        typer.echo(json.dumps(out))
        return
    blocks = list(out["runs"].items()) if "runs" in out else [("metric", out)]
    if "ensemble" in out:
        blocks.append(("ensemble", {**out["ensemble"], "judge": "+".join(
            m["judge"] for m in out["ensemble"]["members"]), "method": "ensemble"}))
    for key, rep in blocks:
        typer.echo(f"== {key} {rep.get('judge', '')} {rep.get('method', '')}")
        for dim, d in rep["dimensions"].items():
            s = d["sample_level"]
            t = d["dataset_level"]
            typer.echo(f"{dim:>14}  sample ρ={s['spearman']} τ={s['kendall']} (n={s['n']})  "
                       f"dataset ρ={t['spearman']} r={t['pearson']} (n={t['n']})")


@bench_app.command("quality")
def bench_quality_cmd(benchmark: str = typer.Option(..., "--benchmark",
                                                    help="summeval|topical_chat|alpacaeval|"
                                                         "mtbench_pairs|llmbar_natural"),
                      data: Path | None = typer.Option(None, "--data",
                                                       help="benchmark folder (default "
                                                            "../shared/benchmarks)"),
                      judge: list[str] | None = typer.Option(
                          None, "--judge", help="judge spec (repeat for an ensemble; default "
                                                "embedded)"),
                      method: str = typer.Option("rocketeval", "--method"),
                      docs: int = typer.Option(2, "--docs", help="documents / contexts"),
                      skip: int = typer.Option(0, "--skip", help="leave out the first N "
                                               "documents (a held-out confirmation set)"),
                      questions: str = typer.Option("seed", "--questions", help="seed|all"),
                      param: list[str] | None = typer.Option(
                          None, "--param", help="run option KEY=VALUE (repeat), e.g. "
                                                "include_definition=true; see README"),
                      member: list[str] | None = typer.Option(
                          None, "--member", help='another ensemble member with its own run '
                          'options: "SPEC KEY=VALUE ..." (repeat), e.g. "embedded '
                          'include_definition=true"'),
                      db: Path | None = typer.Option(None, "--db", help="bench database "
                                                     "(default <cache>/bench_quality.db; "
                                                     "reruns reuse it)"),
                      bootstrap: int = typer.Option(0, "--bootstrap",
                                                    help="resamples for CIs"),
                      as_json: bool = typer.Option(False, "--json"),
                      queries: int = typer.Option(8, "--queries", help="alpacaeval: first N "
                                                  "queries; mtbench_pairs/llmbar_natural: pairs"),
                      checklist: str = typer.Option("author", "--checklist", help="per-query "
                                                    "checklists: author|generated|"
                                                    "generated_ref|fixed"),
                      checklist_judge: str = typer.Option("embedded:quality",
                                                          "--checklist-judge"),
                      checklist_mode: str | None = typer.Option(
                          None, "--checklist-mode", help="generated checklists: list|single "
                          "(default: single for embedded judges, else list)")) -> None:
    """Run and analyse a benchmark subset in the papers' layout."""
    from checkeval_core.analysis.quality_bench import RANKING_BENCHMARKS as RB
    from checkeval_core.analysis.quality_bench import bench_quality, bench_rankings, format_table
    from checkeval_core.runs.options import parse_params

    if benchmark in RB:  # issue 14: list level / pairwise (H5)
        try:
            res = bench_rankings(benchmark, data, judge or ["embedded"], queries=queries,
                                 checklist=checklist, checklist_judge=checklist_judge,
                                 checklist_mode=checklist_mode, db_file=db, n_boot=bootstrap, params=parse_params(param),
                                 progress=True)
        except (ValueError, NotFound, ImportError) as e:
            fail(str(e))
        from checkeval_core.analysis.quality_bench import format_rankings

        typer.echo(json.dumps(_clean(res)) if as_json else format_rankings(res))
        return
    try:
        members = []
        for m in member or []:
            parts = m.split()
            if not parts:
                raise ValueError('--member: give "SPEC KEY=VALUE ...", e.g. "embedded '
                                 'include_definition=true"')
            members.append((parts[0], parse_params(parts[1:])))
        res = bench_quality(benchmark, data, judge or ["embedded"], method, docs=docs,
                            questions=questions, db_file=db, n_boot=bootstrap,
                            params=parse_params(param), progress=True, members=members,
                            skip=skip)
    except (ValueError, NotFound, ImportError) as e:
        fail(str(e))
    res = _clean(res)
    typer.echo(json.dumps(res) if as_json else format_table(res))
