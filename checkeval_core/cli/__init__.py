"""The ``checkeval`` command line: the same core functions as the app, headless.

Each area registers its commands from its own module (``cli/data_cmds.py``,
``cli/judge_cmds.py``…; every ``bench`` command in ``cli/bench_cmds.py``) on the shared ``app`` / ``bench_app`` objects defined here.
Exit codes: 0 success, 2 invalid input (message on stderr), 1 unexpected failure.

A command module imports the core inside each command, not at its top: ``checkeval --help``
and each command then load only what that command uses (the analysis, chart and benchmark
modules pull in plotly, scikit-learn, statsmodels and ppi_py, seconds of import time).
"""

from __future__ import annotations

import sys

import typer

# Each command module registers its commands on ``app`` / ``bench_app`` when imported.
from checkeval_core.cli import (  # noqa: F401
    align_cmds,
    analysis_cmds,
    annotation_cmds,
    bench_cmds,
    checklist_cmds,
    compare_cmds,
    data_cmds,
    evidence_cmds,
    judge_cmds,
    ranking_cmds,
    run_cmds,
    team_cmds,
)
from checkeval_core.cli.app import app, bench_app, fail
from checkeval_core.judges.model_files import ModelMissing
from checkeval_core.store import NotADatabase

__all__ = ["app", "bench_app", "fail", "hoist_db", "main"]


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
    except NotADatabase as e:  # e.g. a bench command's own --db that is not a database
        typer.echo(str(e), err=True)
        sys.exit(2)
    except ModelMissing as e:  # an embedded variant whose packages are not installed: the
        # message says what to install (any command that reaches the model, not a traceback)
        typer.echo(str(e), err=True)
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
