"""The judge modules import each other without a cycle, counting imports inside functions
(which only hide a cycle from the interpreter, not from a reader)."""

from __future__ import annotations

import ast
from pathlib import Path

JUDGES = Path(__file__).resolve().parent.parent / "checkeval_core" / "judges"
PREFIX = "checkeval_core.judges"


def judge_imports() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(JUDGES.glob("*.py")):
        name = f"{PREFIX}.{path.stem}" if path.stem != "__init__" else PREFIX
        edges = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            edges.update(t for t in targets
                         if t.startswith(PREFIX + ".") and (JUDGES / f"{t[len(PREFIX) + 1:]}.py"
                                                            ).exists())
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str]:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (cycle := visit(m)):
                return cycle
        stack.pop()
        state[n] = 2
        return []

    for n in sorted(graph):
        if n not in state and (cycle := visit(n)):
            return cycle
    return []


def test_no_import_cycle_among_judge_modules():
    graph = judge_imports()
    assert f"{PREFIX}.registry" in graph[f"{PREFIX}.saved"]  # the walk sees real edges
    assert find_cycle(graph) == [], " -> ".join(find_cycle(graph))


def test_the_walk_finds_a_cycle_hidden_in_a_function():
    graph = {"a": {"b"}, "b": {"a"}}
    assert find_cycle(graph) == ["a", "b", "a"]
