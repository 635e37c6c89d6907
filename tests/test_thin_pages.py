"""Pages are thin, as docs/architecture.md promises: a page reads widgets, calls the core and
renders; every decision and number is made in the core. Checked on every file in ``app_pages/``:

- **At most 150 lines**, counted as plain lines of the file (``len(text.splitlines())``:
  docstring, comments and blank lines included), so the number is the one an editor shows.
- **No SQL**: no ``.execute(`` and no SELECT / INSERT / UPDATE / DELETE FROM.
- **No pandas computation**: none of the frame methods that compute (``.groupby(``,
  ``.merge(``, ``.pivot(``/``.pivot_table(``, ``.apply(``/``.applymap(``, ``.agg(``/
  ``.aggregate(``, ``.transform(``, ``.melt(``, ``.stack(``/``.unstack(``, ``.map(``,
  ``.value_counts(``, ``.cumsum(``, ``.rolling(``, ``.resample(``, ``.mean(``, ``.median(``,
  ``.sum(``, ``.std(``, ``.corr(``, ``.quantile(``, ``.describe(``), no ``pd.merge`` /
  ``pd.concat`` / ``pd.crosstab`` / ``pd.pivot_table`` / ``pd.cut`` / ``pd.qcut``, and no
  ``.join(`` except a string literal's (``", ".join(names)``). Building a frame from the
  rows a core function returned (``pd.DataFrame(rows)``) and ordering it for display
  (``.sort_values(`` by named columns) are rendering, so they are allowed.
- **No database of its own**: a page gets its connection from ``studio_ui.frame.page_db()``;
  ``open_db(`` appears only inside a function cached with ``st.cache_data`` /
  ``st.cache_resource`` that is handed the database path (its result is shared across
  sessions, so it opens the file itself instead of borrowing one session's connection).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PAGES = Path(__file__).resolve().parent.parent / "app_pages"
MAX_LINES = 150

_SQL = re.compile(r"\.execute\(|\bSELECT\b|\bINSERT\b|\bUPDATE\b|\bDELETE FROM\b")
_PANDAS = re.compile(
    r"\.(groupby|merge|pivot|pivot_table|apply|applymap|agg|aggregate|transform|melt|stack|"
    r"unstack|map|value_counts|cumsum|rolling|resample|mean|median|sum|std|corr|quantile|"
    r"describe)\("
    r"|\bpd\.(merge|concat|crosstab|pivot_table|cut|qcut)\("
    r"|(?<![\"'])\.join\(")


def _pages() -> list[Path]:
    return sorted(PAGES.glob("*.py"))


def sql_lines(text: str) -> list[int]:
    """Line numbers that run SQL."""
    return [n for n, line in enumerate(text.splitlines(), 1) if _SQL.search(line)]


def pandas_lines(text: str) -> list[int]:
    """Line numbers that compute with pandas (see the module docstring)."""
    return [n for n, line in enumerate(text.splitlines(), 1) if _PANDAS.search(line)]


def _cached(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(re.search(r"\bcache_(data|resource)\b", ast.unparse(d))
               for d in fn.decorator_list)


def uncached_open_db(text: str) -> list[int]:
    """Line numbers of ``open_db(...)`` calls outside a cached function."""
    found: list[int] = []

    def visit(node: ast.AST, in_cache: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            in_cache = _cached(node)
        if isinstance(node, ast.Call) and not in_cache:
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(
                f, ast.Attribute) else None
            if name == "open_db":
                found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, in_cache)

    visit(ast.parse(text), False)
    return found


def _offenders(check) -> list[str]:
    out = []
    for p in _pages():
        lines = p.read_text().splitlines()
        out += [f"{p.name}:{n}: {lines[n - 1].strip()}" for n in check(p.read_text())]
    return out


def test_no_page_runs_sql() -> None:
    offenders = _offenders(sql_lines)
    assert not offenders, "SQL in pages:\n" + "\n".join(offenders)


def test_no_page_computes_with_pandas() -> None:
    offenders = _offenders(pandas_lines)
    assert not offenders, ("pandas computation in pages (move it into checkeval_core):\n"
                           + "\n".join(offenders))


def test_pages_get_the_database_from_the_frame() -> None:
    offenders = _offenders(uncached_open_db)
    assert not offenders, ("open_db() in pages (use studio_ui.frame.page_db(); only a "
                           "cached function handed the path opens it):\n" + "\n".join(offenders))


def test_pages_are_at_most_150_lines() -> None:
    sizes = {p.name: len(p.read_text().splitlines()) for p in _pages()}
    too_long = {n: s for n, s in sizes.items() if s > MAX_LINES}
    assert not too_long, f"pages over {MAX_LINES} lines (move logic into checkeval_core): " \
                         f"{too_long}"


def test_the_checks_catch_what_they_forbid() -> None:
    """Each rule fails on a page that breaks it and passes the allowed forms."""
    assert sql_lines('rows = db.execute("SELECT 1")\nx = 1\n') == [1]
    bad = ('df = pd.DataFrame(rows)\nm = df.groupby("system").mean()\nj = a.merge(b)\n'
           'w = df.pivot_table(index="a")\nc = pd.concat([a, b])\nk = left.join(right)\n'
           'df["h"] = df["s"].map(lambda x: x)\n')
    assert pandas_lines(bad) == [2, 3, 4, 5, 6, 7]
    fine = ('t = pd.DataFrame(rows).sort_values("rank")\ns = ", ".join(names)\n'
            'u = f"{a}".join(parts)\nv = list(map(str, ids))\n')
    assert pandas_lines(fine) == []
    page = ("import streamlit as st\nfrom checkeval_core.store import open_db\n"
            "db = open_db()\n\n@st.cache_data(ttl=60)\ndef report(path):\n"
            "    return f(open_db(path))\n\ndef act():\n    g(S.open_db())\n")
    assert uncached_open_db(page) == [3, 10]
