"""The layout rules of docs/architecture.md, checked on the source: no import cycle between
modules (imports inside functions included), and the core never imports Streamlit."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("checkeval_core", "studio_ui")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for p in (REPO / pkg).rglob("*.py"):
            out[_module_name(p)] = p
    return out


def import_graph() -> dict[str, set[str]]:
    """Module → the project modules it imports anywhere in its body (functions included).

    ``from pkg import name`` points at ``pkg.name`` when that is a module, else at ``pkg``.
    A module's implicit import of its parent packages is not an edge (Python's own doing).
    """
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    pkg = pkg[: len(pkg) - node.level + 1]
                    base = ".".join(pkg + ([base] if base else []))
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    targets.append(sub if sub in mods else base)
            for t in targets:
                while t and t not in mods:  # `import a.b.c` of a name inside a module
                    t = t.rpartition(".")[0]
                if t and t != mod and not mod.startswith(t + "."):
                    graph[mod].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_walker_sees_a_cycle_inside_functions(tmp_path) -> None:
    g = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert cycles(g) == [["a", "b"]]


def test_no_import_cycle_between_modules() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles (in-function imports included):\n" + "\n".join(
        " <-> ".join(c) for c in found)


def test_core_never_imports_streamlit() -> None:
    offenders = []
    for p in (REPO / "checkeval_core").rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
                offenders.append(str(p.relative_to(REPO)))
    assert not offenders, offenders
