"""The shared ``checkeval`` Typer objects every command module registers on, and the few
helpers they all use (exit with a message, JSON without NaN)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NoReturn

import click
import typer
from typer.core import TyperGroup

from checkeval_core.config import DB_ENV
from checkeval_core.stats.values import nan_to_none


def argv_problem(args: list[str]) -> str | None:
    """The message for the first command-line value that holds raw non-UTF-8 bytes (the shell
    hands them over as lone surrogates), naming the option it was given to; None if all are
    text."""
    from checkeval_core.runs.options import check_text_arg

    for i, a in enumerate(args):
        flag, value = (a.split("=", 1) if a.startswith("--") and "=" in a else
                       (args[i - 1] if i and args[i - 1].startswith("--") else "", a))
        try:
            check_text_arg(value, flag or (f"argument {i + 1}" if not a.startswith("--")
                                           else a.split("=", 1)[0]))
        except ValueError as e:
            return str(e)
    return None


class _CheckedGroup(TyperGroup):
    """The root command: refuses raw bytes in any value before a subcommand parses it (one
    rule for every command's text options: a task name, a judge spec, a file name)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        problem = argv_problem(args)
        if problem:
            click.echo(problem, err=True)
            raise SystemExit(2)
        return super().parse_args(ctx, args)


app = typer.Typer(no_args_is_help=True, add_completion=False, cls=_CheckedGroup,
                  help="CheckEval Studio: checklist-based LLM-as-a-judge evaluation.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks (speed, scale, quality).")
app.add_typer(bench_app, name="bench")


@app.callback()
def _root(ctx: typer.Context, db: Path | None = typer.Option(
        None, "--db", help=f"Database file (overrides ${DB_ENV}).")) -> None:
    if db is not None:
        os.environ[DB_ENV] = str(db)
    if ctx.invoked_subcommand != "bench":  # bench commands keep their own database
        from checkeval_core.config import default_db_path
        from checkeval_core.store import NotADatabase, check_database_file

        try:  # before any command reads an option or a file: nothing is written to it
            check_database_file(default_db_path())
        except NotADatabase as e:
            fail(str(e))


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``message`` on stderr and exit with ``code`` (2 = invalid input)."""
    typer.echo(message, err=True)
    raise typer.Exit(code)


def print_estimate(res: dict[str, Any], as_json: bool) -> None:
    """A bench command's ``--estimate``: the estimate's line and its notes, or the JSON."""
    from checkeval_core.runs.estimate import KEYS, Estimate  # the CLI's start stays light

    text = Estimate(**{k: res[k] for k in KEYS}).text()
    typer.echo(json.dumps(clean_json(res), allow_nan=False) if as_json
               else "\n".join([text, *res["notes"]]))


def clean_json(x: Any) -> Any:
    """NaN → null, tuples → lists, recursively: what ``json.dumps`` of a result may print."""
    if isinstance(x, float):
        return nan_to_none(x)
    if isinstance(x, dict):
        return {k: clean_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean_json(v) for v in x]
    return x
