"""Memories: retained documents written with their chunks and facts, and the facts read, listed, edited and deleted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import Chunk, MemorySource, MemoryUnit, NewMemory, RetainItem
from mindbank.domain.scope import MemoryFilter


@dataclass(frozen=True, slots=True)
class DocumentWrite:
    """A retained document with its chunks and extracted facts, written in one transaction.

    ``continuation``: a later part of a document an earlier transaction began (a large retain written in
    sub-batches): the document row and its chunks exist already, only ``memories`` are added (``chunks`` empty).
    ``whole``: no continuation follows (a document whose facts are all repeats is then not written at all).
    ``restate``: the item re-retains a stored document whose content the caller found unchanged (no chunks, no
    memories): the store compares again in its transaction and changes nothing, or updates tags, metadata, context
    and time in place (:func:`mindbank.domain.repeats.restatement`); if the content differs by then it raises
    :class:`~mindbank.store.ports.errors.DocumentChanged` and writes nothing.
    """

    item: RetainItem
    document_id: str
    chunks: Sequence[Chunk]
    memories: Sequence[NewMemory]
    # the document's history entry: kind (None: "retain", or "append" for an append to a stored document) and the
    # operation that wrote it
    event: str | None = None
    operation_id: str | None = None
    continuation: bool = False
    whole: bool = True
    restate: bool = False


class MemoryStore(Protocol):
    """Facts and observations of a bank: written per retained document, read by id, listed, edited, deleted."""

    def write_documents(
        self, bank_id: str, documents: Sequence[DocumentWrite], *, model: tuple[str, int] | None = None
    ) -> list[list[str]]: ...
    def document_hashes(self, bank_id: str, document_ids: Sequence[str]) -> dict[str, str]: ...
    def get_memories(self, bank_id: str, ids: Sequence[str]) -> list[MemoryUnit]: ...
    def count_memories(self, bank_id: str) -> int: ...
    def list_memories(
        self, bank_id: str, flt: MemoryFilter, *, query: str | None, limit: int, offset: int,
        document_id: str | None = None,
    ) -> tuple[list[MemoryUnit], int]: ...  # fmt: skip
    def delete_memory(self, bank_id: str, memory_id: str) -> bool: ...
    def update_memory(
        self,
        bank_id: str,
        memory_id: str,
        *,
        text: str | None = None,
        embedding: npt.NDArray[np.float32] | None = None,
        context: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: dict[str, str] | None = None,
        model: tuple[str, int] | None = None,
    ) -> bool: ...
    def count_in_scope(self, bank_id: str, flt: MemoryFilter) -> dict[str, int]: ...
    def list_tags(
        self, bank_id: str, *, source: str, pattern: str | None, limit: int, offset: int
    ) -> tuple[list[tuple[str, int]], int]: ...
    # reflect's expand tool: the chunks and documents the memories came from
    def memory_sources(
        self, bank_id: str, memory_ids: Sequence[str], *, documents: bool = True
    ) -> list[MemorySource]: ...
