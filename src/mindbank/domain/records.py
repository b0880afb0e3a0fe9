"""Plain records that cross layer boundaries (store <-> engine <-> service).

They carry no behaviour beyond small derived helpers; wire shapes live in ``mindbank.api.schemas``.
All timestamps are timezone-aware UTC ``datetime`` objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from mindbank.domain.governance import RefreshState

FactType = Literal["world", "experience", "observation"]
FACT_TYPES: tuple[FactType, ...] = ("world", "experience", "observation")

OperationStatus = Literal["pending", "processing", "completed", "failed", "cancelled"]


@dataclass(frozen=True, slots=True)
class RetainItem:
    """One item of a retain request: a document whose content is split into chunks and facts.

    ``timestamp`` is when the content was said or written (``None`` = now); ``metadata`` maps str -> str.
    """

    content: str
    timestamp: datetime | None = None
    context: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    document_id: str | None = None
    tags: tuple[str, ...] = ()
    update_mode: Literal["replace", "append"] = "replace"


@dataclass(frozen=True, slots=True)
class Bank:
    """A memory bank's profile and bookkeeping. ``config`` holds per-bank overrides of server settings."""

    bank_id: str
    name: str | None
    mission: str | None
    disposition: dict[str, int] | None
    config: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    last_memory_write_at: datetime | None


@dataclass(frozen=True, slots=True)
class Chunk:
    """A contiguous piece of a document (a dialogue turn or a paragraph) that facts are extracted from."""

    id: str
    document_id: str
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class NewMemory:
    """A fact ready to be written: extracted text plus everything the store keeps about it."""

    text: str
    fact_type: FactType
    embedding: Any  # numpy float32 vector of the embedder's dimension
    tags: tuple[str, ...]
    context: str | None
    metadata: dict[str, str]
    document_id: str | None
    chunk_id: str | None
    occurred_start: datetime | None
    occurred_end: datetime | None
    mentioned_at: datetime | None
    source_memory_ids: tuple[str, ...] | None = None  # observations: the facts they consolidate
    proof_count: int | None = None
    # a fact of an item without document_id: a stored fact with the same key takes it as a repeat (domain/repeats.py)
    repeat_key: str | None = None

    @property
    def moment(self) -> datetime | None:
        """When it happened, else when it was said (:attr:`MemoryUnit.moment`, the same rule before it is stored)."""
        return self.occurred_start or self.mentioned_at


@dataclass(frozen=True, slots=True)
class MemoryUnit:
    """A stored memory (fact or observation) as read back from the store."""

    id: str
    bank_id: str
    text: str
    fact_type: FactType
    tags: tuple[str, ...]
    context: str | None
    metadata: dict[str, str]
    document_id: str | None
    chunk_id: str | None
    occurred_start: datetime | None
    occurred_end: datetime | None
    mentioned_at: datetime | None
    created_at: datetime
    updated_at: datetime
    source_memory_ids: tuple[str, ...] | None = None
    proof_count: int | None = None
    # how often the fact was retained (1 + its repeats) and when last (None until a repeat: then ``mentioned_at``
    # is the only mention)
    mention_count: int = 1
    last_mentioned_at: datetime | None = None
    # the store's write order (its insertion sequence, ``seq``): the pieces of one turn, which share every time,
    # stand in the order they were said; 0 for a record not read back from a store
    seq: int = 0

    @property
    def moment(self) -> datetime | None:
        """When the memory happened (``occurred_start``), else when it was said (``mentioned_at``); None without
        both. The one time by which turns are ordered and paired (neighbours, the turn before, updates)."""
        return self.occurred_start or self.mentioned_at


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    """A recall hit: the memory and its per-retriever scores (``None`` where a retriever did not return it)."""

    memory: MemoryUnit
    final: float
    semantic: float | None = None
    keyword: float | None = None


@dataclass(slots=True)
class MentalModel:
    """A mental model row. ``structured_document`` is the authoritative document (JSON-able dict).

    ``trigger`` is the full stored trigger dict (every field of the reference's MentalModelTrigger).
    """

    id: str
    bank_id: str
    name: str
    source_query: str
    content: str
    tags: tuple[str, ...]
    max_tokens: int
    trigger: dict[str, Any]
    structured_document: dict[str, Any] | None
    reflect_response: dict[str, Any] | None
    last_refreshed_at: datetime
    last_memory_seen_at: datetime | None
    last_refreshed_source_query: str | None
    last_refresh_failed_at: datetime | None
    last_full_refreshed_at: datetime | None
    created_at: datetime
    cleared_at: datetime | None = None
    refresh_state: RefreshState = field(default_factory=RefreshState)  # governance record (domain/governance.py)
    is_stale: bool | None = None
    # set with is_stale: {"kind"} on a list; a model's GET adds since, count and memory_ids (engine staleness)
    staleness_reason: dict[str, Any] | None = None
    refresh_status: dict[str, Any] | None = None  # set by the service for responses: governance and spend
    is_knowledge_page: bool = False  # set by the service from the knowledge base (a page is a model in its tree)


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One mental-model history row, most recent first when listed. ``version``: the per-model number of the
    content a version row holds, stored when the row is written (None for a failure record)."""

    id: int
    mental_model_id: str
    content: dict[str, Any]
    changed_at: datetime
    version: int | None = None


@dataclass(slots=True)
class Operation:
    """A queued unit of asynchronous work (retain, refresh_mental_model, ...).

    ``claim_token``: set by each claim and checked by every write of the claiming worker (the fence that keeps a
    worker which lost its lease from committing); ``progress``: the checkpoint a resumed operation continues from.
    """

    id: str
    bank_id: str
    operation_type: str
    status: OperationStatus
    payload: dict[str, Any]
    result: dict[str, Any] | None
    error: str | None
    retry_count: int
    next_retry_at: datetime | None
    mental_model_id: str | None
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None
    claim_token: str | None = None
    progress: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class MemorySource:
    """Where a memory came from: its chunk's text and its document's full text (None where not stored).

    Read by reflect's ``expand`` tool, which widens a retrieved fact to the turn or document around it."""

    memory_id: str
    document_id: str | None
    chunk_id: str | None
    chunk_text: str | None
    document_text: str | None
    chunk_index: int | None = None  # the chunk's position in its document


@dataclass(frozen=True, slots=True)
class SourceChunk:
    """A raw chunk (conversation turn or paragraph) a refresh reads next to the facts drawn from it.

    ``memory_ids``: the retrieved facts that came from this chunk, best-ranked first. Spec trigger fields
    ``include_chunks`` / ``recall_chunks_max_tokens``."""

    chunk_id: str
    text: str
    memory_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LLMRequestRecord:
    """One traced LLM attempt (``MINDBANK_LLM_TRACE_ENABLED``): the request as sent (messages, tool names, schema;
    never a credential), the response or the error, tokens and wall time (ms). ``operation_id`` links it to the
    queued operation (or reflect request) it served."""

    id: str
    bank_id: str
    operation_id: str | None
    scope: str
    provider: str
    model: str
    attempt: int
    request: dict[str, Any]
    response: dict[str, Any] | None
    error: str | None
    input_tokens: int
    output_tokens: int
    duration_ms: int
    created_at: datetime
