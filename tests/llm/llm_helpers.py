"""Plain helpers shared by the LLM tests (a uniquely named module, so imports never collide with another\nfolder's conftest)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from sample_texts import BOAT

from mindbank.config import Settings
from mindbank.domain.records import MentalModel, RetainItem
from mindbank.service.facade import MindBank

TAG = ("user:dana",)
QUERY = "What is Dana working on?"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


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
