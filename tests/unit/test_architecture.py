"""The shape of the source tree: no import cycle between modules, no module over ``MAX_LINES`` (500) lines, and the
layer contract (``[tool.importlinter]`` in pyproject.toml, also run by ``make test`` as ``lint-imports``) kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

SRC = Path(__file__).resolve().parents[2] / "src" / "mindbank"
MAX_LINES = 500  # a module past this has more than one job: split it by job, never mechanically


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), i.e. import cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.find_modules_directly_imported_by(node):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycle_between_modules() -> None:
    # function-level imports count (they are how cycles hide), and so do imports under TYPE_CHECKING: a type-only
    # cycle still ties two modules together for a reader and a type checker
    graph = grimp.build_graph("mindbank", exclude_type_checking_imports=False)
    # a package's __init__ re-exporting its own modules is not a cycle between features
    for package in [m for m in graph.modules if (SRC / Path(*m.split(".")[1:]) / "__init__.py").exists()]:
        for child in graph.find_children(package):
            if graph.direct_import_exists(importer=package, imported=child):
                graph.remove_import(importer=package, imported=child)
    assert _cycles(graph) == []


def test_no_module_over_max_lines() -> None:
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_layer_contract_is_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint)], capture_output=True, text=True, cwd=SRC.parents[1])
    assert result.returncode == 0, result.stdout[-3000:]
