"""CLI for data: ``demo``, ``import``, ``export`` and ``tasks``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from checkeval_core.cli.app import app, fail
from checkeval_core.datasets import KINDS, DatasetError, import_file, parse_mapping
from checkeval_core.export import write_rows
from checkeval_core.store import NotFound, open_db


@app.command("demo")
def demo_cmd() -> None:
    """Load the bundled demo tasks (idempotent).

    Loading again repairs a half-loaded demo. It also loads the pre-computed runs
    of `data/demo_runs/` (`CHECKEVAL_DEMO_RUNS=0` skips them;
    `CHECKEVAL_DEMO_RUNS_DIR=FOLDER` reads bundles from another folder, e.g. a
    build's output). Importing them creates the versions they were made on (2: the
    seed questions, 3: version 2 pruned on dev documents) and gives
    `summeval-demo` and `topical-chat-demo` the demo's dev / held-out split (seed
    0, held-out share 0.5) when they have none. A bundle this database cannot take
    (its questions edited away) is named on stderr and left out; the rest of the
    demo loads.
    """
    from checkeval_core.demo import load_demo

    result = load_demo(open_db())
    for task, entry in result.items():
        items = entry.get("items")
        what = items if isinstance(items, str) else f"{items['n_items']} items, " \
                                                    f"{items['n_scores']} human scores"
        extra = ""
        if "version" in entry:
            extra = f"; checklist version {entry['version']['version']} " \
                    f"({entry['version']['n_questions']} questions)"
        if entry.get("runs"):
            extra += f"; pre-computed run(s) {', '.join(map(str, entry['runs']))}"
        if entry.get("split"):
            s = entry["split"]
            extra += f"; dev / held-out split {s['dev']} / {s['heldout']} groups (seed {s['seed']})"
        typer.echo(f"{task}: {what}{extra}")
        for p in entry.get("problems", []):
            typer.echo(f"! {task}: pre-computed run not loaded — {p}", err=True)


@app.command("import")
def import_cmd(
    file: Path = typer.Argument(..., help="CSV, JSONL or JSON file."),
    task: str = typer.Option(..., "--task", help="Task to import into (created if missing)."),
    kind: str | None = typer.Option(None, "--kind", help=" | ".join(KINDS)),
    mapping: list[str] | None = typer.Option(None, "--map", help="FIELD=COLUMN (repeatable); FIELD is id, input, output, group_id, … or "
                 "human_<dimension> for a numeric column of human scores (human_overall=score)."),
) -> None:
    """Import a dataset into a task, all or nothing.

    Formats: CSV, JSONL or JSON (a list of objects); `output` required, `id` too
    unless the file has no id column (row numbers then); `group_id`, `system_id`,
    `input`/`source`, `context`, `fact`, `reference` optional; human scores from
    `human_<dimension>` columns, a `scores` object, or `--map
    human_<dimension>=COLUMN`, which reads any numeric column as that dimension's
    human scores (`--map human_overall=score`).

    Prints how many items and scores it imported, then — indented — when the file
    has no id column that each item's id is its row number, and every column
    imported neither as a field nor as a human score; or it exits 2 with every
    problem found.
    """
    if not file.exists():
        fail(f"{file}: no such file")
    try:
        result = import_file(open_db(), file, task, kind=kind, mapping=parse_mapping(mapping))
    except DatasetError as e:
        fail(str(e))
    dims = ", ".join(result["dimensions"]) or "none"
    typer.echo(f"imported {result['n_items']} items and {result['n_scores']} human scores into "
               f"task {result['task']!r} (dimensions: {dims})")
    for note in result["notes"]:  # ids from row numbers, columns not imported
        typer.echo(f"  {note}")


@app.command("export")
def export_cmd(
    what: str = typer.Option(..., "--what", help="items|scores (task) or answers|scores (run)"),
    out: Path = typer.Option(..., "--out", help="Output file."),
    fmt: str = typer.Option("csv", "--format", help="csv|jsonl"),
    task: str | None = typer.Option(None, "--task"),
    run: int | None = typer.Option(None, "--run"),
) -> None:
    """Export a task's items or human scores, or a run's answers or scores.

    `--run R --what answers` has a `judge` column (who gave the answer) and, on
    the rows an escalating run's second judge answered, the first judge's
    `first_judge_verdict` and `first_judge_p_yes` (`docs/formats.md`). Exported
    CSV cells starting with `=`, `+`, `-`, `@` are prefixed with `'`.
    """
    if fmt not in ("csv", "jsonl"):
        fail(f"--format {fmt!r}: use csv or jsonl")
    if (task is None) == (run is None):
        fail("give exactly one of --task NAME or --run ID")
    db = open_db()
    try:
        if task is not None:
            from checkeval_core.tasks import export_rows

            data = export_rows(db, task, what)
        else:
            from checkeval_core.runs.export import run_rows

            data = run_rows(db, run, what)
    except (NotFound, ValueError) as e:
        fail(str(e))
    n = write_rows(data, fmt, out)
    typer.echo(f"wrote {n} rows to {out}")


@app.command("tasks")
def tasks_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List tasks (name, kind, number of items, dimensions).

    `--json`: `[{"name", "kind", "n_items", "dimensions"}]`.
    """
    from checkeval_core.tasks import list_tasks

    data = list_tasks(open_db())
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False))
        return
    for t in data:
        typer.echo(f"{t['name']}\t{t['kind']}\t{t['n_items']} items\t{', '.join(t['dimensions'])}")
