"""CLI for human annotations: ``annotations import/export`` and ``agreement``."""

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
    """Import annotator answers (CSV or JSONL: annotator, item_id, question, answer)."""
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
    """Export annotations with timestamps."""
    from checkeval_core.annotation.files import export_annotations
    from checkeval_core.export import write_rows

    try:
        n = write_rows(export_annotations(open_db(), task), fmt, out,
                       columns=["annotator", "item_id", "question", "question_id", "answer",
                                "created_at", "updated_at"])
    except (NotFound, ValueError) as e:
        fail(str(e))
    typer.echo(f"wrote {n} rows to {out}")


@app.command("agreement")
def agreement_cmd(task: str = typer.Option(..., "--task"),
                  run: list[int] | None = typer.Option(None, "--run"),
                  as_json: bool = typer.Option(False, "--json")) -> None:
    """Agreement among annotators and between annotators and each judge run."""
    from checkeval_core.annotation.agreement_report import agreement_report

    try:
        rep = agreement_report(open_db(), task, list(run) if run else None)
    except NotFound as e:
        fail(str(e))
    out = clean_json({"human_human": rep["human_human"], "human_judge": {
        k: {kk: v[kk] for kk in ("cohen_kappa", "krippendorff_alpha", "n_units")}
        for k, v in rep["human_judge"].items()}})
    typer.echo(json.dumps(out) if as_json else json.dumps(out, indent=2))
