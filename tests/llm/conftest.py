"""Shared helpers of the LLM tests: a bank with a few memories, opened with the LLMs a test wires in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_helpers import BOAT, QUERY, TAG, UUID, make_model, retain, settings_with, untouched  # noqa: F401

from mindbank.config import Settings
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.service.facade import MindBank
from mindbank.store.open import open_store


@pytest.fixture
def llm_settings(tmp_path: Path) -> Settings:
    """Fresh SQLite file, no automatic consolidation (no observations appear unless a test makes them)."""
    return Settings(database_url=str(tmp_path / "llm.db"), worker_poll_seconds=0.02, enable_auto_consolidation=False)


@pytest.fixture
def open_bank(llm_settings: Settings, embedder: MiniLMEmbedder) -> Iterator[Callable[..., MindBank]]:
    """``open_bank(reflect=llm, refresh=llm, ...)``: a MindBank on the test database with those LLMs."""
    opened: list[MindBank] = []

    def make(settings: Settings | None = None, **llms: Any) -> MindBank:
        chosen = settings or llm_settings
        store = open_store(chosen.resolved_database_url, dimension=embedder.dimension)
        mb = MindBank(store=store, embedder=embedder, settings=chosen, llms=llms)
        opened.append(mb)
        return mb

    yield make
    for mb in opened:
        mb.close()
