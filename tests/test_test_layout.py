"""The test suite's own layout: shared helpers live in ``tests/helpers.py`` (plain functions)
and ``tests/conftest.py`` (fixtures), never in another test module, so that a test file can be
read, run, moved or deleted on its own."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

from checkeval_core.demo import load_demo
from checkeval_core.store import open_db
from tests.helpers import load_demo_copy, run_cli, same_pinned

TESTS = Path(__file__).resolve().parent


def imported_test_modules(path: Path) -> list[str]:
    """The ``tests.test_*`` modules ``path`` imports, at any depth (also inside functions)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("tests.test_"):
                found.append(node.module)
            elif node.module == "tests":
                found += [f"tests.{a.name}" for a in node.names if a.name.startswith("test_")]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("tests.test_")]
    return found


def test_the_check_sees_every_import_form(tmp_path):
    p = tmp_path / "x.py"
    p.write_text("from tests.test_a import f\nimport tests.test_b\n"
                 "def g():\n    from tests import test_c, helpers\n")
    assert imported_test_modules(p) == ["tests.test_a", "tests.test_b", "tests.test_c"]


def test_no_test_module_imports_another():
    offenders = {p.name: mods for p in sorted(TESTS.rglob("*.py"))
                 if (mods := imported_test_modules(p))}
    assert offenders == {}, ("move what these modules share into tests/helpers.py or "
                             f"tests/conftest.py: {offenders}")


def test_run_cli_leaves_the_environment_as_it_was(tmp_path, monkeypatch):
    monkeypatch.setenv("CHECKEVAL_DB", str(tmp_path / "default.db"))
    r = run_cli(["tasks", "--json", "--db", str(tmp_path / "other.db")])  # hoisted like main()
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [] and (tmp_path / "other.db").exists()
    # the --db callback writes CHECKEVAL_DB; the next in-process command must not inherit it
    assert os.environ["CHECKEVAL_DB"] == str(tmp_path / "default.db")
    bad = run_cli(["no-such-command"])
    assert bad.returncode == 2 and "no-such-command" in bad.stderr


def test_the_demo_copy_is_the_demo_and_refuses_a_used_database(db, demo_db_path):
    copied = open_db(demo_db_path)
    fresh = db
    load_demo(fresh)
    for table in ("task", "item", "question", "checklist_version"):
        q = f"SELECT COUNT(*) FROM {table}"
        assert copied.execute(q).fetchone() == fresh.execute(q).fetchone(), table
    with pytest.raises(AssertionError, match="only into an empty one"):
        load_demo_copy(copied)
    copied.close()


def test_pinned_floats_allow_another_cpus_last_bits_but_not_a_change():
    """A pinned float holds within 1e-9 relative (another CPU's summation order moves only the
    last bits), while a change in the sixth digit, a NaN, a type or a missing key still fails."""
    same_pinned({"r": -0.05195833376287648, "n": 3},
                {"r": -0.051958333762876466, "n": 3})
    same_pinned([0.0, float("nan")], [1e-15, float("nan")])
    for got, want in (({"r": -0.0519584}, {"r": -0.0519583}), ({"r": 0.5}, {"r": float("nan")}),
                      ({"r": 1}, {"r": 1.0}), ({"r": 0.5}, {"r": 0.5, "s": 1}),
                      ([0.5], [0.5, 0.5])):
        with pytest.raises(AssertionError):
            same_pinned(got, want)
