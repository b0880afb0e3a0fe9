"""The service layer is a tree: components get the shared state and the services they need, never the facade;
the facade only delegates; service events are declared and emitted in one module."""

from __future__ import annotations

import ast
from pathlib import Path

from mindbank.service import MindBank
from mindbank.service import events as events_module
from mindbank.service.facade import delegate

SERVICE = Path(__file__).resolve().parents[2] / "src" / "mindbank" / "service"


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth (type-only and function-level imports included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _service_graph() -> dict[str, set[str]]:
    modules = {p.stem: p for p in SERVICE.glob("*.py") if p.stem != "__init__"}
    return {
        name: {m.rsplit(".", 1)[-1] for m in _imports(path) if m.startswith("mindbank.service.")} & set(modules)
        for name, path in modules.items()
    }


def test_no_service_module_imports_the_facade() -> None:
    # the package's __init__ re-exports MindBank for callers; no component may reach it
    offenders = sorted(name for name, deps in _service_graph().items() if name != "facade" and "facade" in deps)
    assert offenders == []


def test_no_import_cycle_inside_the_service_layer() -> None:
    graph = _service_graph()
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = "open"
        for dep in sorted(graph[node]):
            if state.get(dep) == "open":
                return [*path, node, dep]
            if dep not in state and (cycle := visit(dep, [*path, node])) is not None:
                return cycle
        state[node] = "done"
        return None

    cycles = [c for n in sorted(graph) if n not in state and (c := visit(n, [])) is not None]
    assert cycles == []


def test_every_facade_method_is_a_method_of_the_service_it_names(mindbank: MindBank) -> None:
    delegates = {name: d for name, d in vars(MindBank).items() if isinstance(d, delegate)}
    assert len(delegates) > 100
    for name, declared in delegates.items():
        owner = declared.method.__qualname__.split(".")[0]
        service = getattr(mindbank, declared.service)
        assert owner in {cls.__name__ for cls in type(service).__mro__}, name
        bound = getattr(mindbank, name)
        assert bound.__self__ is service and bound.__func__ is declared.method, name
        assert bound.__doc__ == declared.method.__doc__


def test_replacing_settings_on_the_facade_reaches_every_service(mindbank: MindBank) -> None:
    from dataclasses import replace

    mindbank.settings = replace(mindbank.settings, api_key="k-123")
    assert mindbank.access.settings.api_key == "k-123"
    assert mindbank.governance.core.settings.api_key == "k-123"
    assert mindbank.authenticate("k-123") is not None


def test_events_are_constructed_only_in_the_events_module() -> None:
    constructing = sorted(
        path.stem
        for path in SERVICE.rglob("*.py")
        if any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ServiceEvent"
            for node in ast.walk(ast.parse(path.read_text()))
        )
    )
    assert constructing == ["events"]
    names = [
        value for key, value in vars(events_module).items() if key.isupper() and isinstance(value, str) and "." in value
    ]
    assert sorted(names) == sorted(events_module.WEBHOOK_EVENTS)
