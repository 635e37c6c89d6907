"""The layout rules of docs/architecture.md, checked on the source: no import cycle between
modules (imports inside functions included), no import from a higher layer (:data:`LAYERS`),
and the core never imports Streamlit."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("checkeval_core", "studio_ui")
#: docs/architecture.md's layer diagram, bottom first: a module imports only from its own layer
#: or the ones below it. An entry names a package or module and covers what is inside it; the
#: longest matching entry decides.
LAYERS: list[tuple[str, ...]] = [
    ("checkeval_core.safeio", "checkeval_core.jsontext", "checkeval_core.textsafe",
     "checkeval_core.export", "checkeval_core.config", "checkeval_core.identity",
     "checkeval_core.fields"),                                              # leaf helpers
    ("checkeval_core.stats",),                                              # statistics floor
    ("checkeval_core.datasets", "checkeval_core.tasks", "checkeval_core.store",
     "checkeval_core.migrations", "checkeval_core.task_split",
     "checkeval_core.people", "checkeval_core.team"),     # the store, people, roles on writes
    ("checkeval_core.judges",),
    ("checkeval_core.checklists", "checkeval_core.prompts"),
    ("checkeval_core.runs",),
    ("checkeval_core.annotation",),                                         # people's answers
    ("checkeval_core.analysis",),
    ("checkeval_core.bench", "checkeval_core.demo"),
    ("checkeval_core.cli",),
    ("checkeval_core", "studio_ui"),                       # the package root, the app's widgets
]


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


def layer_of(module: str) -> int | None:
    """The index in :data:`LAYERS` of the longest entry that is ``module`` or contains it."""
    best: tuple[int, int] | None = None
    for k, names in enumerate(LAYERS):
        for n in names:
            if (module == n or module.startswith(n + ".")) and (best is None or
                                                                 len(n) > best[1]):
                best = (k, len(n))
    return None if best is None else best[0]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """``a -> b`` for every import of a module from a higher layer than its own."""
    out = []
    for mod, targets in sorted(graph.items()):
        for t in sorted(targets):
            if layer_of(t) > layer_of(mod):
                out.append(f"{mod} -> {t}")
    return out


def test_every_module_has_a_layer() -> None:
    missing = [m for m in import_graph() if layer_of(m) is None]
    assert not missing, f"add these to LAYERS (and docs/architecture.md): {missing}"


def test_the_layer_check_sees_an_upward_import() -> None:
    g = {"checkeval_core.stats.bootstrap": {"checkeval_core.analysis.report"},
         "checkeval_core.analysis.report": {"checkeval_core.stats.bootstrap",
                                            "checkeval_core.annotation.jobs"}}
    assert upward_imports(g) == ["checkeval_core.stats.bootstrap -> "
                                 "checkeval_core.analysis.report"]


def test_no_import_from_a_higher_layer() -> None:
    found = upward_imports(import_graph())
    assert not found, ("imports from a higher layer (docs/architecture.md, The layer rule; "
                       "in-function imports included):\n" + "\n".join(found))


def test_layers_mirror_the_architecture_doc() -> None:
    """Every package or module named in LAYERS appears in the doc's layer diagram, and the
    diagram lists the layers in the same order (top first)."""
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    diagram = doc.split("## The layer rule", 1)[1].split("```", 2)[1]
    lines = diagram.splitlines()

    def line_of(name: str) -> int:
        short = name.removeprefix("checkeval_core.").removeprefix("checkeval_core")
        short = short or "checkeval_core"
        for k, line in enumerate(lines):
            words = line.replace("/", " ").replace("(", " ").split()
            if short in words:
                return k
        raise AssertionError(f"{short} is not in docs/architecture.md's layer diagram")

    core = [names for names in LAYERS[:-1]]  # the last layer is the faces' frame
    rows = [max(line_of(n) for n in names) for names in core]
    assert rows == sorted(rows, reverse=True), rows


def test_core_never_imports_streamlit() -> None:
    offenders = []
    for p in (REPO / "checkeval_core").rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
                offenders.append(str(p.relative_to(REPO)))
    assert not offenders, offenders
