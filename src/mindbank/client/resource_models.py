"""Pydantic models of the server's answers about a bank's resources beyond memories and mental models: documents,
chunks and their history, directives, webhooks and deliveries, files, the bank profile, health probes and the LLM
request log. Like :mod:`mindbank.client.models`, every model allows extra fields."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from mindbank.client.models import _Response


# ---------------------------------------------------------------- documents
class DocumentSummary(_Response):
    """One ``GET /documents`` entry (no text)."""

    id: str
    bank_id: str
    content_hash: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    text_length: int = 0
    memory_unit_count: int = 0
    tags: list[str] = Field(default_factory=list)
    document_metadata: dict[str, Any] | None = None
    retain_params: dict[str, Any] | None = None
    matched_fields: list[str] = Field(default_factory=list)


class DocumentList(_Response):
    items: list[DocumentSummary]
    total: int
    limit: int
    offset: int
    total_is_estimate: bool = False


class Document(DocumentSummary):
    """``GET /documents/{id}``: the document with its text and its memory counts by fact type."""

    original_text: str | None = None
    nodes_by_fact_type: dict[str, int] | None = None


class Chunk(_Response):
    """A chunk of a document."""

    chunk_id: str
    document_id: str
    bank_id: str
    chunk_index: int
    chunk_text: str
    created_at: datetime | None = None


class ChunkList(_Response):
    items: list[Chunk]
    total: int
    limit: int
    offset: int


class DocumentEvent(_Response):
    """One change to a document: ``kind`` retain, append, reprocess, retag, update, fact_edited or
    fact_deleted."""

    document_id: str
    kind: str
    created_at: datetime | None = None
    operation_id: str | None = None
    fact_id: str | None = None
    facts_added: int = 0
    facts_removed: int = 0


class DocumentHistory(_Response):
    document_id: str
    total: int
    limit: int
    offset: int
    items: list[DocumentEvent]


class DeleteDocumentResponse(_Response):
    success: bool
    message: str
    document_id: str
    memory_units_deleted: int


class ReprocessResponse(_Response):
    """``POST /documents/{id}/reprocess``: the queued operation."""

    success: bool
    operation_id: str
    items_count: int


class SuccessResponse(_Response):
    success: bool = True
    message: str | None = None


# ---------------------------------------------------------------- directives
class Directive(_Response):
    id: str
    bank_id: str
    name: str
    content: str
    priority: int = 0
    is_active: bool = True
    tags: list[str] = Field(default_factory=list)
    created_at: datetime | None = None
    updated_at: datetime | None = None


class DirectiveList(_Response):
    items: list[Directive]
    total: int
    limit: int
    offset: int


# ---------------------------------------------------------------- webhooks
class Webhook(_Response):
    """A webhook; ``secret`` is redacted (``********``) when one is set."""

    id: str
    bank_id: str | None = None
    url: str
    secret: str | None = None
    event_types: list[str]
    enabled: bool
    http_config: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None


class WebhookList(_Response):
    items: list[Webhook]
    total: int
    limit: int
    offset: int


class WebhookDelivery(_Response):
    """One event sent (or being sent) to a webhook: ``status`` pending, delivered or failed."""

    id: str
    event_id: str | None = None
    webhook_id: str | None = None
    url: str
    event_type: str
    status: str
    attempts: int
    next_retry_at: datetime | None = None
    last_error: str | None = None
    last_response_status: int | None = None
    last_response_body: str | None = None
    last_attempt_at: datetime | None = None
    created_at: datetime | None = None


class DeliveryList(_Response):
    items: list[WebhookDelivery]
    next_cursor: str | None = None


# ---------------------------------------------------------------- files, profile, probes
class FileRetainResponse(_Response):
    """``POST /files/retain``: one queued retain operation per file."""

    operation_ids: list[str]


class BankProfile(_Response):
    bank_id: str
    name: str
    mission: str
    disposition: dict[str, int]
    background: str | None = None


class BankEmbeddingModel(_Response):
    """``GET /embedding-model``: the model the bank's vectors were made with (None before its first vector), the
    server's, whether they match, and the bank's queued or running re-embedding."""

    bank_id: str
    model: str | None = None
    dimension: int | None = None
    server_model: str
    server_dimension: int
    matches: bool
    serves_bank: bool = True
    reembed_operation_id: str | None = None


class ReembedStarted(_Response):
    """``POST /reembed``: the operation moving the bank to ``model`` (``deduplicated``: it was already active)."""

    operation_id: str
    deduplicated: bool
    model: str
    dimension: int


class Liveness(_Response):
    status: str
    version: str
    uptime_seconds: float


class Readiness(_Response):
    """``GET /health/ready`` when ready (a not-ready answer is a 503 error carrying the same report)."""

    status: str
    database: str
    schema_version: int | None = None
    expected_schema_version: int | None = None
    migrations_applied: bool | None = None
    workers: dict[str, Any] = Field(default_factory=dict)


# ---------------------------------------------------------------- LLM request log
class LLMCall(_Response):
    """One traced LLM call (``trace_id``: the operation, or reflect request, it served)."""

    id: str
    bank_id: str | None = None
    operation: str | None = None
    scope: str | None = None
    trace_id: str | None = None
    provider: str | None = None
    model: str | None = None
    status: str
    started_at: datetime | None = None
    ended_at: datetime | None = None
    duration_ms: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    input: Any = None
    output: Any = None
    error: str | None = None


class LLMCallList(_Response):
    bank_id: str
    total: int
    limit: int
    offset: int
    items: list[LLMCall]


class LLMCallStats(_Response):
    """Calls by status and token sums per ``trunc`` (hour or day) bucket."""

    bank_id: str
    period: str
    trunc: str
    start: datetime
    buckets: list[dict[str, Any]]


# ---------------------------------------------------------------- observations
class SourceFact(_Response):
    """A fact an observation change added or dropped; ``text`` is None for a fact since deleted."""

    id: str
    text: str | None = None


class ObservationChange(_Response):
    """``GET /memories/{id}/history``: one change consolidation made to an observation, the state before and after
    it (newest change first)."""

    changed_at: str
    previous_text: str
    text: str
    previous_source_memory_ids: list[str]
    source_memory_ids: list[str]
    source_facts_added: list[SourceFact]
    source_facts_removed: list[SourceFact]


class ObservationScope(_Response):
    """One distinct observation scope: its exact tag set (``[]``: untagged) and how many observations it holds."""

    tags: list[str]
    count: int


class ObservationScopes(_Response):
    """``GET /observations/scopes``: most populous first; ``total`` counts every distinct scope."""

    scopes: list[ObservationScope]
    total: int
    limit: int
    offset: int


class DerivedObservations(_Response):
    """``GET /memories/{id}/observations``: the observations built from the memory (memory items), oldest first."""

    memory_id: str
    items: list[dict[str, Any]]
    total: int


class ClearMemoryObservationsResponse(_Response):
    """``DELETE /memories/{id}/observations``: how many observations built from the memory went."""

    deleted_count: int


class DeleteResponse(_Response):
    """The reference's ``DeleteResponse`` (``DELETE /memories``, ``DELETE /observations``)."""

    success: bool
    message: str | None = None
    deleted_count: int | None = None
