"""Bank transfer: one consistent read of a bank (export, clone) and all-or-nothing imports of its rows."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

from mindbank.domain.knowledge import KnowledgeNode
from mindbank.domain.records import Bank, Chunk, HistoryEntry, LLMRequestRecord, MemoryUnit, MentalModel, Operation
from mindbank.domain.resources import Directive, Webhook, WebhookDelivery
from mindbank.store.ports.governance import SpendRecord


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """A ``documents`` row as stored, with its chunks (bank export and import)."""

    id: str
    original_text: str
    content_hash: str
    tags: tuple[str, ...]
    metadata: dict[str, Any]
    context: str | None
    created_at: datetime
    updated_at: datetime
    chunks: tuple[Chunk, ...] = ()


@dataclass(frozen=True, slots=True)
class StoredMemory:
    """A ``memory_units`` row as stored: the memory, its embedding and its consolidation bookkeeping;
    ``chunk_index``: the position of its chunk in its document (read, never written: the chunk id is)."""

    memory: MemoryUnit
    embedding: npt.NDArray[np.float32]
    consolidated_at: datetime | None
    chunk_index: int | None = None
    repeat_key: str | None = None  # a fact of an item without document_id: what its repeats match


@dataclass(frozen=True, slots=True)
class StoredHistory:
    """A ``mental_model_history`` row to import; ``id`` None lets the database assign one; ``version`` None (an
    archive written before numbers were stored) numbers the model's rows as they stand."""

    mental_model_id: str
    content: dict[str, Any]
    changed_at: datetime
    id: int | None
    version: int | None = None


@dataclass(frozen=True, slots=True)
class StoredOperation:
    """An ``operations`` row as stored: the operation and its claim (worker, lease)."""

    operation: Operation
    worker_id: str | None
    lease_expires_at: datetime | None


@dataclass(frozen=True, slots=True)
class StoredDocumentEvent:
    """A ``document_events`` row to import (a document's change history); ``id`` None lets the database assign one."""

    document_id: str
    kind: str
    created_at: datetime
    operation_id: str | None
    fact_id: str | None
    facts_added: int
    facts_removed: int
    id: int | None


@dataclass(frozen=True, slots=True)
class DocumentReplace:
    """Import instruction (merge mode ``replace``): delete the target bank's document, its chunks and its memories
    before the archive's document of the same id is written."""

    document_id: str


@dataclass(frozen=True, slots=True)
class KnowledgeTreeImport:
    """Import instruction: the archive's knowledge-base nodes (in the target bank, a parent before its children),
    placed into the bank's tree by :func:`~mindbank.domain.knowledge.merge_tree` inside the import transaction
    (under the tree's lock, so the sibling-name rule holds against concurrent edits). Their pages' mental models
    are written before it."""

    nodes: tuple[KnowledgeNode, ...]


ImportRow: TypeAlias = (
    StoredDocument
    | StoredMemory
    | MentalModel
    | StoredHistory
    | StoredOperation
    | LLMRequestRecord
    | DocumentReplace
    | StoredDocumentEvent
    | Directive
    | Webhook
    | WebhookDelivery
    | KnowledgeTreeImport
    | SpendRecord
)
# the id spaces an import may collide in: memory, chunk, operation, LLM request, webhook delivery, history and
# document-event ids are unique across the whole database; document and mental-model ids only within a bank
IdKind = Literal[
    "memory", "chunk", "operation", "llm_request", "delivery", "history", "document_event", "document", "mental_model"
]


@dataclass(frozen=True, slots=True)
class ImportTarget:
    """Where an import writes. ``create``: restore mode, the bank row to create (it must not exist: the import
    fails with :class:`~mindbank.store.ports.errors.AlreadyExists`); None: merge into the bank (created if
    missing). ``fresh_stamps``: every memory written gets this import's write stamp (merge: the memories are new to
    the bank); otherwise memories keep their stamps and the bank's ``last_memory_write_at`` becomes the newest of its
    own and theirs (restore)."""

    bank_id: str
    create: Bank | None
    fresh_stamps: bool


class BankSnapshot(Protocol):
    """One consistent read of a bank (a read-only transaction): every iterator sees the same committed state and
    reads in pages, so a bank of any size is exported in bounded memory."""

    def bank(self) -> Bank | None: ...
    def documents(self, document_ids: Sequence[str] | None = None) -> Iterator[StoredDocument]: ...
    def memories(
        self, *, document_ids: Sequence[str] | None = None, observations: bool = True
    ) -> Iterator[StoredMemory]: ...
    def mental_models(self) -> Iterator[tuple[MentalModel, list[HistoryEntry]]]: ...
    def operations(self) -> Iterator[StoredOperation]: ...
    def llm_requests(self) -> Iterator[LLMRequestRecord]: ...
    def document_events(self) -> Iterator[StoredDocumentEvent]: ...
    def directives(self) -> list[Directive]: ...
    def webhooks(self) -> list[Webhook]: ...
    def deliveries(self) -> Iterator[WebhookDelivery]: ...
    def knowledge_nodes(self) -> list[KnowledgeNode]: ...
    def refresh_spend(self) -> Iterator[SpendRecord]: ...


class TransferStore(Protocol):
    """Export reads a :class:`BankSnapshot`; ``existing_ids`` tells which ids of a kind are taken (within
    ``bank_id`` for document and mental-model ids); ``import_rows`` writes every row or none and returns counts per
    kind, consuming the uploaded file ``consume_file`` in the same transaction
    (:class:`~mindbank.store.ports.errors.FileGone` if another run took it)."""

    def bank_snapshot(self, bank_id: str) -> AbstractContextManager[BankSnapshot]: ...
    def existing_ids(self, kind: IdKind, ids: Sequence[Any], *, bank_id: str | None = None) -> set[Any]: ...
    def import_rows(
        self, target: ImportTarget, rows: Iterable[ImportRow], *, consume_file: str | None = None
    ) -> dict[str, int]: ...
