"""Documents: listing and reading retained documents, their chunks and change history; deletion and retagging."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from mindbank.domain.resources import ChunkRecord, DocumentEvent, DocumentSummary
from mindbank.domain.tags import TagsMatch


class DocumentStore(Protocol):
    """Reads are ``store/resources.py``; deletion and retagging are memory writes (``store/<backend>/documents.py``)."""

    def list_documents(
        self, bank_id: str, *, query: str | None, tags: Sequence[str], tags_match: TagsMatch, time_field: str,
        start: datetime | None, end: datetime | None, limit: int, offset: int,
    ) -> tuple[list[DocumentSummary], int]: ...  # fmt: skip
    def get_document(self, bank_id: str, document_id: str) -> DocumentSummary | None: ...
    def list_chunks(
        self, bank_id: str, document_id: str, *, limit: int, offset: int
    ) -> tuple[list[ChunkRecord], int]: ...
    def chunks_at(self, bank_id: str, places: Sequence[tuple[str, int]]) -> list[ChunkRecord]: ...
    def get_chunk(self, chunk_id: str) -> ChunkRecord | None: ...
    def delete_document(self, bank_id: str, document_id: str) -> int | None: ...
    def retag_document(self, bank_id: str, document_id: str, tags: Sequence[str]) -> bool: ...
    def list_document_events(
        self, bank_id: str, document_id: str, *, limit: int, offset: int
    ) -> tuple[list[DocumentEvent], int]: ...
