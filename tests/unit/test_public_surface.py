"""The public surface: exported names are pinned, every setting and CLI command is documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import mindbank
from mindbank.cli import build_parser
from mindbank.config import OPTIONS, Settings
from mindbank.server import create_app
from mindbank.service.facade import MindBank

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_exported_members() -> None:
    assert sorted(mindbank.__all__) == [
        "ConflictError", "InvalidInputError", "MemoryUnit", "MentalModel", "MindBank", "MindBankError",
        "NotFoundError", "Operation", "RetainItem", "RetainResult", "ScoredMemory", "Settings", "__version__",
    ]  # fmt: skip
    for name in mindbank.__all__:
        assert hasattr(mindbank, name)


def test_every_setting_is_documented() -> None:
    text = (DOCS / "configuration.md").read_text()
    for option in OPTIONS:
        assert f"`{option.env}`" in text, f"{option.env} missing from docs/configuration.md"


def test_every_cli_command_is_documented() -> None:
    text = (DOCS / "cli.md").read_text()
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in sub.choices:  # type: ignore[union-attr]
        assert f"mindbank {name}" in text


def test_settings_from_env_parses_and_rejects() -> None:
    s = Settings.from_env({"MINDBANK_PORT": "9000", "MINDBANK_ENABLE_MENTAL_MODEL_HISTORY": "false"})
    assert s.port == 9000 and s.enable_mental_model_history is False
    with pytest.raises(ValueError, match="MINDBANK_PORT"):
        Settings.from_env({"MINDBANK_PORT": "many"})


_ROUTE_SPAN = re.compile(r"`((?:GET|POST|PUT|PATCH|DELETE)(?:/(?:GET|POST|PUT|PATCH|DELETE))*) (/[^`\s]*)`")
BANK_PREFIX = "/v1/default/banks/{bank_id}"


def _documented_routes(text: str) -> set[tuple[str, str]]:
    """``(method, path)`` for every `METHOD[/METHOD…] /path` code span, path parameters reduced to ``{}``."""
    found = set()
    for methods, path in _ROUTE_SPAN.findall(text):
        for method in methods.split("/"):
            found.add((method, re.sub(r"\{[^}]*\}", "{}", path)))
    return found


def test_every_http_route_is_documented(mindbank: MindBank) -> None:
    # the OpenAPI document lists every route, also those of included routers (app.routes nests them)
    paths = create_app(mindbank, run_worker=False).openapi()["paths"]
    documented = _documented_routes((DOCS / "api.md").read_text())
    missing = []
    for full, operations in paths.items():
        path = full.removeprefix(BANK_PREFIX) if full.startswith(BANK_PREFIX + "/") else full
        for method in (m.upper() for m in operations):
            if (method, re.sub(r"\{[^}]*\}", "{}", path)) not in documented:
                missing.append(f"{method} {path}")
    assert missing == [], f"routes missing from docs/api.md: {missing}"


def test_every_mcp_tool_is_documented() -> None:
    from mindbank.mcp.tools import TOOL_NAMES

    text = (DOCS / "mcp.md").read_text()
    assert [t for t in TOOL_NAMES if f"| `{t}` |" not in text] == []
