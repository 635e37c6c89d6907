"""CLI for human annotations: ``annotations import/export/job-create/jobs`` and
``agreement``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from checkeval_core.cli.app import app, clean_json, fail
from checkeval_core.store import NotFound, open_db

ann_app = typer.Typer(no_args_is_help=True, help="Human checklist answers.")
app.add_typer(ann_app, name="annotations")


@ann_app.command("import")
def import_cmd(file: Path = typer.Argument(...), task: str = typer.Option(..., "--task")) -> None:
    """Import annotator answers (CSV or JSONL: annotator, item_id, question, answer).

    Reads CSV or JSONL with `annotator, item_id, question` (text or id), `answer`
    (yes/no/unsure), all or nothing.
    """
    from checkeval_core.annotation.files import AnnotationFileError, import_annotations

    if not file.exists():
        fail(f"{file}: no such file")
    try:
        res = import_annotations(open_db(), task, file)
    except (AnnotationFileError, NotFound) as e:
        fail(str(e))
    dup = f" ({res['n_duplicates']} repeated rows counted once)" if res["n_duplicates"] else ""
    typer.echo(f"imported {res['n_annotations']} answers by {', '.join(res['annotators'])}{dup}")


@ann_app.command("export")
def export_cmd(task: str = typer.Option(..., "--task"), out: Path = typer.Option(..., "--out"),
               fmt: str = typer.Option("csv", "--format", help="csv|jsonl")) -> None:
    """Export annotations with timestamps.

    Adds `question_id, created_at, updated_at` to the columns `annotations import`
    reads.
    """
    from checkeval_core.annotation.files import export_annotations
    from checkeval_core.export import write_rows

    try:
        n = write_rows(export_annotations(open_db(), task), fmt, out,
                       columns=["annotator", "item_id", "question", "question_id", "answer",
                                "created_at", "updated_at"])
    except (NotFound, ValueError) as e:
        fail(str(e))
    typer.echo(f"wrote {n} rows to {out}")


@ann_app.command("job-create")
def job_create_cmd(
        task: str = typer.Option(..., "--task"),
        annotators: str = typer.Option("", "--annotators",
                                       help="comma-separated names; a pool may leave it empty "
                                            "(anyone with the annotator role may pull)"),
        k: int = typer.Option(1, "--k", help="answers per item, from different people"),
        items: int | None = typer.Option(None, "--items", help="how many items (default all)"),
        version: str = typer.Option("latest", "--version", help="frozen checklist version"),
        strategy: str = typer.Option("random", "--strategy", help="random|stratified"),
        dimension: str | None = typer.Option(None, "--dimension",
                                             help="stratified: the dimension whose human "
                                                  "scores form the strata"),
        pool: bool = typer.Option(False, "--pool", help="annotators pull the next item that "
                                                        "still needs answers (else each gets "
                                                        "a fixed list)"),
        claim_minutes: float = typer.Option(30.0, "--claim-minutes",
                                            help="pool: how long a pulled item is held"),
        hide_judges: bool = typer.Option(False, "--hide-judges",
                                         help="pool: never show annotators the judges' "
                                              "answers, even after they submit"),
        name: str = typer.Option("", "--name"),
        coordinator: str = typer.Option(..., "--coordinator",
                                        help="who creates it (recorded with the job)"),
        seed: int = typer.Option(0, "--seed"),
        as_json: bool = typer.Option(False, "--json")) -> None:
    """Create an annotation job: a fixed list per annotator with k of them per item, or a pool
    (--pool) each item of which needs k answers from k different people. The same request
    twice returns the existing job.

    Makes the job the *Annotation jobs* page makes: a fixed list per annotator
    (`--annotators`, `--k` of them per item) or, with `--pool`, items that each
    need `--k` answers from different people, pulled one at a time and held for
    `--claim-minutes`. `--json` prints `{"job_id", "created", "pool"}`; the same
    request twice returns the existing job (`created: false`).
    """
    from checkeval_core.annotation import jobs as J
    from checkeval_core.annotation import pools as P
    from checkeval_core.team import Denied

    names = [a for a in annotators.split(",") if a.strip()]
    if strategy not in ("random", "stratified"):
        fail(f"--strategy {strategy!r}: use random or stratified")
    if strategy == "stratified" and not dimension:
        fail("--strategy stratified needs --dimension")
    if not pool and not names:
        fail("--annotators: a fixed job needs at least one name (or use --pool)")
    if claim_minutes <= 0 or claim_minutes > 24 * 60:
        fail(f"--claim-minutes {claim_minutes}: from more than 0 to 1440")
    ver: int | str = int(version) if version.isdigit() else version
    stratum = dimension if strategy == "stratified" else None
    try:
        if pool:
            jid, created = P.create_pool(open_db(), task, k, items, ver, strategy, stratum,
                                         seed, name, coordinator, names, claim_minutes,
                                         reveal_judges=not hide_judges)
        else:
            jid, created = J.create_job_once(open_db(), task, names, k, items, ver, strategy,
                                             stratum, seed, name, coordinator)
    except (ValueError, NotFound, Denied) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps({"job_id": jid, "created": created, "pool": pool}))
    else:
        typer.echo(f"job #{jid} " + ("created" if created else
                                     "already exists with exactly these settings"))


@ann_app.command("jobs")
def jobs_cmd(task: str | None = typer.Option(None, "--task"),
             as_json: bool = typer.Option(False, "--json")) -> None:
    """Annotation jobs, newest first: kind (fixed / pool), k, items with all their answers,
    answers submitted of those needed.

    `--json` lists `{"job_id", "task", "name", "mode", "version", "items",
    "complete", "submitted", "needed"}` (submitted answers count submitted items
    only).
    """
    from checkeval_core.annotation import jobs as J
    from checkeval_core.annotation import pools as P

    db = open_db()
    out = []
    for j in J.list_jobs(db, task):
        prog = P.job_progress(db, j["id"])
        out.append({"job_id": j["id"], "task": j["task"], "name": j["name"],
                    "mode": j["mode"], "version": j["version"], **prog})
    if as_json:
        typer.echo(json.dumps(out))
        return
    for r in out:
        typer.echo(f"#{r['job_id']} {r['task']} {r['name'] or '(no name)'} · {r['mode']} · "
                   f"v{r['version']} · {r['complete']} of {r['items']} items complete · "
                   f"{r['submitted']} of {r['needed']} answers submitted")
    if not out:
        typer.echo("no annotation job")


@app.command("agreement")
def agreement_cmd(task: str = typer.Option(..., "--task"),
                  run: list[int] | None = typer.Option(None, "--run"),
                  as_json: bool = typer.Option(False, "--json")) -> None:
    r"""Agreement among annotators and between annotators and each judge run.

    `--json` prints `{"human_human": {"krippendorff_alpha", "fleiss_kappa",
    "n_units"}, "human_judge": {"<judge spec>": {"cohen_kappa",
    "krippendorff_alpha", "n_units"}}}`: a unit is one (item, question) answered
    Yes/No (`unsure` excluded); the human side is the majority (ties left out) or
    the settled answer; two runs with the same spec are keyed `run <id>: <spec>`.
    `human_human` also has `n_items`, `n_groups`, `n_systems`, `ci`
    (`{"krippendorff_alpha": \[lo, hi], "fleiss_kappa": \[lo, hi]}`, 95%
    percentile intervals resampling groups — documents / contexts / queries) and
    `ci_reasons` (why an interval is `null`, e.g. fewer than 2 groups).
    """
    from checkeval_core.annotation.agreement_report import agreement_report

    try:
        rep = agreement_report(open_db(), task, list(run) if run else None)
    except NotFound as e:
        fail(str(e))
    out = clean_json({"human_human": rep["human_human"], "human_judge": {
        k: {kk: v[kk] for kk in ("cohen_kappa", "krippendorff_alpha", "n_units")}
        for k, v in rep["human_judge"].items()}})
    typer.echo(json.dumps(out) if as_json else json.dumps(out, indent=2))
