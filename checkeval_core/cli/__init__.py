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
]
for _name in COMMAND_MODULES:
    if importlib.util.find_spec(f"{__name__}.{_name}") is not None:
        importlib.import_module(f"{__name__}.{_name}")


def main() -> None:
    """Console-script entry point."""
    app(prog_name="checkeval")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
