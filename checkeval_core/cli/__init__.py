"""The ``checkeval`` command line: the same core functions as the app, headless.

Each area registers its commands from its own module (``cli/data_cmds.py``,
``cli/judge_cmds.py``…) on the shared ``app`` / ``bench_app`` objects defined here.
Exit codes: 0 success, 2 invalid input (message on stderr), 1 unexpected failure.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import NoReturn

import typer

from checkeval_core.config import DB_ENV

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


# Command modules, registered in this order (each one imports ``app``/``bench_app`` from here).
COMMAND_MODULES = [
    "data_cmds", "judge_cmds", "checklist_cmds", "run_cmds", "analysis_cmds", "annotation_cmds",
    "ranking_cmds",
]
for _name in COMMAND_MODULES:
    if importlib.util.find_spec(f"{__name__}.{_name}") is not None:
        importlib.import_module(f"{__name__}.{_name}")


def hoist_db(argv: list[str]) -> list[str]:
    """Move a ``--db PATH`` given after the subcommand to the front, where typer expects it.

    ``checkeval run --db x.db --task T`` then means ``checkeval --db x.db run --task T``.
    ``bench`` commands are left alone: ``bench quality --db`` is that command's own cache
    database. Everything after a ``--`` separator is left alone too.
    """
    if not argv or argv[0].startswith("-") or argv[0] == "bench":
        return list(argv)
    head, rest, i = [], [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest += argv[i:]
            break
        if a == "--db" and i + 1 < len(argv):
            head += [a, argv[i + 1]]
            i += 2
            continue
        if a.startswith("--db="):
            head.append(a)
        else:
            rest.append(a)
        i += 1
    return head + rest


MAX_INT = 2**63 - 1  # the largest number SQLite (ids, limits) can hold


def too_large(argv: list[str]) -> str:
    """The message for a number on the command line that no command can use (an id, a count
    beyond SQLite's integers), naming the option it was given to."""
    for i, a in enumerate(argv):
        value = a.split("=", 1)[1] if a.startswith("--") and "=" in a else a
        if value.lstrip("-").isdigit() and abs(int(value)) > MAX_INT:
            opt = a.split("=", 1)[0] if a.startswith("--") and "=" in a else \
                argv[i - 1] if i and argv[i - 1].startswith("--") else "a value"
            return f"{opt} {value}: the number is too large (at most {MAX_INT:,})"
    return "a number on the command line is too large"


def main() -> None:
    """Console-script entry point."""
    args = hoist_db(sys.argv[1:])
    try:
        app(args=args, prog_name="checkeval")
    except OverflowError:  # a huge id or count reached SQLite: an input error, not a crash
        typer.echo(too_large(args), err=True)
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
