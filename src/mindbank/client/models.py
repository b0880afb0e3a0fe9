"""Pydantic models of the server's responses (the HTTP API's wire shapes).

Every model allows extra fields, so a client keeps working against a newer server that adds some. Timestamps are
parsed into timezone-aware ``datetime`` objects.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


# ---------------------------------------------------------------- memories
class RetainResponse(_Response):
    """``POST /memories``: ``operation_id`` is set for an async retain."""

    success: bool = True
    bank_id: str
    items_count: int
    is_async: bool = Field(default=False, alias="async")
    operation_id: str | None = None
    operation_ids: list[str] | None = None
    usage: dict[str, int] | None = None


class RecallResult(_Response):
    """One recalled memory with its scores."""

    id: str
    text: str
    type: str
    entities: list[str] | None = None
    context: str | None = None
    occurred_start: datetime | None = None
    occurred_end: datetime | None = None
    mentioned_at: datetime | None = None
    document_id: str | None = None
    metadata: dict[str, Any] | None = None
    chunk_id: str | None = None
    tags: list[str] = Field(default_factory=list)
    source_fact_ids: list[str] | None = None
    scores: dict[str, float | None] | None = None


class RecallResponse(_Response):
    """``POST /memories/recall``: results best first."""

    results: list[RecallResult]
    trace: Any = None
    entities: Any = None
    chunks: Any = None
    source_facts: Any = None
    source_facts_truncated: bool = False


class ReflectResponse(_Response):
    """``POST /reflect``: the answer, and (when asked) what it rests on."""

    text: str
    based_on: dict[str, Any] | None = None
    structured_output: dict[str, Any] | None = None
    structured_output_error: str | None = None
    usage: dict[str, Any] | None = None
    trace: dict[str, Any] | None = None


# ---------------------------------------------------------------- mental models
class MentalModel(_Response):
    """A mental model at some detail level; fields outside the level are None. ``warnings`` (update only) says when
    the model's scope matches no memories."""

    id: str
    bank_id: str
    name: str
    source_query: str | None = None
    content: str | None = None
    tags: list[str] = Field(default_factory=list)
    max_tokens: int | None = None
    trigger: dict[str, Any] | None = None
    last_refreshed_at: datetime | None = None
    last_memory_seen_at: datetime | None = None
    last_refresh_failed_at: datetime | None = None
    last_full_refreshed_at: datetime | None = None
    created_at: datetime | None = None
    is_knowledge_page: bool = False
    reflect_response: dict[str, Any] | None = None
    is_stale: bool | None = None
    # why it is stale: {kind} in a list; a model's GET adds since, count and memory_ids (None when fresh)
    staleness_reason: dict[str, Any] | None = None
    refresh_status: dict[str, Any] | None = None  # governance and spend (failures, breaker, carried over, tokens)
    warnings: list[str] = Field(default_factory=list)


class MentalModelList(_Response):
    """``GET /mental-models``: a page, ordered ``last_refreshed_at DESC, id DESC``."""

    items: list[MentalModel]
    total: int
    limit: int
    offset: int


class CreateMentalModelResponse(_Response):
    """``POST /mental-models``: the new id and the operation of its first refresh."""

    mental_model_id: str
    operation_id: str
    warnings: list[str] = Field(default_factory=list)


class RefreshResponse(_Response):
    """``POST /mental-models/{id}/refresh``."""

    operation_id: str
    status: str


class StatusResponse(_Response):
    """A bare ``{"status": ...}`` acknowledgement (delete)."""

    status: str


class CitingModel(_Response):
    """One ``GET /memories/{id}/cited-by`` entry: a model (or knowledge page) citing the memory."""

    id: str
    name: str
    is_knowledge_page: bool = False
    is_stale: bool | None = None
    staleness_reason: dict[str, Any] | None = None


class CitedBy(_Response):
    """``GET /memories/{id}/cited-by``: the models whose current document cites the memory."""

    memory_id: str
    mental_models: list[CitingModel]


class HistoryEntry(_Response):
    """A previous version (``previous_content``) or, with ``kind == "refresh_failed"``, a failed refresh."""

    id: int | None = None
    changed_at: datetime
    previous_content: str | None = None
    previous_reflect_response: dict[str, Any] | None = None
    kind: str | None = None
    outcome: str | None = None
    failure_reason: str | None = None
    error_message: str | None = None
    version: int | None = None  # the per-model number of the content this row holds (None: a failure record)

    @property
    def is_failure(self) -> bool:
        """Whether this entry records a failed refresh rather than a version."""
        return self.kind == "refresh_failed"


class DryRunResult(_Response):
    """``POST /mental-models/{id}/dry-run-refresh``: what a refresh would do now; nothing was written."""

    mental_model_id: str
    name: str | None = None
    requested_mode: str | None = None
    effective_mode: str | None = None
    mode_fallback_reason: str | None = None
    outcome: str
    would_persist: bool
    failure_reason: str | None = None
    scope: dict[str, Any] | None = None
    window: dict[str, Any] | None = None
    facts: dict[str, Any] | None = None
    based_on: Any = None
    current_content: str | None = None
    candidate_content: str | None = None
    preview_content: str | None = None
    diff: str = ""
    delta_operations: Any = None
    retraction: Any = None
    trace: Any = None
    usage: dict[str, Any] | None = None
    duration_ms: float | None = None
    warnings: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------- banks, tags, stats
class TagCount(_Response):
    tag: str
    count: int


class TagList(_Response):
    """``GET /tags``: most used first."""

    items: list[TagCount]
    total: int
    limit: int
    offset: int


class BankStats(_Response):
    """``GET /stats`` (live: ``last_memory_write_at`` is read from the database)."""

    bank_id: str
    total_nodes: int
    total_documents: int = 0
    nodes_by_fact_type: dict[str, int] = Field(default_factory=dict)
    pending_operations: int = 0
    failed_operations: int = 0
    operations_by_status: dict[str, int] = Field(default_factory=dict)
    last_consolidated_at: datetime | None = None
    last_memory_write_at: datetime | None = None
    total_observations: int = 0
    refresh_spend: dict[str, Any] | None = None  # {day, today: {...}, total: {...}}: tokens, LLM calls, cost
    refresh_budget: dict[str, Any] | None = None
    failing_models: int = 0
    bank_breaker_open: bool = False


class BankSummary(_Response):
    """One ``GET /banks`` entry."""

    bank_id: str
    name: str | None = None
    mission: str | None = None
    fact_count: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_write_at: datetime | None = None


class BankList(_Response):
    banks: list[BankSummary]
    total: int


class BankConfig(_Response):
    """``GET``/``PATCH /config``: resolved settings and the bank's own overrides."""

    bank_id: str
    config: dict[str, Any]
    overrides: dict[str, Any]


# ---------------------------------------------------------------- operations
class Operation(_Response):
    """``GET /operations/{id}``. ``status``: pending, processing, completed, failed or cancelled."""

    operation_id: str
    status: str
    operation_type: str | None = None
    mental_model_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    completed_at: datetime | None = None
    error_message: str | None = None
    retry_count: int = 0
    next_retry_at: datetime | None = None
    result_metadata: dict[str, Any] | None = None
    details: dict[str, Any] | None = None

    @property
    def is_terminal(self) -> bool:
        """Whether the operation has finished (it will not change any more)."""
        return self.status in TERMINAL_STATUSES


TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


class OperationSummary(_Response):
    """One ``GET /operations`` entry."""

    id: str
    status: str
    operation_type: str | None = None
    mental_model_id: str | None = None
    items_count: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    error_message: str | None = None
    retry_count: int = 0
    next_retry_at: datetime | None = None
    details: dict[str, Any] | None = None


class OperationList(_Response):
    bank_id: str
    total: int
    limit: int
    offset: int
    operations: list[OperationSummary]


class CancelResponse(_Response):
    success: bool
    message: str
    operation_id: str


# ---------------------------------------------------------------- scoped API keys
class ApiKeyInfo(_Response):
    """A scoped API key as listed (never its secret): the banks (ids, ``prefix*``, ``*``) it may use."""

    id: str
    name: str | None = None
    banks: list[str]
    read_only: bool
    created_at: datetime | None = None
    revoked_at: datetime | None = None


class CreatedApiKey(ApiKeyInfo):
    """``POST /v1/default/api-keys``: ``key`` is the secret bearer token, returned this once."""

    key: str


class ApiKeyList(_Response):
    items: list[ApiKeyInfo]
    total: int


# ---------------------------------------------------------------- knowledge base
class KnowledgeNode(_Response):
    """A folder or a page of the knowledge-base tree. A page carries its mental model's question
    (``description``), tags, last refresh (``timestamp``), ``is_stale`` (tree and patch answers) and trigger."""

    id: str
    kind: str
    name: str
    parent_id: str | None = None
    mental_model_id: str | None = None
    managed: bool = False
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    timestamp: datetime | None = None
    is_stale: bool | None = None
    last_refresh_failed_at: datetime | None = None
    trigger: dict[str, Any] | None = None
    children: list[KnowledgeNode] = Field(default_factory=list)


class KnowledgeTree(_Response):
    """``GET /knowledge-base/tree``: the root nodes, folders first, each with its children."""

    roots: list[KnowledgeNode]


class CreateKnowledgePageResponse(_Response):
    """``POST /knowledge-base/pages``: the page's node id, its mental model, and its first refresh."""

    page_id: str
    mental_model_id: str
    operation_id: str | None = None
    warnings: list[str] = Field(default_factory=list)


class KnowledgePage(_Response):
    """``GET /knowledge-base/pages/{id}``: ``markdown`` is frontmatter + body; ``body`` the stored content."""

    id: str
    name: str
    type: str
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    timestamp: datetime | None = None
    body: str | None = None
    markdown: str
    mental_model_id: str | None = None


class KnowledgeSearchResult(_Response):
    """One page search hit; ``score`` is the rank-fusion score in 0..1."""

    id: str
    name: str
    mental_model_id: str | None = None
    source_query: str | None = None
    snippet: str
    score: float
    updated_at: datetime | None = None


class KnowledgeSearchResponse(_Response):
    """``GET /knowledge-base/search``: best first, and how many pages matched."""

    results: list[KnowledgeSearchResult]
    total: int


class KnowledgeFile(_Response):
    path: str
    content: str


class KnowledgeBundle(_Response):
    """``GET /knowledge-base/export``: ``index.md``, one file per page, ``log.md``."""

    files: list[KnowledgeFile]


class DeleteNodeResponse(_Response):
    """``DELETE /knowledge-base/nodes/{id}``: what went with the node."""

    status: str
    node_id: str | None = None
    deleted_folders: int = 0
    deleted_pages: int = 0


# ---------------------------------------------------------------- bank transfer and templates
class TransferSubmitted(_Response):
    """``POST /transfer/export|import``, ``/clone``, ``/document-transfer[/export]`` (202): the queued operation.
    An export's ``result_metadata.download_url`` names its archive once it completed."""

    operation_id: str
    status: str = "pending"


class TemplateImportResult(_Response):
    """``POST /import`` (bank template): what was (or, with ``dry_run``, would be) applied."""

    bank_id: str
    config_applied: bool
    mental_models_created: list[str] = Field(default_factory=list)
    mental_models_updated: list[str] = Field(default_factory=list)
    directives_created: list[str] = Field(default_factory=list)
    directives_updated: list[str] = Field(default_factory=list)
    operation_ids: list[str] = Field(default_factory=list)
    dry_run: bool = False
    config_ignored: list[str] = Field(default_factory=list)
