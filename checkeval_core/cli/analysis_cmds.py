"""CLI for analysis: ``analyze`` (runs or an external metric file)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from checkeval_core.cli.app import app, clean_json, fail
from checkeval_core.runs.options import check_tie_margin
from checkeval_core.stats.values import fmt, fmt_ci
from checkeval_core.store import NotFound, open_db


def _tie_margin(text: str) -> float | None:
    """``--tie-margin``: a finite number ≥ 0, or ``auto`` (None: derived per run from its
    spread)."""
    if text.strip().lower() == "auto":
        return None
    try:
        value = float(text)
    except ValueError:
        fail(f"--tie-margin {text[:30]!r} is neither a number nor 'auto'")
    try:
        return check_tie_margin(value, shown=text[:30])
    except ValueError as e:
        fail(f"{e}, or 'auto' for one derived from the score spread")


# the options of `analyze` (its older flag form) and of its sub-commands, one definition each
RUN = typer.Option(None, "--run", help="RUN_ID (repeat)")
RUNS = typer.Option(..., "--run", help="RUN_ID (repeat)")
ONE_RUN = typer.Option(..., "--run", help="RUN_ID")
AGGREGATION = typer.Option(None, "--aggregation")
BOOTSTRAP = typer.Option(200, "--bootstrap", help="resamples for CIs")
ENSEMBLE_MODE = typer.Option("mean", "--ensemble-mode", help="mean | stack (calibration on all "
                             "runs' answers) | stack_len")
DROP_BIASED = typer.Option(False, "--exclude-position-biased", help="with --rankings / --pairs: "
                           "leave out the votes of annotators whose votes follow position")
TIE_MARGIN = typer.Option("0.1", "--tie-margin", help="score gap below which two answers tie, "
                          "or 'auto': 0.2 × IQR of the run's item scores (derived from the "
                          "spread)")
REFERENCE = typer.Option(None, "--reference", help="reference rating source")
SPLIT = typer.Option("all", "--split", help="dev | heldout | all: read only the task's dev or "
                     "held-out groups (see `checkeval split`)")
SHARED_ITEMS = typer.Option(False, "--shared-items", help="compare several runs on the items "
                            "they all scored")
LABELLED = typer.Option(None, "--labelled", help="with --calibrated: at most N labelled items "
                        "per system, drawn at random (seed 0) from the dev groups (default: all)")
JSON = typer.Option(False, "--json")

analyze_app = typer.Typer()
app.add_typer(analyze_app, name="analyze")


@analyze_app.callback(invoke_without_command=True)
def analyze_cmd(ctx: typer.Context, run: list[int] | None = RUN,
                task: str | None = typer.Option(None, "--task"),
                metric_file: Path | None = typer.Option(None, "--metric-file"),
                aggregation: str | None = AGGREGATION,
                bootstrap: int = BOOTSTRAP,
                ensemble: bool = typer.Option(False, "--ensemble",
                                              help="also score the mean of the runs' "
                                                   "standardised scores (2+ runs)"),
                ensemble_mode: str = ENSEMBLE_MODE,
                rankings: bool = typer.Option(False, "--rankings", help="list level: system "
                                              "scores, ranks, τ/ρ vs reference ratings, Elo"),
                pairs: bool = typer.Option(False, "--pairs", help="instance level: agreement "
                                           "with human pairwise preferences"),
                drop_biased: bool = DROP_BIASED,
                tie_margin: str = TIE_MARGIN,
                reference: str | None = REFERENCE,
                split: str = SPLIT,
                shared_items: bool = SHARED_ITEMS,
                across_judges: bool = typer.Option(
                    False, "--across-judges", help="with --task: agreement across judges per "
                    "method (checklist vs Likert), every completed run of the task"),
                calibrated: bool = typer.Option(
                    False, "--calibrated", help="human-calibrated estimate (PPI++) of each "
                    "system's mean human score per dimension: human scores of dev groups as "
                    "the labelled items, the judge's scores on every item"),
                labelled: int | None = LABELLED,
                as_json: bool = JSON) -> None:
    """Correlation with human scores (sample / dataset / system level), agreement, stability.

    One mode per sub-command, its options after it (`analyze rankings --run 3`);
    the flags without a sub-command (`analyze --run 3 --rankings`) do the same.

    `--split dev|heldout` reads only the items of that part of the task's split
    (see `checkeval split` below; default `all`: every item) and the JSON says
    which under `"split"`: `{"which", "defined", "seed", "heldout_share",
    "by_system", "n_groups"}` (`n_systems` too for a split by system). Agreement
    across runs then counts only that part's items; with `--ensemble` the
    ensemble's correlations too. With `--rankings` only the part's queries and
    systems are ranked (and only human votes among them fit the human Elo); with
    `--pairs` only the votes whose two answers are both in the part count; both
    JSONs carry the same `"split"` block.

    `--rankings` / `--pairs`: each system of `human_elo.systems` also has
    `n_votes` and `reason` (`too few votes: N (a rating needs ≥ 5)` below 5 votes,
    else `null`); its `ci` is the 95% interval resampling queries.
    `--exclude-position-biased` leaves out the votes of every annotator whose
    votes follow position (`position_bias.annotators[*].follows_position`):
    `human_elo.excluded_annotators` and the pairs JSON's `excluded_annotators`,
    `n_excluded` say whose and how many (`position_bias` itself still counts every
    vote). Without `--rankings` or `--pairs` it is refused (exit 2).

    `analyze runs` (also `rankings` and `pairs`; `analyze --run`, also with
    `--rankings` / `--pairs`) adds `"health"`: per run id, the judge's health —
    `invalid_share`, `yes_share`, `never_varying` (`n`, `n_questions`,
    `questions`), per dimension (`dimensions`: `within_group_sd`,
    `constant_groups`, `score_iqr`, `length_corr` beside `human_corr`), `systems`
    (`span`, `strong_span`, `strong_se`), `ties` (`margin` and `margin_source` —
    the `--tie-margin` given —, `derived_margin` from the score spread,
    `n_matches`, `n_ties`, `share`, `share_at_derived`), `thresholds`, `reasons`
    (why an undefined number is `null`) and `warnings` (`code`, `dimension`,
    `message`), `warnings_withheld` (why no warning but the invalid share is
    raised: fewer than 6 groups; else `null`). The text output prints the warnings
    as `health:` lines. Thresholds: *Judge health* in `docs/methods.md`.
    """
    if ctx.invoked_subcommand is not None:
        given = [p.opts[0] for p in ctx.command.params  # (typer's own click: compare by name)
                 if getattr(ctx.get_parameter_source(p.name), "name", "") != "DEFAULT"]
        if given:
            fail(f"analyze {ctx.invoked_subcommand}: give {', '.join(given)} after the "
                 f"sub-command (`checkeval analyze {ctx.invoked_subcommand} "
                 f"{given[0]} …`)")
        return
    _analyze(run, task, metric_file, aggregation, bootstrap, ensemble, ensemble_mode, rankings,
             pairs, drop_biased, tie_margin, reference, split, shared_items, across_judges,
             calibrated, labelled, as_json)


@analyze_app.command("runs")
def analyze_runs_cmd(run: list[int] = RUNS, aggregation: str | None = AGGREGATION,
                     bootstrap: int = BOOTSTRAP, tie_margin: str = TIE_MARGIN,
                     split: str = SPLIT, shared_items: bool = SHARED_ITEMS,
                     as_json: bool = JSON) -> None:
    """Each run's correlation with human scores (sample / dataset / system level), its health
    and, for several runs, each paired with the first (`analyze --run …`).

    Prints the same as `analyze metric` per run under `"runs"`, with `"agreement"`
    (plus its `support` — items, groups, systems, runs of the units — `ci` of
    Krippendorff α resampling groups, and `ci_reasons`), `"stability"` (across
    distinct judges: `n_judges`, `n_runs`) and `"coverage"` (per run `n_items`,
    `n_groups`, `n_systems`; `n_shared_items`, `n_shared_groups`, `same_items`,
    `shared`, `note`) and, with two runs or more, `"comparisons"`: each later run
    B against the first run A on the items both scored (of the `--split` part),
    sample-level Spearman averaged over dimensions — `run_a`, `run_b`, `a`, `b`,
    `delta`, `ci` (paired bootstrap over groups), `mde`, `verdict`, `n_items`,
    `n_groups`, `ci_reason`, `dimensions` (the same per dimension), as `compare`'s
    `agreement`. Runs over different items are not comparable: `--shared-items`
    computes every run on the items all of them scored (each undefined value comes
    with its reason).
    """
    _analyze(run, aggregation=aggregation, bootstrap=bootstrap, tie_margin=tie_margin,
             split=split, shared_items=shared_items, as_json=as_json)


@analyze_app.command("ensemble")
def analyze_ensemble_cmd(run: list[int] = RUNS, aggregation: str | None = AGGREGATION,
                         bootstrap: int = BOOTSTRAP, ensemble_mode: str = ENSEMBLE_MODE,
                         tie_margin: str = TIE_MARGIN, split: str = SPLIT,
                         shared_items: bool = SHARED_ITEMS, as_json: bool = JSON) -> None:
    """The runs, and the mean of their standardised scores scored as one more judge (2+ runs;
    `analyze --run … --ensemble`).

    Prints what `analyze runs` does, and adds `"ensemble"` (`members`,
    `member_agreement`, `dimensions`, `average`).
    """
    _analyze(run, aggregation=aggregation, bootstrap=bootstrap, ensemble=True,
             ensemble_mode=ensemble_mode, tie_margin=tie_margin, split=split,
             shared_items=shared_items, as_json=as_json)


@analyze_app.command("metric")
def analyze_metric_cmd(task: str = typer.Option(..., "--task"),
                       metric_file: Path = typer.Option(..., "--metric-file"),
                       bootstrap: int = BOOTSTRAP, split: str = SPLIT,
                       as_json: bool = JSON) -> None:
    """An external metric's scores (CSV: item_id and one column per dimension) against human
    scores (`analyze --task … --metric-file …`).

    Prints `{"dimensions": {"<dim>": {"sample_level": {"spearman", "kendall",
    "pearson", "n", "ci", "skipped", "reasons", "ci_reasons"}, "dataset_level":
    {…}, "system_level": {…}, "support": {…}}}, "average": {…}, "support":
    {"n_items", "n_groups", "n_systems"}}` (`support`: the items with both scores
    and their groups and systems). A metric of the same name (the file's stem) is replaced;
    a note on stderr says so (the Analysis page asks first).
    """
    _analyze(task=task, metric_file=metric_file, bootstrap=bootstrap, split=split,
             as_json=as_json)


@analyze_app.command("rankings")
def analyze_rankings_cmd(run: list[int] = ONE_RUN, aggregation: str | None = AGGREGATION,
                         bootstrap: int = BOOTSTRAP, tie_margin: str = TIE_MARGIN,
                         reference: str | None = REFERENCE, split: str = SPLIT,
                         drop_biased: bool = DROP_BIASED, as_json: bool = JSON) -> None:
    """List level: system scores, ranks, τ/ρ vs reference ratings, Elo
    (`analyze --run … --rankings`).

    Prints `systems` (per system: `system`, `score`, `rank`, `ci`, `reference`,
    `elo`, `elo_ci`), `spearman` and `kendall` (value, `ci`, `n`, `reason`),
    `elo`, `human_elo` and per-aggregation values under `aggregations`.
    """
    _analyze(run, aggregation=aggregation, bootstrap=bootstrap, rankings=True,
             tie_margin=tie_margin, reference=reference, split=split, drop_biased=drop_biased,
             as_json=as_json)


@analyze_app.command("pairs")
def analyze_pairs_cmd(run: list[int] = ONE_RUN, aggregation: str | None = AGGREGATION,
                      tie_margin: str = TIE_MARGIN, split: str = SPLIT,
                      drop_biased: bool = DROP_BIASED, as_json: bool = JSON) -> None:
    """Instance level: agreement with human pairwise preferences
    (`analyze --run … --pairs`).

    Prints `accuracy`, `tie_rate`, `three_way`, `n_pairs`, `confusion`, `pairs`
    and `position_bias`: how often the human voter chose the answer shown on the
    left (as A) — over every vote of the task (of the `--split` part), whether or
    not the run scored its answers. `{"overall", "annotators", "warnings",
    "method"}`; `overall` and each entry of `annotators` (one per annotator name,
    `""` for unnamed imported votes) hold `annotator` (`null` overall), `n_votes`,
    `n_ordered` (votes whose shown order was recorded — the Pairwise votes page
    records it, imported files do not — ties included), `n_ties`, `n_decisive` (=
    `n_ordered` − `n_ties`), `n_left`, `share` (= `n_left / n_decisive`), `ci`
    (Wilson 95 % interval), `follows_position` (the interval excludes 0.5),
    `warning` (a sentence when it does, also listed under `warnings` and printed
    as `position bias:` lines by the text output) and `reason` (why `share` is
    `null`: no pairwise votes, no votes with a recorded order, only ties). The
    pooled `overall` figure counts each vote as independent. `n_groups`: the
    queries of the decisive votes; `follows_position` needs ≥ 6 of them, and
    `flag_reason` says why an interval that excludes 0.5 raised no flag.

    `--json` adds `repeated_votes: {"n_pairs", "n_votes", "annotators", "note"}` —
    pairs one annotator voted on more than once.
    """
    _analyze(run, aggregation=aggregation, pairs=True, tie_margin=tie_margin, split=split,
             drop_biased=drop_biased, as_json=as_json)


@analyze_app.command("judges")
def analyze_judges_cmd(task: str = typer.Option(..., "--task"), bootstrap: int = BOOTSTRAP,
                       as_json: bool = JSON) -> None:
    """Agreement across judges per method (checklist vs Likert), every completed run of the
    task (`analyze --task … --across-judges`).

    Agreement across judges per method — agreement across judges per method —
    CheckEval's checklist vs Likert comparison — over every completed run of the
    task: per method, one run per judge on one checklist version, compared on the
    items all of them scored. JSON: `rows` (per method: `method`, `label`,
    `version`, `runs`, `judges`, `n_items`, `n_groups`, `n_systems`, `n_units`,
    `alpha` — Krippendorff α (interval) of the dimension scores —, `ci` or null
    with `reason`, `alpha_z`, `ci_z`, `reason_z`, `z_note`, `n_units_z` — the same
    on each judge's scores standardised per dimension —, `per_dimension` {dim:
    {`alpha`, `n_items`}}, `binary`, and for Yes/No methods `alpha_yes_no`,
    `ci_yes_no`, `reason_yes_no`), `missing` (method → why it is not compared,
    e.g. one judge only) and `note` (why nothing is compared, or null).
    """
    _analyze(task=task, bootstrap=bootstrap, across_judges=True, as_json=as_json)


@analyze_app.command("calibrated")
def analyze_calibrated_cmd(run: list[int] = RUNS, labelled: int | None = LABELLED,
                           aggregation: str | None = AGGREGATION,
                           as_json: bool = JSON) -> None:
    """Human-calibrated estimate (PPI++) of each system's mean human score per dimension:
    human scores of dev groups as the labelled items, the judge's scores on every item
    (`analyze --run … --calibrated`).

    `--json`: per run, `{"runs": {"<run>": {"run", "judge", "method",
    "aggregation", "labelled_from", "n_labelled_per_system", "seed", "alpha",
    "note", "systems": {"<system>": {"<dimension>": {"estimate", "ci",
    "n_labelled", "n_unlabelled", "ci_human_only", "human_only", "judge_only",
    "ci_judge_only", "raw_judge", "lambda", "width_ratio", "method", "reason",
    "ci_unlabelled_mean", "ci_human_only_unlabelled_mean",
    "unlabelled_mean_moderated"}}}}}}`.

    Labelled items: the human scores on the task's dev groups (all groups when the
    task has no split, said in `labelled_from`), at most `--labelled N` per system
    drawn at random (seed 0); every other item the run scored is unlabelled.
    `method` names PPI++ (ppi-python); `judge_only` is the judge's mean mapped
    onto the human scale (biased); `ci_unlabelled_mean` reads the same data as an
    estimate of the unlabelled items' own mean (`docs/methods.md`), its spread
    moderated toward the dimension's other systems when ≥ 3 have ≥ 2 labelled
    items (`unlabelled_mean_moderated`). Items without a system id form one row,
    `(all items)`. `--labelled` below 2, or without `--calibrated`: exit 2.
    """
    _analyze(run, aggregation=aggregation, calibrated=True, labelled=labelled, as_json=as_json)


def _analyze(run: list[int] | None = None, task: str | None = None,
             metric_file: Path | None = None, aggregation: str | None = None,
             bootstrap: int = 200, ensemble: bool = False, ensemble_mode: str = "mean",
             rankings: bool = False, pairs: bool = False, drop_biased: bool = False,
             tie_margin: str = "0.1", reference: str | None = None, split: str = "all",
             shared_items: bool = False, across_judges: bool = False,
             calibrated: bool = False, labelled: int | None = None,
             as_json: bool = False) -> None:
    """Every mode of ``analyze``, chosen by its flags (the sub-commands set one)."""
    from checkeval_core.task_split import WHICH

    if split not in WHICH:
        fail(f"--split {split!r}: use dev, heldout or all")
    from checkeval_core.runs.options import check_bootstrap, check_run_aggregation

    margin = _tie_margin(tie_margin)
    db = open_db()
    try:
        check_bootstrap(bootstrap)
        if aggregation is not None or shared_items or ensemble:
            from checkeval_core.runs import get_run

            tasks: dict[str, int] = {}
            for rid in run or []:
                r = get_run(db, rid)
                tasks.setdefault(r["task"], rid)
                if aggregation is not None:
                    check_run_aggregation(r["method"], aggregation)
            if len(tasks) > 1 and (shared_items or ensemble):
                flag = "--shared-items" if shared_items else "--ensemble"
                fail(f"{flag}: " + ", ".join(f"run {rid} is on task {t!r}"
                                            for t, rid in tasks.items())
                     + "; runs of different tasks share no items")
    except (NotFound, ValueError) as e:
        fail(str(e))
    if across_judges:
        _across_judges(db, task, bootstrap, as_json)
        return
    if drop_biased and not (rankings or pairs):
        fail("--exclude-position-biased applies to human pairwise votes: use it with "
             "--rankings or --pairs")

    if labelled is not None and not calibrated:
        fail("--labelled needs --calibrated")
    if calibrated:
        _calibrated(db, run, labelled, aggregation, as_json)
        return
    if rankings or pairs:
        from checkeval_core.cli.ranking_cmds import analyze_rankings

        analyze_rankings(run, aggregation, rankings, pairs, margin, reference, bootstrap,
                         as_json, split, drop_biased)
        return
    from checkeval_core.analysis.external import MetricFileError, import_metric
    from checkeval_core.analysis.report import analyze_metric, analyze_runs

    try:
        if metric_file is not None:
            if not task:
                fail("--metric-file needs --task NAME")
            if not metric_file.exists():
                fail(f"{metric_file}: no such file")
            res = import_metric(db, task, metric_file)
            if res["replaced"]:  # on stderr: stdout stays the report (its JSON unchanged)
                typer.echo(f"note: replaced the metric {res['metric']!r} stored before "
                           f"({res['replaced']} scores)", err=True)
            out = analyze_metric(db, task, res["metric"], n_boot=bootstrap, split=split)
        elif run:
            out = analyze_runs(db, list(run), aggregation, n_boot=bootstrap, split=split,
                               shared=shared_items)
            from checkeval_core.analysis.health import runs_health

            out["health"] = runs_health(db, list(run), aggregation, margin)
            if len(run) > 1:
                from checkeval_core.analysis.compare import paired_with_first

                out["comparisons"] = paired_with_first(db, list(run), aggregation,
                                                       n_boot=bootstrap, split=split)
            if ensemble:
                from checkeval_core.analysis.ensemble import analyze_ensemble

                out["ensemble"] = analyze_ensemble(db, list(run), aggregation, n_boot=bootstrap,
                                                   mode=ensemble_mode, split=split)
        else:
            fail("give --run RUN_ID (repeatable) or --task NAME --metric-file FILE.csv")
    except (NotFound, MetricFileError, ValueError) as e:
        fail(str(e))
    out = clean_json(out)
    if as_json:
        typer.echo(json.dumps(out))
        return
    blocks = list(out["runs"].items()) if "runs" in out else [("metric", out)]
    if "ensemble" in out:
        blocks.append(("ensemble", {**out["ensemble"], "judge": "+".join(
            m["judge"] for m in out["ensemble"]["members"]), "method": "ensemble"}))
    from checkeval_core.runs.labels import run_labels

    names = run_labels(db, [int(k) for k, _ in blocks if str(k).isdigit()])
    for key, rep in blocks:
        typer.echo(f"== {names[int(key)]}" if str(key).isdigit() and int(key) in names else
                   f"== {key} {rep.get('judge', '')} {rep.get('method', '')}")
        for dim, d in rep["dimensions"].items():
            s = d["sample_level"]
            t = d["dataset_level"]
            typer.echo(f"{dim:>14}  sample ρ={s['spearman']} τ={s['kendall']} (n={s['n']})  "
                       f"dataset ρ={t['spearman']} r={t['pearson']} (n={t['n']})")
        for w in out.get("health", {}).get(key, {}).get("warnings", []):
            typer.echo(f"  health: {w['message']}")


def _across_judges(db, task: str | None, bootstrap: int, as_json: bool) -> None:
    """``analyze --task NAME --across-judges``: Krippendorff α across judges per method."""
    from checkeval_core.analysis.judge_agreement import judge_agreement

    if not task:
        fail("--across-judges needs --task NAME")
    try:
        out = clean_json(judge_agreement(db, task, n_boot=bootstrap))
    except NotFound as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(out))
        return
    if out["note"]:
        typer.echo(out["note"])
    for r in out["rows"]:
        ci = fmt_ci(r["ci"], reason=r["reason"])
        a = "undefined" if r["alpha"] is None else f"{r['alpha']:.3f}"
        z = "undefined" if r["alpha_z"] is None else f"{r['alpha_z']:.3f}"
        zci = fmt_ci(r["ci_z"], reason=r["reason_z"])
        typer.echo(f"{r['method']:>12}  α(scores) = {a} {ci}; α(standardised) = {z} {zci}"
                   f"  — {len(r['judges'])} judges "
                   f"({', '.join(r['judges'])}), v{r['version']}, {r['n_items']} items, "
                   f"{r['n_groups']} groups, {r['n_systems']} systems")
    for m, why in out["missing"].items():
        typer.echo(f"{m:>12}  not compared: {why}")


def _calibrated(db, run: list[int] | None, labelled: int | None, aggregation: str | None,
                as_json: bool) -> None:
    """``analyze --run R --calibrated``: PPI++ per system and dimension."""
    from checkeval_core.analysis.calibrate import run_calibrated

    if not run:
        fail("--calibrated needs --run RUN_ID")
    if labelled is not None and labelled < 2:
        fail(f"--labelled {labelled}: give ≥ 2 labelled items per system")
    try:
        out = {"runs": {str(r): run_calibrated(db, r, labelled, aggregation=aggregation)
                        for r in run}}
    except (NotFound, ValueError) as e:
        fail(str(e))
    out = clean_json(out)
    if as_json:
        typer.echo(json.dumps(out))
        return
    for key, rep in out["runs"].items():
        typer.echo(f"== run {key} {rep['judge']} · {rep['aggregation']} — {rep['method']}; "
                   f"labelled from {rep['labelled_from']}")
        if rep["note"]:
            typer.echo(f"  {rep['note']}")
        for system, dims in rep["systems"].items():
            for dim, e in dims.items():
                typer.echo(f"{system:>12} {dim:>12}  " + _calibrated_line(e))


def _calibrated_line(e: dict) -> str:
    def ci(c: list) -> str:
        return fmt_ci(c)
    est = fmt(e["estimate"], 2)
    tail = f"  ({e['reason']})" if e["reason"] else ""
    return (f"{est} {ci(e['ci'])} n={e['n_labelled']}+{e['n_unlabelled']}  humans alone "
            f"{ci(e['ci_human_only'])}  judge alone (biased) {ci(e['ci_judge_only'])}{tail}")


# -- reliability and bias probes ------------------------------------------------------------
probe_app = typer.Typer(no_args_is_help=True, help="Bias probes that ask the judge again.")
app.add_typer(probe_app, name="probe")


_num = fmt


def _ci(ci: list[float] | None, digits: int = 2) -> str:
    return "" if not ci else " " + fmt_ci(ci, digits)


@app.command("reliability")
def reliability_cmd(run: list[int] = typer.Option(..., "--run", help="RUN_ID (repeat, ≥ 2): "
                                                  "one version/judge/method asked with "
                                                  "different --param phrasing=N"),
                    max_flip: float = typer.Option(0.10, "--max-flip", help="flip rate above "
                                                   "which a question is unreliable"),
                    as_json: bool = typer.Option(False, "--json")) -> None:
    """Per question: how often its verdict flips across runs that differ only in wording.

    `--json` raises its flag (`unreliable` on rewording) only from items of ≥ 6
    groups: each question whose flip rate passes the threshold on fewer groups has
    `flag_reason` instead of the flag.
    """
    from checkeval_core.analysis.reliability import reliability

    if not 0 <= max_flip <= 1:
        fail(f"--max-flip {max_flip}: give a share between 0 and 1")
    try:
        res = reliability(open_db(), list(run), max_flip=max_flip)
    except (NotFound, ValueError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(clean_json(res)))
        return
    s = res["summary"]
    runs = ", ".join(f"#{r['run']} phrasing={r['phrasing']}" for r in res["runs"])
    typer.echo(f"{res['n_runs']} runs ({runs}), "
               f"{res['n_items']} items, {s['n_questions']} questions; pooled flip rate "
               f"{_num(s['flip_rate'])}{_ci(s['flip_rate_ci'])} over {s['n_pairs']} item × "
               f"question pairs; {s['n_unreliable']} question(s) above {res['max_flip']:g}"
               + (f" ({s['reason']})" if s["reason"] else ""))
    for q in res["questions"]:
        mark = "UNRELIABLE " if q["unreliable"] else ""
        typer.echo(f"  {mark}q{q['question_id']} flip={_num(q['flip_rate'])}"
                   f"{_ci(q['flip_rate_ci'])} sd={_num(q['p_yes_sd'])} n={q['n_items']}  "
                   f"{q['question']}" + (f"  ({q['reason']})" if q["reason"] else ""))


@app.command("bias")
def bias_cmd(run: int = typer.Option(..., "--run", help="RUN_ID (completed)"),
             threshold: float = typer.Option(0.3, "--threshold", help="|ρ| at or above which "
                                             "a question is flagged (with its CI excluding 0)"),
             as_json: bool = typer.Option(False, "--json")) -> None:
    """Per question and dimension: Spearman ρ of the judge's answers with output length.

    `--json` raises its flag (`flagged` on length) only from items of ≥ 6 groups:
    it adds `n_groups` (the run's groups) and `flag_reason` (why nothing is
    flagged, else `null`).
    """
    from checkeval_core.analysis.bias import length_bias

    if not 0 <= threshold <= 1:
        fail(f"--threshold {threshold}: give a correlation between 0 and 1")
    try:
        res = length_bias(open_db(), run, threshold=threshold)
    except (NotFound, ValueError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(clean_json(res)))
        return
    typer.echo(f"run {res['run']} ({res['judge']}, {res['method']}), {res['n_items']} items; "
               f"{res['n_flagged']} question(s) with |ρ| ≥ {res['threshold']:g} vs length")
    for d in res["dimensions"]:
        typer.echo(f"  {d['dimension']} ({d['aggregation']}) ρ={_num(d['rho'])}{_ci(d['ci'])} "
                   f"n={d['n']}" + (f"  ({d['reason']})" if d["reason"] else ""))
    if res["questions_reason"]:
        typer.echo(f"  {res['questions_reason']}")
    for q in res["questions"]:
        mark = "FLAGGED " if q["flagged"] else ""
        typer.echo(f"  {mark}q{q['question_id']} ρ={_num(q['rho'])}{_ci(q['ci'])} n={q['n']}  "
                   f"{q['question']}" + (f"  ({q['reason']})" if q["reason"] else ""))


@probe_app.command("verbosity")
def probe_verbosity_cmd(run: int = typer.Option(..., "--run", help="RUN_ID (completed)"),
                        n_items: int = typer.Option(20, "--items", help="items to pad and "
                                                    "ask again"),
                        estimate: bool = typer.Option(False, "--estimate", help="only say how "
                                                      "many judge calls it would make"),
                        as_json: bool = typer.Option(False, "--json")) -> None:
    """Ask the run's judge again on outputs padded with a restatement of themselves.

    `--estimate --json`: `{"n_items", "n_requests", "n_calls", "calls", "cached",
    "prompt_tokens", "completion_tokens", "seconds", "usd", "notes"}`.
    """
    from checkeval_core.analysis.bias import verbosity_cost, verbosity_probe

    db = open_db()
    try:
        res = (verbosity_cost(db, run, n_items) if estimate else
               verbosity_probe(db, run, n_items))
    except (NotFound, ValueError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(clean_json(res)))
        return
    if estimate:
        typer.echo(f"{res['n_items']} items, {res['n_requests']} requests, {res['n_calls']} "
                   f"judge call(s) not in the cache")
        from checkeval_core.runs.estimate import Estimate

        est = Estimate(**{k: res[k] for k in ("calls", "cached", "prompt_tokens",
                                              "completion_tokens", "seconds", "usd")})
        typer.echo(est.text())
        for note in res["notes"]:
            typer.echo(f"  {note}")
        return
    typer.echo(f"run {res['run']} ({res['judge']}, {res['method']}), {res['n_items']} items, "
               f"{res['n_calls']} judge call(s); {res['n_flagged']} question(s) whose p(Yes) "
               f"rises by more than {res['margin']:g} with padding (interval above 0)")
    for q in res["questions"]:
        mark = "FLAGGED " if q["flagged"] else ""
        typer.echo(f"  {mark}q{q['question_id']} {_num(q['yes_original'])} → "
                   f"{_num(q['yes_padded'])} Δ={_num(q['delta'])}{_ci(q['delta_ci'])} "
                   f"n={q['n']}  {q['question']}" + (f"  ({q['reason']})" if q["reason"]
                                                     else ""))
