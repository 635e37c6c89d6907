"""The statistics floor takes values and reads no table: no module of ``checkeval_core/stats/``
runs SQL (``.execute(`` and its kin), names a table of the store in a string, imports a
database driver or takes a database connection (a ``db`` / ``conn`` parameter). People's
answers and votes are read one level up (``checkeval_core/people.py``) and come down as
values.

And the floor is the only place that computes a statistic with a library: no module of the
project outside ``checkeval_core/stats/`` imports ``scipy.stats``, ``sklearn.metrics`` or
``krippendorff`` (in any import form, or reaches ``scipy.stats`` as an attribute)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from checkeval_core.store import open_db

REPO = Path(__file__).resolve().parent.parent
STATS = REPO / "checkeval_core" / "stats"
SQL_CALLS = {"execute", "executemany", "executescript", "query", "table"}
DRIVERS = ("sqlite3", "sqlite_utils", "apsw")
CONNECTIONS = {"db", "conn", "connection", "database"}
#: The statistics libraries only the floor imports.
STATISTICS_LIBRARIES = ("scipy.stats", "sklearn.metrics", "krippendorff")


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
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) \
                else [node.module or ""]
            found += [f"line {node.lineno}: imports {n}" for n in names
                      if n.split(".")[0] in DRIVERS]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            a = node.args
            found += [f"line {node.lineno}: takes a database ({arg.arg})"
                      for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs)
                      if arg.arg in CONNECTIONS]
    return found


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` of a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def statistics_imports(source: str) -> list[str]:
    """Where ``source`` imports one of :data:`STATISTICS_LIBRARIES` (``import scipy.stats``,
    ``from scipy import stats``, ``from scipy.stats import t``, ``from sklearn import metrics``,
    ``import krippendorff as k`` …) or reaches ``scipy.stats`` as an attribute."""
    def hit(name: str) -> bool:
        return any(name == lib or name.startswith(lib + ".") for lib in STATISTICS_LIBRARIES)

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if hit(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [f"line {node.lineno}: from {node.module} import {a.name}"
                      for a in node.names
                      if hit(node.module) or hit(f"{node.module}.{a.name}")]
        elif isinstance(node, ast.Attribute) and (d := _dotted(node)) and hit(d) \
                and not hit(_dotted(node.value) or ""):
            found.append(f"line {node.lineno}: {d}")
    return found


def _outside_the_floor() -> list[Path]:
    files = [p for pkg in ("checkeval_core", "studio_ui", "app_pages")
             for p in sorted((REPO / pkg).rglob("*.py"))]
    return [p for p in [*files, REPO / "app.py"]
            if p.exists() and STATS not in p.parents]


def test_the_check_sees_sql_and_table_names(tmp_path):
    tables = _tables(tmp_path)
    assert {"annotation", "human_score", "item", "preference", "answer", "run",
            "adjudication"} <= set(tables)
    bad = ('def f(db):\n    return db.execute(f"SELECT value FROM annotation WHERE x IN '
           '({m})")\n')
    assert offences(bad, tables) == ["line 1: takes a database (db)", "line 2: .execute(",
                                     "line 2: names table 'annotation'"]
    assert offences("X = 'SELECT 1 FROM human_score h JOIN item i'\n", tables) == [
        "line 1: names table 'human_score'"]
    # words that are table names in prose are not SQL
    assert offences('"""the answer of an item, from a run"""\n', tables) == []
    # a driver imported, a connection taken: the store passed down, even with the SQL elsewhere
    assert offences("import sqlite3\nfrom sqlite_utils import Database\n", tables) == [
        "line 1: imports sqlite3", "line 2: imports sqlite_utils"]
    assert offences("def labels(db, task, *, conn=None):\n    return rows(db, task)\n",
                    tables) == ["line 1: takes a database (db)",
                                "line 1: takes a database (conn)"]
    assert offences("def f(values, dbl=0):\n    return values\n", tables) == []


def test_no_module_of_the_floor_reads_the_store(tmp_path):
    tables = _tables(tmp_path)
    found = {p.name: bad for p in sorted(STATS.glob("*.py"))
             if (bad := offences(p.read_text(encoding="utf-8"), tables))}
    assert found == {}, ("the statistics floor takes arrays: read the store one level up "
                         f"(checkeval_core/people.py, tasks.py) and pass values: {found}")


def test_the_check_sees_every_form_of_a_statistics_import():
    src = ("import scipy.stats\nimport scipy.stats as ss\nfrom scipy import stats, optimize\n"
           "from scipy.stats import t, fisher_exact\nfrom sklearn import metrics\n"
           "from sklearn.metrics import cohen_kappa_score\nimport krippendorff\n"
           "import scipy\nx = scipy.stats.t.ppf(0.975, 3)\n")
    assert statistics_imports(src) == [
        "line 1: import scipy.stats", "line 2: import scipy.stats",
        "line 3: from scipy import stats", "line 4: from scipy.stats import t",
        "line 4: from scipy.stats import fisher_exact", "line 5: from sklearn import metrics",
        "line 6: from sklearn.metrics import cohen_kappa_score", "line 7: import krippendorff",
        "line 9: scipy.stats"]
    # other parts of the same libraries, the floor's own modules and prose are not statistics
    assert statistics_imports(
        "from scipy.optimize import nnls\nfrom sklearn.linear_model import RidgeCV\n"
        "from checkeval_core.stats.agreement import krippendorff_alpha\nimport scipy\n"
        "from . import stats\n'Kendall tau (scipy.stats)'\n") == []


def test_no_statistics_library_is_imported_outside_the_floor():
    found = {str(p.relative_to(REPO)): bad for p in _outside_the_floor()
             if (bad := statistics_imports(p.read_text(encoding="utf-8")))}
    assert found == {}, ("a statistic is computed in checkeval_core/stats/ (one implementation "
                         f"per statistic): call the floor instead: {found}")
