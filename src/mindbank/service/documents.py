"""Documents: what was retained, as the reference's ``/documents`` API shows it — listing (paging, tags, search,
time window), one document with its text, its chunks, its change history, retagging, deletion and reprocessing.

Deleting a document deletes the memories drawn from it; that is a memory write, so the mental models citing them go
stale by the one staleness rule (``engine/refresh/staleness.py``: a cited memory that no longer exists) and their
next refresh drops the blocks. Retagging is a memory write too. Reprocessing re-extracts the stored text with the
current retain engine (an ``reprocess_document`` operation), replacing the document's memories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from mindbank.domain.records import Operation, RetainItem
from mindbank.domain.resources import ChunkRecord, DocumentEvent, DocumentSummary
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.tags import TagsMatch, normalize_tags
from mindbank.domain.timeutil import utcnow
from mindbank.engine.retain.extractive import prepare_documents
from mindbank.errors import InvalidInputError, NotFoundError
from mindbank.service.core import ServiceCore, changed_in_bank, found_in_bank
from mindbank.worker.runner import PermanentFailure


class DocumentsService(ServiceCore):
    """Retained documents: list, read, chunks, change history, update, delete, reprocess (a document's deletion or
    retag queues a consolidation like a memory's)."""

    def list_documents(
        self, bank_id: str, *, query: str | None = None, tags: Sequence[str] = (), tags_match: TagsMatch = "any_strict",
        time_field: str | None = None, start: datetime | None = None, end: datetime | None = None, limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[DocumentSummary], int]:  # fmt: skip
        """A page of the bank's documents (no text), newest first by ``time_field`` (``updated_at`` by default, or
        ``created_at``), and the total. ``query``: a case-insensitive substring of the id or the text; ``tags`` with
        ``tags_match`` (default ``any_strict``); ``[start, end)`` on ``time_field``. Raises :class:`NotFoundError`
        for the bank, :class:`InvalidInputError` for ``time_field``."""
        self._require_bank(bank_id)
        field = time_field or "updated_at"
        if field not in ("created_at", "updated_at"):
            raise InvalidInputError("time_field", "must be created_at or updated_at")
        return self.store.list_documents(
            bank_id, query=query or None, tags=normalize_tags(tags), tags_match=tags_match, time_field=field,
            start=start, end=end, limit=limit, offset=offset,
        )  # fmt: skip

    def get_document(self, bank_id: str, document_id: str) -> DocumentSummary:
        """One document with its text and its memory counts by fact type. Raises :class:`NotFoundError`."""
        return found_in_bank(self.store.get_document(bank_id, document_id), "Document", document_id, bank_id)

    def list_document_chunks(
        self, bank_id: str, document_id: str, *, limit: int = 100, offset: int = 0
    ) -> tuple[list[ChunkRecord], int]:
        """A page of a document's chunks in document order, and the total. Raises :class:`NotFoundError`."""
        self.get_document(bank_id, document_id)
        return self.store.list_chunks(bank_id, document_id, limit=limit, offset=offset)

    def get_chunk(self, chunk_id: str) -> ChunkRecord:
        """One chunk by id (chunk ids are unique across banks). Raises :class:`NotFoundError`."""
        found = self.store.get_chunk(chunk_id)
        if found is None:
            raise NotFoundError(f"Chunk '{chunk_id}' not found")
        return found

    def document_history(
        self, bank_id: str, document_id: str, *, limit: int = 100, offset: int = 0
    ) -> tuple[list[DocumentEvent], int]:
        """A page of the document's changes, newest first (retain, append, reprocess, retag, update,
        fact_edited, fact_deleted), and the total. Raises :class:`NotFoundError`."""
        self.get_document(bank_id, document_id)
        return self.store.list_document_events(bank_id, document_id, limit=limit, offset=offset)

    def get_document_history(
        self, bank_id: str, document_id: str, *, limit: int = 100, offset: int = 0
    ) -> tuple[list[DocumentEvent], int]:
        """Alias of :meth:`document_history` (the client's name)."""
        return self.document_history(bank_id, document_id, limit=limit, offset=offset)

    def update_document(
        self, bank_id: str, document_id: str, *, tags: Sequence[str] | None = None, observation_scopes: Any = None
    ) -> None:
        """Replace the tags of the document and of every fact drawn from it (``None``: keep; ``[]``: untag; the
        set it already has, in any order: nothing at all). A memory write: models whose scope the facts enter or
        leave go stale, and the facts are consolidated again.

        Raises :class:`NotFoundError`, and :class:`InvalidInputError` for ``observation_scopes`` (mindbank scopes
        observations per consolidation — ``POST /consolidate`` — not per document)."""
        if observation_scopes is not None:
            raise InvalidInputError(
                "observation_scopes", "not supported per document; choose observation_scopes on POST /consolidate"
            )
        current = self.get_document(bank_id, document_id)
        if tags is None:
            return
        wanted = normalize_tags(tags)
        if set(wanted) == set(current.tags):
            return  # the same set in another order: no write, no stale models, no history row, no consolidation
        changed_in_bank(self.store.retag_document(bank_id, document_id, wanted), "Document", document_id, bank_id)
        if self.settings.enable_auto_consolidation:
            self.queue_consolidation(bank_id)

    def delete_document(self, bank_id: str, document_id: str) -> int:
        """Delete a document, its chunks, its history and every memory drawn from it; returns how many memories
        went. Models citing them go stale; with auto-consolidation a consolidation is queued that detaches them from
        the observations they supported. Raises :class:`NotFoundError`."""
        removed = found_in_bank(self.store.delete_document(bank_id, document_id), "Document", document_id, bank_id)
        if removed and self.settings.enable_auto_consolidation:
            self.queue_consolidation(bank_id)
        return removed

    def reprocess_document(self, bank_id: str, document_id: str) -> str:
        """Queue a re-extraction of the document's stored text with the current retain engine (a
        ``reprocess_document`` operation); returns its id. Raises :class:`NotFoundError`."""
        self.get_document(bank_id, document_id)
        return self._submit(bank_id, "reprocess_document", {"document_id": document_id})

    def run_reprocess(self, op: Operation) -> dict[str, Any]:
        """Worker handler of ``reprocess_document``: extract the stored text again, replacing the document's chunks
        and memories in one transaction (a ``reprocess`` history entry). Keeps the document's tags, metadata,
        context and event time. Raises ``PermanentFailure`` when the document is gone."""
        document_id = op.payload["document_id"]
        doc = self.store.get_document(op.bank_id, document_id)
        if doc is None or doc.original_text is None:
            raise PermanentFailure(f"document '{document_id}' no longer exists")
        current, _ = self.store.list_memories(
            op.bank_id, MemoryFilter(), query=None, limit=1, offset=0, document_id=document_id
        )
        item = RetainItem(
            content=doc.original_text, timestamp=current[0].occurred_start if current else None, context=doc.context,
            metadata=dict(doc.metadata), document_id=document_id, tags=doc.tags,
        )  # fmt: skip
        embedder = self.bank_embedder(op.bank_id)
        written = prepare_documents([item], embedder, now=utcnow(), extract=self._extract_facts)
        ids = self.store.write_documents(
            op.bank_id,
            [replace(w, event="reprocess", operation_id=op.id) for w in written],
            model=self.model_of(embedder),
        )
        if self.settings.enable_auto_consolidation:
            self.queue_consolidation(op.bank_id)
        return {"document_id": document_id, "items_count": 1, "unit_ids_count": sum(len(i) for i in ids)}
