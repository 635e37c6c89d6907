"""The CLI's argument handling and the documentation's promise that every command it names exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checkeval_core.cli import app, hoist_db
from tests.helpers import load_demo_copy

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("argv, expected", [
    (["run", "--db", "x.db", "--task", "t"], ["--db", "x.db", "run", "--task", "t"]),
    (["tasks", "--json", "--db=y.db"], ["--db=y.db", "tasks", "--json"]),
    (["--db", "x.db", "tasks"], ["--db", "x.db", "tasks"]),
    # bench quality has its own --db (the bench cache): untouched
    (["bench", "quality", "--db", "b.db"], ["bench", "quality", "--db", "b.db"]),
    (["run", "--", "--db", "z"], ["run", "--", "--db", "z"]),
    ([], []),
])
def test_hoist_db(argv: list[str], expected: list[str]) -> None:
    assert hoist_db(argv) == expected


def test_db_after_subcommand_is_used(tmp_path: Path) -> None:
    import subprocess
    import sys

    db = tmp_path / "after.db"
    out = subprocess.run([sys.executable, "-m", "checkeval_core", "tasks", "--json", "--db", str(db)],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert db.exists()  # the database named after the subcommand was the one opened


def _documented_commands() -> set[tuple[str, ...]]:
    """Every ``checkeval <sub> [<sub2>]`` named in the README and docs/*.md."""
    cmds: set[tuple[str, ...]] = set()
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for path in texts:
        text = path.read_text()
        # only code: fenced blocks and inline `spans` (prose says "checkeval" for the method too)
        code = re.findall(r"```.*?```", text, flags=re.DOTALL)
        code += re.findall(r"`[^`\n]+`", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
        for m in re.finditer(r"(?<![\w/.=-])checkeval((?: +[a-z][a-z0-9-]*)+)", "\n".join(code)):
            words = m.group(1).split()
            cmds.add(tuple(words[:2]))
    return cmds


def test_every_documented_command_exists() -> None:
    runner = CliRunner()
    cmds = _documented_commands()
    assert len(cmds) > 15
    missing = []
    for words in sorted(cmds):
        res = runner.invoke(app, [*words, "--help"])
        if res.exit_code != 0:
            # a second word may be an argument (e.g. `checkeval import FILE`): try the first alone
            res = runner.invoke(app, [words[0], "--help"])
            if res.exit_code != 0:
                missing.append(" ".join(words))
    assert not missing, f"documented but not a command: {missing}"


#: ``checkeval bench --help`` lists them in this order
BENCH_COMMANDS = ["calibrate", "quality", "heldout", "grounded", "speed", "rate", "scale", "ray",
                  "escalate", "pool-queue"]


def test_every_bench_command_is_in_bench_cmds() -> None:
    from checkeval_core.cli import bench_app

    where = {c.name: c.callback.__module__ for c in bench_app.registered_commands}
    assert list(where) == BENCH_COMMANDS
    assert set(where.values()) == {"checkeval_core.cli.bench_cmds"}, where
    res = CliRunner().invoke(app, ["bench", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    listed = [w for line in res.output.splitlines()
              if (w := line.strip("│ ").split(" ", 1)[0]) in BENCH_COMMANDS]
    assert listed == BENCH_COMMANDS


def test_runs_lists_runs_with_options(db, db_path) -> None:
    import json

    from checkeval_core.runs import create_run

    load_demo_copy(db)
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=1,
                     params={"include_definition": True})
    res = CliRunner().invoke(app, ["runs", "--task", "summeval-demo", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert [r["run"] for r in rows] == [rid]
    assert rows[0]["status"] == "pending" and "include_definition=true" in rows[0]["options"]
    bad = CliRunner().invoke(app, ["runs", "--task", "nope"])
    assert bad.exit_code == 2 and "no such task" in bad.output
