"""CLI for per-question agreement with people (``questions``) and the benchmark of the
human-calibrated estimate (``bench calibrate``)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from checkeval_core.cli.app import app, bench_app, clean_json, fail
from checkeval_core.store import NotFound


@bench_app.command("calibrate")
def bench_calibrate_cmd(
        data: Path | None = typer.Option(None, "--data", help="benchmark folder with "
                                         "summeval.jsonl (default $CHECKEVAL_BENCH_DATA)"),
        db: Path | None = typer.Option(None, "--db", help="a checkeval database holding --run "
                                       "(instead of ROUGE-1 on --data)"),
        run: list[int] | None = typer.Option(None, "--run", help="with --db: the run whose "
                                             "scores are the judge (repeat for an ensemble: "
                                             "the runs' standardised scores averaged)"),
        aggregation: str | None = typer.Option(None, "--aggregation",
                                               help="with --run: its aggregation"),
        labelled_docs: str = typer.Option("1-16", "--labelled-docs",
                                          help="documents (1-based positions) the labelled "
                                               "outputs are drawn from, e.g. 1-16,33-56"),
        unlabelled_docs: str = typer.Option("17-32", "--unlabelled-docs",
                                            help="documents whose outputs are unlabelled"),
        labelled: str = typer.Option("10,16", "--labelled", help="labelled outputs per "
                                     "system, comma-separated values of N"),
        draws: int = typer.Option(200, "--draws", help="random draws of the labelled set"),
        seed: int = typer.Option(0, "--seed"),
        as_json: bool = typer.Option(False, "--json")) -> None:
    """Coverage and width of the PPI++ estimate of system means vs humans alone."""
    from checkeval_core.bench.calibrate import (
        bench_calibrate,
        format_calibrate,
        parse_docs,
        run_positions,
        summeval_frame,
    )

    try:
        lab, unl = parse_docs(labelled_docs), parse_docs(unlabelled_docs)
        ns = tuple(int(x) for x in labelled.split(",") if x.strip())
    except ValueError as e:
        fail(f"--labelled-docs / --unlabelled-docs / --labelled: {e}")
    if not ns or min(ns) < 2:
        fail(f"--labelled {labelled!r}: give values ≥ 2, e.g. 10,16")
    from checkeval_core.runs.options import MAX_BENCH_DRAWS, check_count

    try:
        check_count(draws, "--draws", "draws", 1, MAX_BENCH_DRAWS)
        for n in ns:
            check_count(n, "--labelled", "labelled outputs", 2, MAX_BENCH_DRAWS)
    except ValueError as e:
        fail(str(e))
    if (db is None) != (not run):
        fail("--db and --run go together (without them: ROUGE-1 on --data)")
    try:
        if db is not None:
            from checkeval_core.analysis.frames import run_frame
            from checkeval_core.store import open_db

            if not db.exists():
                fail(f"--db {db}: no such file")
            runs = [int(r) for r in run or []]
            if len(runs) == 1:
                df, meta = run_frame(open_db(db), runs[0], aggregation)
                title = f"run {runs[0]} ({meta['judge']} · {meta['method']} · " \
                        f"{meta['aggregation']})"
            else:
                from checkeval_core.analysis.ensemble import ensemble_frame

                df, meta = ensemble_frame(open_db(db), runs, aggregation)
                title = "ensemble of runs " + " + ".join(
                    f"{m['run']} ({m['judge']} · {m['aggregation']})" for m in meta["members"])
            df = run_positions(df)
        else:
            from checkeval_core.bench.quality import default_data_dir

            src = data or default_data_dir()
            if not (src / "summeval.jsonl").exists():
                fail(f"--data {src}: no summeval.jsonl there")
            df, title = summeval_frame(src), "SummEval · ROUGE-1 as the judge"
        res = bench_calibrate(df, lab, unl, ns, draws, seed)
    except (NotFound, ValueError, ImportError) as e:
        fail(str(e))
    res = clean_json({**res, "judge": title})
    typer.echo(json.dumps(res) if as_json else format_calibrate(res, title))


@app.command("questions")
def questions_cmd(run: int = typer.Option(..., "--run", help="RUN_ID"),
                  split: str = typer.Option("dev", "--split", help="dev | heldout | all (a "
                                            "task without a split reads all groups)"),
                  bootstrap: int = typer.Option(200, "--bootstrap", help="resamples of groups "
                                                "for the intervals"),
                  as_json: bool = typer.Option(False, "--json")) -> None:
    """Per question: agreement, κ, φ, false-positive / false-negative rates and the κ–φ gap
    against people's answers (each with its interval or reason), confusion, yes-rate, system pairs
    separated, leave-one-out effect on the version's agreement with people's totals."""
    from checkeval_core.analysis.align import question_agreement
    from checkeval_core.runs.options import check_bootstrap
    from checkeval_core.store import open_db
    from checkeval_core.task_split import WHICH

    if split not in WHICH:
        fail(f"--split {split!r}: use dev, heldout or all")
    try:
        check_bootstrap(bootstrap)
        _check_question_run(open_db(), run)
        out = clean_json(question_agreement(open_db(), run, split, n_boot=bootstrap))
    except (NotFound, ValueError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(out))
        return
    sp = out["split"]
    from checkeval_core.runs.labels import run_label

    label = run_label({"run": run, "version": out["version"], "judge": out["judge"],
                       "method": out["method"]})
    typer.echo(f"run {label} — {sp['which']} ({sp['n_groups']} groups): "
               f"{out['headline']['text']}")
    if out["human_answers"]["how_to_start"]:
        typer.echo(out["human_answers"]["how_to_start"])
    loo = out["loo"]
    typer.echo(f"leave-one-out on {loo['part']}: "
               + (f"{loo['statistic']} = {_n(loo['value'])}" if loo["statistic"]
                  else loo["reason"]))
    for q in out["questions"]:
        agree = "–" if q["agreement"] is None else f"{q['agreement']:.2f}"
        kappa = "–" if q["kappa"] is None else f"{q['kappa']:.2f}"
        sat = f" ({q['saturated']})" if q["saturated"] else ""
        typer.echo(f"#{q['question_id']:<5} {q['dimension'] or '':>12} n={q['n']:<4} "
                   f"agree={agree} κ={kappa} φ={_n(q['phi'])} FPR={_n(q['fpr'])} "
                   f"FNR={_n(q['fnr'])} yes={_n(q['yes_rate'])}{sat} "
                   f"separates {q['separates']}/{q['n_pairs']} LOO Δ={_n(q['loo_delta'], 3)}  "
                   f"{q['text'][:60]}")


def _check_question_run(db: object, run: int) -> None:
    """``questions`` reads one Yes/No verdict per question: a run of another method, or one
    with no answer yet, is refused naming why (ValueError / NotFound)."""
    from checkeval_core.runs.jobs import get_run
    from checkeval_core.runs.registry import method, per_question_methods

    r = get_run(db, run)
    if not method(r["method"]).per_question:
        raise ValueError(f"--run {run}: method {r['method']} gives no verdict per checklist "
                         f"question; use a run of {' or '.join(per_question_methods())}")
    if not r["n_answers"]:
        raise ValueError(f"--run {run} is {r['status']} and has no answer yet; run it first "
                         f"(checkeval run --resume {run})")


@app.command("reword")
def reword_cmd(run: int = typer.Option(..., "--run", help="RUN_ID"),
               question: int = typer.Option(..., "--question", help="QUESTION_ID"),
               judge: str = typer.Option("embedded", "--judge", help="writes the rewording "
                                         "and answers both wordings"),
               bootstrap: int = typer.Option(200, "--bootstrap"),
               as_json: bool = typer.Option(False, "--json")) -> None:
    """Propose a rewording of a question from its false positives and false negatives on dev
    items (people's answers vs the run's); both wordings answered by the judge on every item
    people labelled; agreement on dev, Δ on held-out with its verdict; queued for review as an
    edit (the old question stays)."""
    from checkeval_core.analysis.reword import propose_rewording
    from checkeval_core.judges.spec import JudgeSpecError, parse_spec
    from checkeval_core.runs.options import check_bootstrap
    from checkeval_core.store import open_db

    try:
        check_bootstrap(bootstrap)
        parse_spec(judge)
        r = clean_json(propose_rewording(open_db(), run, question, judge, n_boot=bootstrap))
    except (NotFound, JudgeSpecError, ValueError, ImportError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(r, ensure_ascii=False))
        return
    h = r["heldout"]
    typer.echo(f"#{r['new_question']} proposed for review: {r['new_text']}\n"
               f"dev agreement {_n(r['dev']['old']['value'])} → {_n(r['dev']['new']['value'])}; "
               f"held-out {_n(h['old'])} → {_n(h['new'])} ({h['n_items']} items, "
               f"{h['n_groups']} groups): {h['verdict']}")


def _n(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"
