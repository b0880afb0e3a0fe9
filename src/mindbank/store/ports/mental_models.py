"""Mental models: rows, refresh results with their history, citations, triggers and the staleness reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from mindbank.domain.records import HistoryEntry, MentalModel
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.tags import TagsMatch
from mindbank.store.ports.governance import SpendRecord


@dataclass(frozen=True, slots=True)
class StalenessProbe:
    """One model's staleness question: is anything in ``scope`` newer than ``since``, or has a memory the model
    cites left ``read_scope`` (re-tagged or re-typed out of what the model reads) since then, or are facts it was
    given still ``carried_over``?"""

    mental_model_id: str
    since: datetime | None
    scope: MemoryFilter
    read_scope: MemoryFilter | None = None
    carried_over: bool = False  # facts an earlier delta could not place are pending (stale whatever was written)


@dataclass(frozen=True, slots=True)
class StalenessReads:
    """What a backend read for a page of probes, in one statement; the staleness rule itself is
    ``engine/refresh/staleness.py``.

    ``bank_last``: the bank's newest write stamp. ``newest``: per probe scope, its newest memory written after the
    oldest ``since`` of the probes sharing it (None: none). ``gone``: models citing a memory that no longer exists.
    ``written``: ``(model id, memory id, updated_at)`` for cited memories written since the page's oldest ``since``
    (they may have left the scope the model reads)."""

    bank_last: datetime | None
    newest: dict[MemoryFilter, datetime | None]
    gone: set[str]
    written: list[tuple[str, str, datetime]]


def cited_ids(document: dict[str, Any] | None) -> list[str]:
    """Memory ids cited by a stored structured document; a malformed document cites nothing (the refresh engine
    reports it as unreadable, the store only indexes)."""
    ids: set[str] = set()
    try:
        for section in (document or {}).get("sections", []):
            for block in section.get("blocks", []):
                ids.update(str(m) for m in block.get("memory_ids", []))
    except (AttributeError, TypeError):
        return []
    return sorted(ids)


class MentalModelStore(Protocol):
    """Mental model rows; ``save_refresh`` writes a refresh's result, its history entry (at most ``history_cap``
    kept) and its spend in one transaction."""

    def insert_mental_model(self, model: MentalModel) -> None: ...
    def get_mental_model(self, bank_id: str, model_id: str) -> MentalModel | None: ...
    def list_mental_models(
        self,
        bank_id: str,
        *,
        tags: Sequence[str],
        tags_match: TagsMatch,
        limit: int,
        offset: int,
        detail: str = "full",
        exclude_knowledge_pages: bool = False,
    ) -> tuple[list[MentalModel], int]: ...
    def save_refresh(
        self, model: MentalModel, *, history: dict[str, Any] | None, history_cap: int, spend: SpendRecord | None = None
    ) -> None: ...
    def list_history(self, bank_id: str, model_id: str) -> list[HistoryEntry]: ...
    def citing_models(self, bank_id: str, memory_id: str) -> list[str]: ...
    def delete_mental_model(self, bank_id: str, model_id: str) -> bool: ...
    def list_models_with_trigger(self, key: str, *, bank_id: str | None = None) -> list[MentalModel]: ...
    def staleness_reads(self, bank_id: str, probes: Sequence[StalenessProbe]) -> StalenessReads: ...
