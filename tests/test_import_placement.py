"""Imports in the core, the pages and ``studio_ui/`` sit at the top of their module: inside a
function only a dependency that is optional or slow to load (the ones named in
docs/architecture.md), or anything in ``cli/``, whose commands import lazily to keep
``checkeval --help`` fast."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "checkeval_core"
#: The app's own modules: one place imports inside a function, the launcher, which checks the
#: installed Streamlit's options before Streamlit itself is loaded.
FACES = (ROOT / "app_pages", ROOT / "studio_ui")
LAUNCHER = (Path("studio_ui") / "serve.py", "streamlit")
#: Dependencies that may be imported inside a function (optional, or seconds to import).
SLOW_OR_OPTIONAL = ("llama_cpp", "vllm", "openai", "httpx", "ppi_py", "rouge_score", "sklearn",
                    "statsmodels", "ray")


def local_imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom):
                    out.append((node.lineno, node.module or "."))
                elif isinstance(node, ast.Import):
                    out.extend((node.lineno, a.name) for a in node.names)
    return sorted(set(out))


def test_the_walker_sees_an_import_inside_a_function(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("import os\n\ndef f():\n    if True:\n        from json import dumps\n")
    assert local_imports(p) == [(5, "json")]


def test_only_slow_or_optional_dependencies_are_imported_inside_functions():
    found = [f"{p.relative_to(CORE)}:{line}: {mod}" for p in sorted(CORE.rglob("*.py"))
             if p.relative_to(CORE).parts[0] != "cli"
             for line, mod in local_imports(p) if not mod.startswith(SLOW_OR_OPTIONAL)]
    assert found == []


def test_pages_and_studio_ui_import_at_the_top():
    found = [f"{p.relative_to(ROOT)}:{line}: {mod}" for d in FACES for p in sorted(d.rglob("*.py"))
             for line, mod in local_imports(p)
             if not mod.startswith(SLOW_OR_OPTIONAL)
             and not (p.relative_to(ROOT) == LAUNCHER[0] and mod.startswith(LAUNCHER[1]))]
    assert found == []
