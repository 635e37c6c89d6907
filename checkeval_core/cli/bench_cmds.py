"""Every ``checkeval bench`` command: quality against human scores, held-out proposals,
calibration, grown checklists, judge speed and rates, scale, Ray workers, escalation and the
annotators' pool queue. Each command checks its options, calls one ``checkeval_core.bench``
function (imported inside the command, so that ``checkeval --help`` stays light) and prints
its table or JSON. The benchmarks keep their own database (``--db``), never the studio's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from checkeval_core.cli.app import bench_app, clean_json, fail, print_estimate
from checkeval_core.store import NotFound

# shared by the bench commands that read a benchmark folder and keep a cached database
BENCH_DATA = typer.Option(None, "--data", help="benchmark folder (default "
                          "$CHECKEVAL_BENCH_DATA; there is no built-in path)")
BENCH_DB = typer.Option(None, "--db", help="bench database (default "
                        "<cache>/bench_quality.db; reruns reuse it)")


def _print(res: dict, as_json: bool, estimate: bool, table: Any) -> None:
    """A quality benchmark's result: its cost estimate (``--estimate``), else the result as
    JSON or as ``table`` prints it."""
    res = clean_json(res)
    if estimate:
        print_estimate(res, as_json)
    else:
        typer.echo(json.dumps(res) if as_json else table(res))

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
    """Coverage and width of the PPI++ estimate of system means vs humans alone.

    Measures the calibrated estimate on a benchmark: per system, N labelled
    outputs drawn from the `--labelled-docs` (1-based document positions), the
    system's outputs on the `--unlabelled-docs` unlabelled, `--draws` draws; the
    judge is ROUGE-1 against the references on `summeval.jsonl` in `--data`
    (default `../shared/benchmarks`), or a stored run (`--db FILE --run RUN_ID`;
    `--run` repeated: the runs' ensemble, their standardised scores averaged as in
    Analysis' ensemble, on the items they share). Per N and dimension it prints
    the coverage of the 95 % intervals (of the held-out system means and of the
    means over every document), the humans-alone coverage, median widths and their
    ratio, the same for the held-out-mean estimand, the share of draws without an
    interval for each reading (labelled scores all equal; `no_interval`,
    `no_interval_heldout_mean` in `--json` — the held-out-mean reading borrows the
    other systems' spread, so it has one) and the within-system correlation ρ with
    √(1 − ρ²). An N larger than a system's labelled outputs is reported as
    skipped.
    """
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


@bench_app.command("quality")
def bench_quality_cmd(benchmark: str = typer.Option(..., "--benchmark",
                                                    help="summeval|topical_chat|alpacaeval|"
                                                         "mtbench_pairs|llmbar_natural"),
                      data: Path | None = BENCH_DATA,
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
                      db: Path | None = BENCH_DB,
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
                          "(default: single for embedded judges, else list)"),
                      estimate: bool = typer.Option(
                          False, "--estimate", help="summeval/topical_chat: only print what "
                          "the runs would cost; no judge is asked")) -> None:
    """Run and analyse a benchmark subset in the papers' layout.

    Imports the first N documents (contexts, queries, pairs) of a benchmark from
    the folder `--data DIR` (else `$CHECKEVAL_BENCH_DATA`; there is no built-in
    path: the benchmarks are not shipped, exit 2 without one) after the first
    `--skip`, runs each judge, and prints the papers' layout for every aggregation
    with trivial baselines; everything is kept in `--db` (default
    `~/.cache/checkeval/bench_quality.db`), so a finished row is reused and an
    interrupted one resumes. `--json` has `docs`, `skip`, `items`, `runs` (per
    member: `run`, `judge`, `variant`, `n_answers`, `wall_s`, `cpu_s`,
    `run_wall_s`, `aggregations`), `baselines`, `ensemble`, and the first judge's
    `table`/`aggregations`.
    """
    from checkeval_core.bench.quality import RANKING_BENCHMARKS as RB
    from checkeval_core.bench.quality import bench_quality, bench_rankings, format_table
    from checkeval_core.runs.options import check_bootstrap, check_count, parse_params

    try:
        check_bootstrap(bootstrap)
        check_count(docs, "--docs", "documents")
        check_count(queries, "--queries", "queries or pairs")
    except ValueError as e:
        fail(str(e))
    if benchmark in RB:  # ranking benchmarks: list level (AlpacaEval) or human pairs
        try:
            res = bench_rankings(benchmark, data, judge or ["embedded"], queries=queries,
                                 checklist=checklist, checklist_judge=checklist_judge,
                                 checklist_mode=checklist_mode, db_file=db, n_boot=bootstrap,
                                 params=parse_params(param), progress=True, estimate=estimate)
        except (ValueError, NotFound, ImportError) as e:
            fail(str(e))
        if estimate:
            print_estimate(clean_json(res), as_json)
            return
        from checkeval_core.bench.quality import format_rankings

        typer.echo(json.dumps(clean_json(res)) if as_json else format_rankings(res))
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
                            skip=skip, estimate=estimate)
    except (ValueError, NotFound, ImportError) as e:
        fail(str(e))
    _print(res, as_json, estimate, format_table)


@bench_app.command("heldout")
def bench_heldout_cmd(benchmark: str = typer.Option(..., "--benchmark",
                                                    help="summeval|topical_chat|alpacaeval|"
                                                         "mtbench_pairs"),
                      data: Path | None = BENCH_DATA,
                      judge: str = typer.Option("embedded", "--judge", help="judge spec"),
                      docs: int = typer.Option(32, "--docs", help="summeval / topical_chat: "
                                               "documents (contexts), split in halves"),
                      queries: int = typer.Option(50, "--queries", help="alpacaeval: queries "
                                                  "(train models fit, test models ranked); "
                                                  "mtbench_pairs: pairs"),
                      db: Path | None = BENCH_DB,
                      bootstrap: int = typer.Option(200, "--bootstrap",
                                                    help="paired resamples of held-out groups"),
                      tie_margin: float = typer.Option(0.1, "--tie-margin",
                                                       help="mtbench_pairs: |Δ| below which "
                                                            "a pair is a judge tie"),
                      estimate: bool = typer.Option(
                          False, "--estimate", help="only print what the judge's run would "
                          "cost; no judge is asked"),
                      as_json: bool = typer.Option(False, "--json")) -> None:
    """Propose a revised checklist on one half of a benchmark, report it on the other half.

    It is `checklist propose` on a benchmark with its split fixed in advance, so
    the held-out figure repeats: SummEval / Topical-Chat — the first half of
    `--docs` documents (contexts) dev and the second half held out, then the
    reverse; AlpacaEval — the 10 `train` models of the first `--queries` queries
    dev (labels: their Arena Elo), the 12 `test` models ranked; MT-Bench — the
    pairs of the first half of the questions dev, the rest held out, then the
    reverse, with RocketEval's six fixed questions (one question asked of every
    query, so a choice made on dev questions applies to held-out ones). The judge
    runs RocketEval through `bench quality` (cached in `--db`, resumable). Per
    direction, every row is read on the same held-out groups with its paired
    difference from the unrevised checklist: the proposal (selection; selection +
    weights where answers carry labels), the run's other aggregations (the learned
    ones are cross-fitted leave-one-document-out over *all* documents — they see
    more labels than the proposal; said in the row), answer length, ROUGE-1
    (SummEval), the AlpacaEval 2 LC win rate (a reference from all 805 queries),
    and for pairs the accuracy without a tie margin and the tie rate. `--json`:
    `{"benchmark", "task", "run", "judge", "statistic", "directions": [{"name",
    "dev_groups", "heldout_groups", "heldout_systems", "rows": [{"name", "value",
    "ci", "delta", "delta_ci", "unrevised", "n_items", "n_groups", "n_systems",
    "note", "ci_reason"}], "proposal": {"<label>": {"kept", "dropped", "rules",
    "dropped_questions", "weights", "weights_reason", "dev"}}[, "tie_rate"]}],
    "n_boot", "tie_margin"}`. The split is stored on the bench task named group by
    group (`checkeval split --show` says `explicit`).
    """
    from checkeval_core.analysis.proposal.evidence import ProposalError
    from checkeval_core.bench.heldout import bench_heldout, format_heldout
    from checkeval_core.runs.options import check_bootstrap, check_count, check_tie_margin
    from checkeval_core.task_split import SplitError

    try:
        check_bootstrap(bootstrap)
        check_tie_margin(tie_margin)
        check_count(docs, "--docs", "documents")
        check_count(queries, "--queries", "queries or pairs")
        res = bench_heldout(benchmark, data, judge, docs=docs, queries=queries, db_file=db,
                            n_boot=bootstrap, progress=True, tie_margin=tie_margin,
                            estimate=estimate)
    except (ValueError, NotFound, ImportError, ProposalError, SplitError) as e:
        fail(str(e))
    _print(res, as_json, estimate, format_heldout)


@bench_app.command("grounded")
def bench_grounded_cmd(data: Path | None = typer.Option(None, "--data", help="benchmark folder "
                                                        "(summeval.jsonl, checklists/)"),
                       generator: str = typer.Option("embedded:quality", "--generator"),
                       judge: str = typer.Option("embedded", "--judge"),
                       method: str = typer.Option("checkeval", "--method", help="the held-out "
                                                  "runs' method: checkeval (grouped) or "
                                                  "rocketeval (one request per question)"),
                       docs: int = typer.Option(32, "--docs", help="first N documents: half "
                                                "dev, half held out"),
                       items: int = typer.Option(24, "--items", help="dev items per dimension "
                                                 "for the evidence rule"),
                       n: int = typer.Option(4, "--n", help="questions per sub-dimension / "
                                             "seed; pairs (contrastive)"),
                       db: Path | None = typer.Option(None, "--db", help="bench database"),
                       bootstrap: int = typer.Option(200, "--bootstrap"),
                       engine: str = typer.Option("local", "--engine", help="local | ray: "
                                                  "the held-out runs' items answered by "
                                                  "judge workers on a Ray cluster"),
                       ray_address: str | None = typer.Option(None, "--ray-address",
                                                              help="the Ray cluster "
                                                              "(default: start a local one)"),
                       workers: int | None = typer.Option(None, "--workers", help="Ray "
                                                          "workers, one judge each (default: "
                                                          "one per CPU)"),
                       as_json: bool = typer.Option(False, "--json")) -> None:
    """SummEval: (a) the seeds, (b) the published checklist, (c) the seeds plus diversified,
    elaborated and contrastive questions kept by the dev-only evidence rule with no person;
    held-out agreement with the experts of (c) and (b) against (a), and of (c) against (b).

    Measures a checklist grown with no person in the loop on SummEval's first
    `--docs` documents (first half dev, second half held out): (a) the authors'
    seeds, (c) the seeds plus the `--generator`'s diversified, elaborated and
    contrastive questions that `evidence` (with `--judge`, `--items` dev items)
    does not flag — the flagged ones rejected with their flag — and (b) the
    authors' published checklist, each frozen as a version of one task in the
    bench database (`--db`, default `grounded.db` beside the quality bench's) and
    run with `--judge` (`--method`, default `checkeval`) on the held-out documents; it prints the
    generation counts (added, copies, flagged, kept) and time (`seconds`: what the
    generator's requests took when asked, so a rerun answered from the request cache
    reports the same; `wall_seconds`, `from_cache`) and the held-out Δ agreement with
    the experts of (c) and of (b) against (a) and of (c) against (b) with paired
    intervals, smallest detectable change and verdicts (`versions --diff` rows). A
    long CPU run with the embedded models; a killed run restarted with the same
    `--db` asks only what is missing. `--engine ray` (the `scale` extra) has the
    held-out runs' items answered by `--workers` judge workers of one thread each,
    on a local Ray or the cluster at `--ray-address` (generation and the dev
    evidence stay in this process).
    """
    from checkeval_core.bench.grounded import bench_grounded
    from checkeval_core.checklists.evidence import check_options
    from checkeval_core.judges.spec import JudgeSpecError, parse_spec
    from checkeval_core.runs.options import check_bootstrap, check_count, check_method
    from checkeval_core.runs.ray_engine import engine_for

    eng = None
    try:
        check_count(docs, "--docs", "documents")
        check_options("proposed", items)
        check_bootstrap(bootstrap)
        check_method(method)
        parse_spec(generator)
        parse_spec(judge)
        eng = engine_for(engine, ray_address, workers)  # before any judge call
        if eng is not None:
            eng.prepare([judge])
        res = clean_json(bench_grounded(data, generator, judge, docs, items, n, db, bootstrap,
                                        progress=not as_json, engine=eng, method=method))
    except (NotFound, JudgeSpecError, ValueError, ImportError) as e:
        fail(str(e))
    finally:
        if eng is not None:
            eng.shutdown()
    typer.echo(json.dumps(res, ensure_ascii=False, indent=None if as_json else 1))


@bench_app.command("speed")
def bench_speed_cmd(judge: str = typer.Option("embedded", "--judge"),
                    questions: int = typer.Option(15, "--questions"),
                    engine_only: bool = typer.Option(
                        False, "--engine-only",
                        help="only llama.cpp's rates in tokens per CPU-second (embedded)"),
                    repeats: int = typer.Option(3, "--repeats", min=1,
                                                help="with --engine-only: median of N"),
                    as_json: bool = typer.Option(False, "--json")) -> None:
    """Time N questions on one ~600-token item: full prompt each vs prefix reuse.

    Times N (default 15) published SummEval questions on the first demo item: one
    full prompt per question vs prefix reuse; `--json` prints `naive_s_per_q`,
    `reuse_s_per_q`, `speedup`, `prefill_tok_s`, `engine_bound_s`, `efficiency`.
    For the embedded judge it also times prefix reuse with the questions one after
    another instead of side by side in one batch, in the same process:
    `sequential_s_per_q`, `parallel_time_ratio` (side by side ÷ one by one, wall),
    `parallel_cpu_ratio` (the same in CPU time), `efficiency_sequential`,
    `max_abs_p_yes_diff_parallel`, `same_verdicts_parallel`, and `cpu_features`
    (the instruction sets llama.cpp was built for).

    `--engine-only` measures llama.cpp alone on the same item, in tokens per
    CPU-second of the process (other load on the machine barely moves it), the
    median of `--repeats` (default 3): `prefill_tok_cpu_s` (the prompt up to the
    questions from an empty cache), `segment_tok_cpu_s` (the N question segments
    of 20–30 tokens one after another after that cached prefix),
    `parallel_tok_cpu_s` (the same segments side by side in one batch),
    `item_cpu_ratio` (the item's CPU time side by side ÷ one by one),
    `max_abs_p_yes_diff_parallel`, every repeat (`…_all`), `threads` and
    `cpu_features`. To compare two llama.cpp builds, run it alternately with each
    installation (`bash bench/build_speed.sh PYTHON_A PYTHON_B [ROUNDS]
    [REPEATS]`).
    """
    from checkeval_core.bench.speed import bench_engine, bench_speed
    from checkeval_core.judges.registry import JudgeSpecError, parse_spec

    try:
        parse_spec(judge)
        if questions < 1:
            raise ValueError("--questions must be at least 1")
        res = (bench_engine(judge, repeats, questions) if engine_only
               else bench_speed(judge, questions))
    except (JudgeSpecError, ValueError, ImportError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(res))
    else:
        for k, v in res.items():
            typer.echo(f"{k}: {v}")


@bench_app.command("rate")
def bench_rate_cmd(judge: str = typer.Option("embedded", "--judge"),
                   rounds: int = typer.Option(2, "--rounds", help="repeats of the workload"),
                   as_json: bool = typer.Option(False, "--json")) -> None:
    """Measure this machine's seconds per judge call, prompt token and completion token for
    a judge (a small fixed workload, ~10–60 s on the embedded judge) and store them for
    cost estimates (in the cache directory's judge_rates.json).

    Used by every time estimate. Times a small fixed workload through the judge's
    backend (no response cache; long prompts, one prefix with 12 short questions,
    short generations, `--rounds` times), fits seconds = calls·a + prompt tokens·b
    + completion tokens·c (non-negative least squares) and stores a, b, c with the
    date and machine in `<cache dir>/judge_rates.json` (the cache dir is
    `$CHECKEVAL_CACHE_DIR`, else `~/.cache/checkeval`). `--json`: `{"per_call",
    "per_prompt_token", "per_completion_token", "source", "measured_at",
    "machine", "workloads"}`. On a remote judge it makes real (billed) calls.
    """
    from checkeval_core.judges.registry import JudgeSpecError, parse_spec
    from checkeval_core.runs.estimate import measure_rate, rates_path

    if rounds < 1:
        fail("--rounds must be ≥ 1")
    try:
        parse_spec(judge)
    except JudgeSpecError as e:
        fail(str(e))
    try:
        rate = measure_rate(judge, rounds=rounds)
    except ImportError as e:
        fail(str(e), code=1)
    if as_json:
        typer.echo(json.dumps(rate))
        return
    typer.echo(f"{judge}: {rate['per_call'] * 1000:.1f} ms per call, "
               f"{rate['per_prompt_token'] * 1000:.2f} ms per prompt token, "
               f"{rate['per_completion_token'] * 1000:.1f} ms per completion token "
               f"(stored in {rates_path()})")


@bench_app.command("scale")
def bench_scale_cmd(answers: int = typer.Option(1_000_000, "--answers"),
                    task_items: int = typer.Option(
                        0, "--task-items", help="instead: the Data page's and a small run's "
                                                "reads on a task of N items"),
                    as_json: bool = typer.Option(False, "--json")) -> None:
    """Time the pages' queries on a scratch database with N synthetic answers.

    `--task-items N`: the Data page's and a small run's reads on an N-item task.
    `--json` (the pages' queries on a scratch database of N synthetic answers: 4
    runs × 122 questions, random human scores): `{"answers", "items", "runs",
    "questions", "fill_s", "item_trace_s", "dimension_scores_s",
    "item_disagreement_s", "task_disagreement_count_s", "max_rss_mb",
    "compare_runs_s", "compare_over_task_disagreement", "analysis_first_chart_s",
    "analysis_full_s", "analysis_first_chart_over_task_disagreement",
    "analysis_full_over_task_disagreement"}`; `task_disagreement_count_s` is the
    reference query (every disagreeing (item, question) of the task across the 4
    runs). `analysis_first_chart_s`: the Analysis page's first view of runs 1 and
    2 (sample level, Spearman, shared items), nothing cached, until its first
    chart — the point values it draws before any interval (median of 3);
    `analysis_full_s`: that whole view once — every level's intervals (100
    resamples), the agreement of the runs and across judges, judge health, the
    items behind a bar, the calibrated estimates, humans and question diagnostics;
    the `_over_task_disagreement` ratios divide each by
    `task_disagreement_count_s` of the same run. Times in seconds.
    """
    from checkeval_core.bench.scale import bench_scale, bench_task_pages
    from checkeval_core.runs.options import MAX_SCALE_ANSWERS, MAX_SCALE_ITEMS, check_count

    try:
        check_count(answers, "--answers", "answers", 1, MAX_SCALE_ANSWERS)
        check_count(task_items, "--task-items", "items", 0, MAX_SCALE_ITEMS)
    except ValueError as e:
        fail(str(e))
    res = bench_task_pages(task_items) if task_items else bench_scale(answers)
    typer.echo(json.dumps(res) if as_json else "\n".join(f"{k}: {v}" for k, v in res.items()))


@bench_app.command("ray")
def bench_ray_cmd(workers: int = typer.Option(2, "--workers", help="up to N local workers"),
                  items: int = typer.Option(6, "--items", help="first N SummEval demo items"),
                  threads: int = typer.Option(1, "--threads", help="llama.cpp threads each"),
                  judge: str = typer.Option("embedded", "--judge"),
                  as_json: bool = typer.Option(False, "--json")) -> None:
    """Items per second of one run on 1 … N local Ray workers (--engine ray), in one go."""
    from checkeval_core.bench.ray_workers import bench_ray, format_ray

    if min(workers, items, threads) < 1:
        fail("--workers, --items and --threads must be ≥ 1")
    try:
        res = bench_ray(workers, items, threads, judge)
    except ValueError as e:
        fail(str(e))
    typer.echo(json.dumps(res) if as_json else format_ray(res))


@bench_app.command("escalate")
def bench_escalate_cmd(
        benchmark: str = typer.Option(..., "--benchmark", help="mtbench_pairs|summeval"),
        data: str | None = typer.Option(None, "--data", help="benchmark folder (default "
                                        "$CHECKEVAL_BENCH_DATA; there is no built-in path)"),
        judge: str = typer.Option("embedded", "--judge", help="the first judge (A)"),
        escalate_to: str = typer.Option("embedded:quality", "--escalate-to",
                                        help="the second judge (B)"),
        queries: int = typer.Option(50, "--queries", help="mtbench_pairs: first N pairs"),
        docs: int = typer.Option(32, "--docs", help="summeval: first N documents"),
        target_agreement: float = typer.Option(0.8, "--target-agreement"),
        delta: float = typer.Option(0.1, "--delta"),
        margin: list[float] | None = typer.Option(
            None, "--margin", help="fixed margins of the other cascade rows (repeat; default "
                                   "0.05 and 0.2 for pairs, 0.1 and 0.3 for answers)"),
        db: str | None = typer.Option(None, "--db", help="bench database (default "
                                      "<cache>/bench_quality.db; reruns reuse it)"),
        bootstrap: int = typer.Option(200, "--bootstrap", help="resamples of held-out groups"),
        first_only: bool = typer.Option(False, "--first-only", help="run the first judge only: "
                                        "its fitted threshold, held-out coverage and agreement"),
        estimate: bool = typer.Option(False, "--estimate", help="only print what the judges' "
                                      "runs would cost; no judge is asked"),
        cold: bool = typer.Option(False, "--cold", help="summeval: measure CPU from cold caches "
                                  "on the held-out documents (A alone, B alone, the cascades)"),
        escalate_by: list[str] | None = typer.Option(
            None, "--escalate-by", help="--cold: the cascades, answer and/or item (repeat; "
                                        "default both)"),
        only: list[str] | None = typer.Option(
            None, "--only", help="--cold: run only these parts now — dev, a, b, answer, "
                                 "item (repeat; the others are reused when complete)"),
        cold_dir: str | None = typer.Option(None, "--cold-dir", help="--cold: where the parts' "
                                            "databases and measurements are kept (default "
                                            "beside --db)"),
        docs_per_half: int | None = typer.Option(
            None, "--docs-per-half", help="--cold: the first N documents of each half only, "
                                          "all their summaries (a sample)"),
        calibrate_judges: bool = typer.Option(False, "--calibrate-judges", help="--cold: A's "
                                              "confidence calibrated on A's dev answers"),
        as_json: bool = typer.Option(False, "--json")) -> None:
    r"""A small judge escalating to a stronger one on a benchmark's held-out half: both alone,
    their ensemble, and the cascade at the fitted threshold and at fixed margins.

    Runs (or reuses, from `bench quality` / `bench rankings` runs in the same
    `--db`) A and B alone on a benchmark subset, fixes the split in advance
    (MT-Bench: pairs of the first half of the questions dev, the rest held out;
    SummEval: first half of the documents dev), then executes from the cache the
    cascade at the fitted threshold (with and without `--abstain`) and at the
    `--margin`s, and prints per row the held-out agreement [95 % interval over
    resampled held-out groups], the share kept by A, the share decided, the units
    and groups, and the judge seconds used (sum of the recorded latency of the
    answers the row uses), beside the ensemble of A and B (mean p(Yes)). `--json`:
    `{"benchmark", "task", "judge_a", "judge_b", "unit", "label_source",
    "dev_groups", "heldout_groups", "target", "delta", "rows": [{"name",
    "threshold", "coverage_heldout", "agreement", "ci", "decided",
    "agreement_decided", "n_units", "n_groups", "judge_s",
    "share_resamples_at_target"}], "curve", "runs", "cpu_s", "run_wall_s"}`.
    `--first-only` runs A alone and reports what needs no second judge: A's
    threshold fitted on dev (`"fit"`, as in `run --json`), and per row (A alone, A
    at the fitted threshold, A at each margin) the held-out share A keeps and its
    agreement on what it keeps \[interval]; `"first_only": true`, `"judge_b":
    null`.

    `--cold` (SummEval, after `--first-only` has run A in `--db`) measures what
    the cascades cost when B's answers are not cached: on the held-out documents
    only, each part in its own copy of `--db` with an empty request cache in
    `--cold-dir` — `a` (A alone), `b` (B alone), `answer` / `item` (the cascade
    escalating by answer / by item at the one `--margin`, default 0.1, A's
    answers from part a's cache; with `--calibrate-judges` A's confidence
    calibrated on A's answers of the dev documents, asked by part `dev`) —
    timing each run as it runs (process CPU seconds, every thread; a killed part
    resumes and sums its sessions, each saved every 30 s while it runs). It prints per row the held-out agreement per
    answer and per summary (sample-level Spearman, Δ vs A) \[95 % interval over
    resampled documents], the share A kept, B's executed requests and items, and
    CPU per item as a share of the ensemble's (A + B alone), then the curve of
    margins replayed from the caches (quality only). `--only` runs some parts now
    (e.g. in parallel processes); the cascades need part a (and dev) complete.
    `--docs-per-half N` samples the first N documents of each half. `--json`:
    `{"rows", "curve", "parts", "cpu_per_item", "target", "missing", …}`.
    """
    from checkeval_core.bench.escalate import bench_escalate, format_escalate
    from checkeval_core.judges.registry import JudgeSpecError
    from checkeval_core.runs.options import MAX_BENCH_DOCS, check_bootstrap, check_count

    try:
        check_bootstrap(bootstrap)
        check_count(docs, "--docs", "documents", 4, MAX_BENCH_DOCS)
        check_count(queries, "--queries", "pairs", 4, MAX_BENCH_DOCS)
        if cold:
            from checkeval_core.bench.escalate_cold import (
                bench_escalate_cold,
                check_cold,
                format_cold,
            )

            if first_only or estimate:
                raise ValueError("--cold: not with --first-only or --estimate (run "
                                 "--first-only first, then --cold)")
            parts, modes, mg = check_cold(benchmark, only, escalate_by,
                                          tuple(margin) if margin else None, judge, escalate_to)
            if docs_per_half is not None:
                check_count(docs_per_half, "--docs-per-half", "documents", 1, docs // 2)
            res = bench_escalate_cold(data, judge, escalate_to, docs, parts, modes, mg,
                                      db_file=db, cold_dir=cold_dir, n_boot=bootstrap,
                                      progress=True, calibrate=calibrate_judges,
                                      docs_per_half=docs_per_half)
            _print(res, as_json, False, format_cold)
            return
        if escalate_by or only or cold_dir or docs_per_half is not None or calibrate_judges:
            raise ValueError("--escalate-by / --only / --cold-dir / --docs-per-half / "
                             "--calibrate-judges: only with --cold")
        res = bench_escalate(benchmark, data, judge, escalate_to, queries=queries, docs=docs,
                             target=target_agreement, delta=delta,
                             margins=tuple(margin) if margin else None, db_file=db,
                             n_boot=bootstrap, progress=True, first_only=first_only,
                             estimate=estimate)
    except (ValueError, NotFound, ImportError, JudgeSpecError) as e:
        fail(str(e))
    _print(res, as_json, estimate, format_escalate)


@bench_app.command("pool-queue")
def bench_pool_queue_cmd(
        annotators: int = typer.Option(20, "--annotators", help="annotator processes"),
        items: int = typer.Option(500, "--items"),
        questions: int = typer.Option(15, "--questions"),
        k: int = typer.Option(3, "--k", help="answers per item from different people"),
        claim_seconds: float = typer.Option(5.0, "--claim-seconds",
                                            help="how long a claim holds (short: expiry "
                                                 "happens within the benchmark)"),
        abandon: float = typer.Option(0.01, "--abandon", help="share of claims walked away "
                                                              "from (they must expire)"),
        as_json: bool = typer.Option(False, "--json")) -> None:
    """Annotator processes pulling from one pool job on one SQLite file: no item answered
    twice by a person, none beyond k, no lost answer, expired claims re-served; p50 / p99 of
    next item, saving an answer and submitting.

    Builds a scratch database with one pool job (`--items` × `--questions`, `--k`
    answers per item from different people, claims holding `--claim-seconds`) and
    runs `--annotators` processes that pull the next item, answer every question,
    submit, and walk away from a share `--abandon` of their items (their claims
    must expire and be re-served). It prints the checks — `submitted` vs
    `expected`, `items_over_k`, `same_person_twice`, `lost_answers`,
    `abandoned_claims` vs `abandoned_reserved`, `refused_submits` — and
    `next_item_ms`, `save_ms`, `submit_ms` (`n`, `p50`, `p99`), `wall_s`, `work_s`
    (`docs/benchmarks.md`, *Many annotators on one pool*).
    """
    from checkeval_core.bench.pool_queue import bench_pool_queue

    if min(annotators, items, questions, k) < 1 or claim_seconds <= 0 or not 0 <= abandon < 1:
        fail("--annotators, --items, --questions and --k are ≥ 1, --claim-seconds > 0, "
             "--abandon in [0, 1)")
    try:
        res = bench_pool_queue(annotators, items, questions, k, claim_seconds, abandon)
    except ValueError as e:
        fail(str(e))
    typer.echo(json.dumps(res) if as_json else
               "\n".join(f"{key}: {v}" for key, v in res.items()))
