"""The shared ``checkeval`` Typer objects every command module registers on, and the few
helpers they all use (exit with a message, JSON without NaN)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NoReturn

import typer

from checkeval_core.config import DB_ENV
from checkeval_core.stats.values import nan_to_none

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="CheckEval Studio: checklist-based LLM-as-a-judge evaluation.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks (speed, scale, quality).")
app.add_typer(bench_app, name="bench")


@app.callback()
def _root(db: Path | None = typer.Option(
        None, "--db", help=f"Database file (overrides ${DB_ENV}).")) -> None:
    if db is not None:
        os.environ[DB_ENV] = str(db)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``message`` on stderr and exit with ``code`` (2 = invalid input)."""
    typer.echo(message, err=True)
    raise typer.Exit(code)


def clean_json(x: Any) -> Any:
    """NaN → null, tuples → lists, recursively: what ``json.dumps`` of a result may print."""
    if isinstance(x, float):
        return nan_to_none(x)
    if isinstance(x, dict):
        return {k: clean_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean_json(v) for v in x]
    return x
