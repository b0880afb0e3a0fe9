"""Shared helpers of the LLM tests: a bank with a few memories, opened with the LLMs a test wires in."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mindbank.config import Settings
from mindbank.domain.records import MentalModel, RetainItem
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.service import MindBank
from mindbank.store.base import open_store

TAG = ("user:dana",)
BOAT = [
    "Dana: I am restoring a 1970s sailing boat with my brother in the harbour.",
    "Dana: The sailing boat needs a new mast and fresh varnish on the deck before summer.",
    "Dana: I volunteer at the animal shelter on Saturdays walking the older dogs.",
]
QUERY = "What is Dana working on?"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


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


def retain(mb: MindBank, *texts: str, tags: tuple[str, ...] = TAG) -> list[str]:
    """Retain each text as one item; returns the new memory ids."""
    return mb.retain("b", [RetainItem(content=t, tags=tags) for t in texts]).memory_ids


def make_model(mb: MindBank, *, model_id: str = "dana", trigger: dict[str, Any] | None = None) -> MentalModel:
    """Create the Dana model over ``BOAT`` (retained first if the bank is empty) and run its first refresh."""
    if not mb.store.bank_exists("b"):
        retain(mb, *BOAT)
    mb.create_mental_model("b", name="Dana", source_query=QUERY, tags=list(TAG), id=model_id, trigger=trigger)
    mb.run_pending()
    return mb.get_mental_model("b", model_id)


def untouched(before: MentalModel, after: MentalModel) -> None:
    """The refresh failure rules: nothing lost (content, document, watermark, last_refreshed_at)."""
    assert after.content == before.content
    assert after.structured_document == before.structured_document
    assert after.last_memory_seen_at == before.last_memory_seen_at
    assert after.last_refreshed_at == before.last_refreshed_at


def settings_with(settings: Settings, **changes: Any) -> Settings:
    return replace(settings, **changes)
