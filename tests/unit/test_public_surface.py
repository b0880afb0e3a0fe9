"""The public surface: exported names are pinned, every setting and CLI command is documented."""

from __future__ import annotations

from pathlib import Path

import pytest

import mindbank
from mindbank.cli import build_parser
from mindbank.config import OPTIONS, Settings

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
