"""The ``checkeval`` command line: the same core functions as the app, headless.

Each area registers its commands from its own module (``cli/data_cmds.py``,
``cli/judge_cmds.py``…) on the shared ``app`` / ``bench_app`` objects defined here.
Exit codes: 0 success, 2 invalid input (message on stderr), 1 unexpected failure.
"""

from __future__ import annotations

import sys

# Each command module registers its commands on ``app`` / ``bench_app`` when imported.
from checkeval_core.cli import (  # noqa: F401
    analysis_cmds,
    annotation_cmds,
    checklist_cmds,
    compare_cmds,
    data_cmds,
    evidence_cmds,
    judge_cmds,
    ranking_cmds,
    run_cmds,
)
from checkeval_core.cli.app import app, bench_app, fail

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


def main() -> None:
    """Console-script entry point."""
    app(args=hoist_db(sys.argv[1:]), prog_name="checkeval")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
