"""The Store port: everything the engine asks of a database, in one protocol.

Each backend implements the same method names with the same semantics; the contract suite under
``tests/contract`` runs against every backend. Times are aware UTC datetimes; ids are strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, BinaryIO, Literal, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

from mindbank.domain.access import ApiKey
from mindbank.domain.knowledge import KnowledgeNode, PageLogEntry, Removed, Unset
from mindbank.domain.records import (
    Bank,
    Chunk,
    HistoryEntry,
    LLMRequestRecord,
    MemorySource,
    MemoryUnit,
    MentalModel,
    NewMemory,
    Operation,
    RetainItem,
)
from mindbank.domain.resources import (
    ChunkRecord,
    Directive,
    DocumentEvent,
    DocumentSummary,
    Webhook,
    WebhookDelivery,
    WorkerHeartbeat,
)
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.tags import TagsMatch


@dataclass(frozen=True, slots=True)
class DocumentWrite:
    """A retained document with its chunks and extracted facts, written in one transaction.

    ``continuation``: a later part of a document an earlier transaction began (a large retain written in
    sub-batches): the document row and its chunks exist already, only ``memories`` are added (``chunks`` empty).
    ``whole``: no continuation follows (a document whose facts are all repeats is then not written at all).
    ``restate``: the item re-retains a stored document whose content the caller found unchanged (no chunks, no
    memories): the store compares again in its transaction and changes nothing, or updates tags, metadata, context
    and time in place (:func:`mindbank.domain.repeats.restatement`); if the content differs by then it raises
    :class:`DocumentChanged` and writes nothing.
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


def mental_model_columns(detail: str) -> str:
    """The SELECT list for mental models at a detail level: a listing at ``metadata`` or ``content`` level does not
    read (or decode) the structured document and reflect_response, and ``metadata`` not the content either."""
    if detail == "full":
        return "*"
    content = "content" if detail == "content" else "'' AS content"
    return (
        f"bank_id, id, name, source_query, {content}, NULL AS structured_document, NULL AS reflect_response, tags, "
        "max_tokens, trigger, last_refreshed_at, last_memory_seen_at, last_refreshed_source_query, "
        "last_refresh_failed_at, last_full_refreshed_at, created_at, cleared_at, refresh_state"
    )


def fold_into_pending(pending: Operation, incoming: Operation, *, full: bool) -> Operation:
    """The coalescing rule for a request folding into a still-pending operation of the same kind (spec "Refresh a
    Mental Model", "Rate-limiting automatic refreshes"): ``full`` upgrades it to full mode for that run; a
    non-automatic (manual) request releases a park — no ``next_retry_at``, no ``automatic`` flag — because "refresh
    now" means now. Returns the pending operation as it should be stored."""
    payload = dict(pending.payload)
    if full:
        payload["mode"] = "full"
    next_retry = pending.next_retry_at
    if not incoming.payload.get("automatic"):
        payload.pop("automatic", None)
        next_retry = None
    return replace(pending, payload=dict(sorted(payload.items())), next_retry_at=next_retry)


@dataclass(frozen=True, slots=True)
class SpendRecord:
    """What one refresh spent, added to its model's row of ``day`` (UTC, ``YYYY-MM-DD``) in ``refresh_spend``:
    ``refreshes`` recorded (0 for a transient attempt that recorded nothing), LLM attempts (failed ones included)
    and the tokens the provider reported."""

    bank_id: str
    mental_model_id: str
    day: str
    refreshes: int = 1
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def params(self) -> tuple[Any, ...]:
        """The ``add_refresh_spend`` parameters."""
        return (self.bank_id, self.mental_model_id, self.day, self.refreshes, self.llm_calls, self.input_tokens,
                self.output_tokens)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SpendTotals:
    """Spend summed over some refreshes: counts and tokens (``total_tokens`` = input + output)."""

    refreshes: int = 0
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: SpendTotals) -> SpendTotals:
        return SpendTotals(
            self.refreshes + other.refreshes,
            self.llm_calls + other.llm_calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
        )


@dataclass(frozen=True, slots=True)
class Spend:
    """A model's (or a bank's) spend: on one UTC day (``today``) and over all days (``total``)."""

    today: SpendTotals = SpendTotals()
    total: SpendTotals = SpendTotals()


# ---------------------------------------------------------------- bank transfer (backup, migration, clone)


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
    """A ``mental_model_history`` row to import; ``id`` None lets the database assign one."""

    mental_model_id: str
    content: dict[str, Any]
    changed_at: datetime
    id: int | None


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
Lane = Literal["work", "deliveries"]
"""Which operations a claim takes: ``deliveries`` webhook deliveries only (their own worker threads, so a slow
receiver never holds a retain or refresh slot), ``work`` every other type."""
IdKind = Literal[
    "memory", "chunk", "operation", "llm_request", "delivery", "history", "document_event", "document", "mental_model"
]


@dataclass(frozen=True, slots=True)
class ImportTarget:
    """Where an import writes. ``create``: restore mode, the bank row to create (it must not exist: the import
    fails with :class:`AlreadyExists`); None: merge into the bank (created if missing). ``fresh_stamps``: every
    memory written gets this import's write stamp (merge: the memories are new to the bank); otherwise memories keep
    their stamps and the bank's ``last_memory_write_at`` becomes the newest of its own and theirs (restore)."""

    bank_id: str
    create: Bank | None
    fresh_stamps: bool


@dataclass(frozen=True, slots=True)
class StoredFile:
    """A stored file's description (export archives, uploads awaiting import); ``byte_size`` in bytes."""

    key: str
    bank_id: str
    filename: str
    content_type: str
    byte_size: int
    chunk_count: int
    created_at: datetime


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


class StoreError(Exception):
    """Base class for store failures that callers may map to user-facing errors."""


class FileGone(StoreError):
    """A file an operation was to consume (an uploaded archive) is no longer stored: another run consumed it."""


class DocumentChanged(StoreError):
    """A restatement found the stored document's content changed since the caller read it (another retain wrote it
    meanwhile); the transaction wrote nothing and the retain should be prepared again."""


class AlreadyExists(StoreError):
    """An insert hit an existing primary key (e.g. a mental model id)."""


class Store(Protocol):
    """Persistence for banks, memories, documents, mental models, history and operations."""

    # banks
    def ensure_bank(self, bank_id: str) -> None: ...
    def bank_exists(self, bank_id: str) -> bool: ...
    def bank_last_memory_write_at(self, bank_id: str) -> datetime | None: ...
    def bank_embedding_model(self, bank_id: str) -> tuple[str, int] | None: ...
    def record_bank_embedding_model(self, bank_id: str, model: str, dimension: int) -> tuple[str, int] | None: ...
    def get_bank(self, bank_id: str) -> Bank | None: ...
    def list_banks(self) -> list[tuple[Bank, int]]: ...
    def upsert_bank(
        self, bank_id: str, *, name: str | None, mission: str | None, disposition: dict[str, int] | None
    ) -> Bank: ...
    def update_bank_config(self, bank_id: str, updates: dict[str, Any]) -> dict[str, Any]: ...
    def delete_bank(self, bank_id: str) -> int: ...
    def bank_stats(self, bank_id: str) -> dict[str, Any]: ...

    # memories
    def write_documents(self, bank_id: str, documents: Sequence[DocumentWrite]) -> list[list[str]]: ...
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
    ) -> bool: ...
    def count_in_scope(self, bank_id: str, flt: MemoryFilter) -> dict[str, int]: ...
    def list_tags(
        self, bank_id: str, *, source: str, pattern: str | None, limit: int, offset: int
    ) -> tuple[list[tuple[str, int]], int]: ...
    def vector_search(
        self, bank_id: str, query: npt.NDArray[np.float32], k: int, flt: MemoryFilter
    ) -> list[tuple[str, float]]: ...
    def keyword_search(
        self, bank_id: str, terms: Sequence[str], k: int, flt: MemoryFilter
    ) -> list[tuple[str, float]]: ...
    def memories_in_window(
        self, bank_id: str, start: datetime, end: datetime, k: int, flt: MemoryFilter
    ) -> list[str]: ...
    def scope_watermark(self, bank_id: str, flt: MemoryFilter) -> datetime | None: ...
    def staleness_reads(self, bank_id: str, probes: Sequence[StalenessProbe]) -> StalenessReads: ...
    def db_now(self) -> datetime: ...

    # mental models
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

    # refresh spend and governance (issue 14)
    def add_refresh_spend(self, spend: SpendRecord) -> None: ...
    def refresh_spend_by_model(self, bank_id: str, model_ids: Sequence[str], day: str) -> dict[str, Spend]: ...
    def refresh_status_reads(
        self, bank_id: str, model_ids: Sequence[str], day: str
    ) -> tuple[dict[str, Spend], dict[str, Any]]: ...
    def bank_refresh_spend(self, bank_id: str, day: str) -> Spend: ...
    def count_failing_models(self, bank_id: str) -> int: ...

    # knowledge base (store/knowledge.py): the tree, pages' settings, page-search vectors
    def list_knowledge_nodes(self, bank_id: str) -> list[KnowledgeNode]: ...
    def get_knowledge_node(self, bank_id: str, node_id: str) -> KnowledgeNode | None: ...
    def insert_knowledge_node(self, node: KnowledgeNode, *, model: MentalModel | None = None) -> None: ...
    def update_knowledge_node(
        self, node: KnowledgeNode, *, name: str, parent_id: str | Unset | None, model: MentalModel | None = None
    ) -> KnowledgeNode | None: ...
    def delete_knowledge_node(self, bank_id: str, node_id: str) -> Removed | None: ...
    def knowledge_page_models(self, bank_id: str, *, detail: str) -> list[MentalModel]: ...
    def page_vectors(self, bank_id: str) -> dict[str, tuple[str, npt.NDArray[np.float32]]]: ...
    def save_page_vectors(self, bank_id: str, vectors: Sequence[tuple[str, str, npt.NDArray[np.float32]]]) -> None: ...
    def knowledge_history_log(self, bank_id: str) -> list[PageLogEntry]: ...

    # operations
    def submit_operation(self, op: Operation, *, ensure_bank: bool = True) -> None: ...
    def find_pending_refresh(self, bank_id: str, model_id: str) -> Operation | None: ...
    def get_operation(self, bank_id: str, operation_id: str) -> Operation | None: ...
    def claim_operation(
        self, worker_id: str, lease_seconds: float, *, now: datetime | None = None, lane: Lane | None = None
    ) -> Operation | None: ...
    def finish_operation(
        self,
        operation_id: str,
        *,
        status: str,
        result: dict[str, Any] | None,
        error: str | None,
        token: str | None = None,
    ) -> bool: ...
    def renew_lease(
        self, operation_id: str, token: str, lease_seconds: float, *, now: datetime | None = None
    ) -> bool: ...
    def submit_operation_once(self, op: Operation) -> tuple[Operation, bool]: ...

    def submit_coalesced(self, op: Operation, *, full: bool = False) -> tuple[Operation, bool]: ...
    def defer_operation(self, operation_id: str, *, next_retry_at: datetime, token: str | None = None) -> bool: ...
    def list_models_with_trigger(self, key: str, *, bank_id: str | None = None) -> list[MentalModel]: ...
    def unconsolidated_facts(self, bank_id: str, limit: int) -> list[MemoryUnit]: ...
    def list_observations(self, bank_id: str) -> list[MemoryUnit]: ...
    def observations_losing_sources(self, bank_id: str, requeued: Sequence[str]) -> list[MemoryUnit]: ...
    def memory_vectors(self, bank_id: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]: ...
    def consolidated_neighbours(
        self, bank_id: str, probes: Sequence[tuple[npt.NDArray[np.float32], MemoryFilter]], k: int
    ) -> list[list[tuple[str, float]]]: ...
    def nearest_in(
        self, bank_id: str, probes: Sequence[tuple[npt.NDArray[np.float32], MemoryFilter]], k: int
    ) -> list[list[tuple[str, float]]]: ...
    def write_consolidation(
        self,
        bank_id: str,
        *,
        creates: Sequence[NewMemory],
        updates: Sequence[tuple[str, tuple[str, ...], int]],
        consolidated_ids: Sequence[str],
        rewrites: Sequence[tuple[str, str, npt.NDArray[np.float32]]] = (),
        deletes: Sequence[str] = (),
    ) -> list[str]: ...
    def list_operations(
        self, bank_id: str, *, status: str | None, operation_type: str | None, limit: int, offset: int
    ) -> tuple[list[Operation], int]: ...
    def cancel_operation(self, bank_id: str, operation_id: str) -> Operation | None: ...
    def retry_operation(
        self, operation_id: str, *, next_retry_at: datetime, error: str, token: str | None = None
    ) -> bool: ...

    # reflect's expand tool, and LLM request tracing (MINDBANK_LLM_TRACE_ENABLED)
    def memory_sources(
        self, bank_id: str, memory_ids: Sequence[str], *, documents: bool = True
    ) -> list[MemorySource]: ...
    def record_llm_request(self, record: LLMRequestRecord) -> None: ...
    def list_llm_requests(self, bank_id: str, operation_id: str, *, limit: int) -> list[LLMRequestRecord]: ...
    def purge_llm_requests(self, before: datetime) -> int: ...

    # documents (store/resources.py; deletion and retagging are memory writes: store/<backend>/documents.py)
    def list_documents(
        self, bank_id: str, *, query: str | None, tags: Sequence[str], tags_match: TagsMatch, time_field: str,
        start: datetime | None, end: datetime | None, limit: int, offset: int,
    ) -> tuple[list[DocumentSummary], int]: ...  # fmt: skip
    def get_document(self, bank_id: str, document_id: str) -> DocumentSummary | None: ...
    def list_chunks(
        self, bank_id: str, document_id: str, *, limit: int, offset: int
    ) -> tuple[list[ChunkRecord], int]: ...
    def get_chunk(self, chunk_id: str) -> ChunkRecord | None: ...
    def delete_document(self, bank_id: str, document_id: str) -> int | None: ...
    def retag_document(self, bank_id: str, document_id: str, tags: Sequence[str]) -> bool: ...
    def list_document_events(
        self, bank_id: str, document_id: str, *, limit: int, offset: int
    ) -> tuple[list[DocumentEvent], int]: ...

    # directives
    def insert_directive(self, directive: Directive) -> None: ...
    def get_directive(self, bank_id: str, directive_id: str) -> Directive | None: ...
    def list_directives(self, bank_id: str, *, active_only: bool) -> list[Directive]: ...
    def update_directive(self, directive: Directive) -> bool: ...
    def delete_directive(self, bank_id: str, directive_id: str) -> bool: ...

    # webhooks and their deliveries
    def insert_webhook(self, webhook: Webhook) -> None: ...
    def get_webhook(self, bank_id: str, webhook_id: str) -> Webhook | None: ...
    def list_webhooks(self, bank_id: str) -> list[Webhook]: ...
    def update_webhook(self, webhook: Webhook) -> bool: ...
    def delete_webhook(self, bank_id: str, webhook_id: str) -> bool: ...
    def enqueue_deliveries(self, deliveries: Sequence[tuple[WebhookDelivery, Operation]]) -> None: ...
    def get_delivery(self, delivery_id: str) -> WebhookDelivery | None: ...
    def save_delivery_attempt(self, delivery: WebhookDelivery) -> None: ...
    def list_deliveries(
        self, bank_id: str, webhook_id: str, *, limit: int, before: datetime | None
    ) -> list[WebhookDelivery]: ...

    # operation administration, metrics and the bank's LLM request log
    def requeue_operation(self, bank_id: str, operation_id: str) -> bool: ...
    def delete_operation(self, bank_id: str, operation_id: str) -> bool: ...
    def operation_counts(self) -> list[tuple[str, str, int]]: ...
    def oldest_due_pending(self, now: datetime) -> datetime | None: ...
    def page_llm_requests(
        self, bank_id: str, *, status: str | None, scope: str | None, provider: str | None,
        operation_id: str | None, start: datetime | None, end: datetime | None, limit: int, offset: int,
        operation: str | None = None,
    ) -> tuple[list[LLMRequestRecord], int]: ...  # fmt: skip
    def llm_request_buckets(
        self, bank_id: str, *, since: datetime, unit: str, operation: str | None = None
    ) -> list[tuple[datetime, bool, int, int, int]]: ...

    # health: schema version and worker heartbeats
    def schema_status(self) -> tuple[int, int]: ...
    def beat(self, heartbeat: WorkerHeartbeat) -> None: ...
    def list_heartbeats(self, since: datetime) -> list[WorkerHeartbeat]: ...
    def drop_heartbeat(self, worker_id: str) -> None: ...
    # scoped API keys (store/api_keys.py, the same on both backends)
    def insert_api_key(self, key: ApiKey) -> None: ...
    def get_api_key(self, key_id: str) -> ApiKey | None: ...
    def list_api_keys(self) -> list[ApiKey]: ...
    def revoke_api_key(self, key_id: str, at: datetime) -> bool: ...
    # bank transfer: consistent reads, all-or-nothing imports, stored files
    def bank_snapshot(self, bank_id: str) -> AbstractContextManager[BankSnapshot]: ...
    def existing_ids(self, kind: IdKind, ids: Sequence[Any], *, bank_id: str | None = None) -> set[Any]: ...
    def import_rows(
        self, target: ImportTarget, rows: Iterable[ImportRow], *, consume_file: str | None = None
    ) -> dict[str, int]: ...
    def put_file(self, key: str, *, bank_id: str, filename: str, content_type: str, source: BinaryIO) -> StoredFile: ...
    def get_file(self, key: str) -> StoredFile | None: ...
    def read_file(self, key: str) -> Iterator[bytes]: ...
    def delete_file(self, key: str) -> bool: ...
    def purge_files(self, before: datetime, *, prefix: str) -> int: ...

    def close(self) -> None: ...
