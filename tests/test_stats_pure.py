"""The statistics floor takes values and reads no table: no module of ``checkeval_core/stats/``
runs SQL (``.execute(`` and its kin) or names a table of the store in a string. People's
answers and votes are read one level up (``checkeval_core/people.py``) and come down as
values."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from checkeval_core.store import open_db

STATS = Path(__file__).resolve().parent.parent / "checkeval_core" / "stats"
SQL_CALLS = {"execute", "executemany", "executescript", "query", "table"}


def _tables(tmp_path: Path) -> list[str]:
    db = open_db(tmp_path / "schema.db")
    return [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND "
                                     "name NOT LIKE 'sqlite_%'")]


def offences(source: str, tables: list[str]) -> list[str]:
    """Where ``source`` calls the database or names one of ``tables`` in SQL."""
    names = "|".join(sorted(map(re.escape, tables), key=len, reverse=True))
    # SQL keywords in capitals, as every query of the project is written (prose says "from")
    sql = re.compile(rf"\b(FROM|JOIN|INTO|UPDATE|TABLE)\s+({names})\b")
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in SQL_CALLS:
            found.append(f"line {node.lineno}: .{node.func.attr}(")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and (m := sql.search(node.value)):
            found.append(f"line {node.lineno}: names table {m.group(2)!r}")
    return found


def test_the_check_sees_sql_and_table_names(tmp_path):
    tables = _tables(tmp_path)
    assert {"annotation", "human_score", "item", "preference", "answer", "run",
            "adjudication"} <= set(tables)
    bad = ('def f(db):\n    return db.execute(f"SELECT value FROM annotation WHERE x IN '
           '({m})")\n')
    assert offences(bad, tables) == ["line 2: .execute(", "line 2: names table 'annotation'"]
    assert offences("X = 'SELECT 1 FROM human_score h JOIN item i'\n", tables) == [
        "line 1: names table 'human_score'"]
    # words that are table names in prose are not SQL
    assert offences('"""the answer of an item, from a run"""\n', tables) == []


def test_no_module_of_the_floor_reads_the_store(tmp_path):
    tables = _tables(tmp_path)
    found = {p.name: bad for p in sorted(STATS.glob("*.py"))
             if (bad := offences(p.read_text(encoding="utf-8"), tables))}
    assert found == {}, ("the statistics floor takes arrays: read the store one level up "
                         f"(checkeval_core/people.py, tasks.py) and pass values: {found}")
