"""One printer for a figure: no module writes an interval ``[lo, hi]`` by hand.

A figure's interval, and what is shown when it has none, are printed only by
:class:`checkeval_core.stats.values.Figure` (``text`` / ``ci_text``); a view that formats
``[{lo}, {hi}]`` itself is how the app came to show a missing interval five different ways.
The check reads every f-string (and ``%`` / ``.format`` template) of the app's code. A share
is printed as a percentage by ``pct`` alone, for the same reason (it read ``42%`` on one page
and ``42 %`` on the next).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRINTER = ROOT / "checkeval_core" / "stats" / "values.py"
TEMPLATE = re.compile(r"\[(%[-+ #0-9.]*[a-z%]|\{[^{}]*\}), ?(%[-+ #0-9.]*[a-z%]|\{[^{}]*\})\]")


def _sources() -> list[Path]:
    files = [ROOT / "app.py", *(ROOT / "checkeval_core").rglob("*.py"),
             *(ROOT / "app_pages").rglob("*.py"), *(ROOT / "studio_ui").rglob("*.py"),
             *(ROOT / "scripts").rglob("*.py")]
    return [f for f in files if f.is_file() and f != PRINTER]


def _shape(node: ast.JoinedStr) -> str:
    """The f-string with each placeholder as ``{}``: ``f"[{a:.2f}, {b:.2f}]"`` → ``[{}, {}]``."""
    out = []
    for part in node.values:
        if isinstance(part, ast.Constant):
            out.append(str(part.value).replace("{", "(").replace("}", ")"))
        else:
            out.append("{}")
    return "".join(out)


def hand_formatted_intervals(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            if re.search(r"\[\{\}, ?\{\}\]", _shape(node)):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if TEMPLATE.search(node.value):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def _spec(node: ast.FormattedValue) -> str:
    parts = node.format_spec.values if node.format_spec is not None else []
    return "".join(str(p.value) for p in parts if isinstance(p, ast.Constant))


def _times_100(node: ast.AST) -> bool:
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)
               and any(isinstance(x, ast.Constant) and x.value == 100 for x in (n.left, n.right))
               for n in ast.walk(node))


def hand_formatted_percentages(path: Path, root: Path = ROOT) -> list[str]:
    """``f"{x:.0%}"`` or ``f"{100 * x:.0f} %"`` (not ``pct``); a SQL ``LIKE '%{x}%'`` or a
    plotly ``%{y}`` is not a percentage."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.JoinedStr):
            continue
        for i, part in enumerate(node.values):
            if not isinstance(part, ast.FormattedValue):
                continue
            after = node.values[i + 1] if i + 1 < len(node.values) else None
            sign_after = (isinstance(after, ast.Constant)
                          and str(after.value).lstrip(" ").startswith("%"))
            if _spec(part).endswith("%") or (sign_after and _times_100(part.value)):
                found.append(f"{path.relative_to(root)}:{part.lineno}")
    return found


def test_no_interval_is_formatted_outside_the_printer():
    found = [hit for f in _sources() for hit in hand_formatted_intervals(f)]
    assert not found, ("intervals printed by hand (use Figure.text / ci_text from "
                       "checkeval_core.stats.values): " + ", ".join(found))


def test_the_check_sees_each_way_of_writing_one(tmp_path):
    """The guard itself: an f-string, a ``%`` template and a ``.format`` template are
    caught; a list literal or an index is not."""
    f = tmp_path / "m.py"
    f.write_text('a = f"x [{lo:.2f}, {hi:.2f}] y"\nb = "[%.2f, %.2f]" % (1, 2)\n'
                 'c = "[{:.3f}, {:.3f}]".format(1, 2)\nd = f"{x[0]}, {y}"\ne = [1, 2]\n')
    assert hand_formatted_intervals(f, tmp_path) == ["m.py:1", "m.py:2", "m.py:3"]


def test_no_percentage_is_formatted_outside_the_printer():
    found = [hit for f in _sources() for hit in hand_formatted_percentages(f)]
    assert not found, ("percentages printed by hand (use pct from "
                       "checkeval_core.stats.values): " + ", ".join(found))


def test_the_percentage_check_sees_both_ways(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('a = f"{x:.0%} of"\nb = f"{100 * x:.0f} %"\nc = f"%{name}%"\n'
                 'd = f"{coef} %{{y:.2f}}"\ne = f"{x * 100:.1f}%"\n')
    assert hand_formatted_percentages(f, tmp_path) == ["m.py:1", "m.py:2", "m.py:5"]
