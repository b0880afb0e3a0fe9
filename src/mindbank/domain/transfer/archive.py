"""The bank transfer archive: a ZIP of JSON documents, one record per line, as the reference's bank transfer
endpoints describe it (``POST /transfer/export``, ``/transfer/import``, ``/clone``, ``/document-transfer``).

The reference's rules, which any archive importable here follows:

* ``manifest.json`` names the format (``bank-transfer``, ``format_version``), the source bank and what the archive
  carries (``contents``: data, bank config, history; observations and mental models);
* ``bank.json``: the bank's profile and config overrides (whole-bank archives only);
* ``documents.jsonl``: one document per line with its original text and chunks;
* ``memories.jsonl``: one memory (fact or observation) per line, in write order; a fact names its document and
  chunk (``chunk_index``), an observation the facts it rests on by their line in this file (``source_refs``);
* ``document_history.jsonl`` (each document's changes), ``mental_models.jsonl`` (with each model's history),
  ``directives.jsonl`` and ``webhooks.jsonl`` (bank config), ``operations.jsonl`` (the operations log),
  ``llm_requests.jsonl`` and ``webhook_deliveries.jsonl`` (history);
* embeddings and database ids are NOT carried: the importing side re-embeds with its own model and assigns ids.

mindbank's extension (``extensions.mindbank`` in the manifest) adds, so that a mindbank → mindbank round trip is
lossless: every row's id (memories, chunks, history entries, operations, LLM requests), each memory's embedding
(``embedding``, little-endian float32, base64, with the model name and dimension in the manifest), its consolidation
bookkeeping (``consolidated_at``), the observations' source ids (``source_memory_ids``), the mental models' structured
documents, reflect responses, refresh-governance records (``refresh_state``) and every timestamp, and an operation's
checkpoint (``progress``). An importer that does not know the extension ignores it; mindbank uses it when present
(vectors only when the embedding model matches its own).

Format versions: 1 is the sections above. 2 adds, with the mental models, ``knowledge_nodes.jsonl`` (the knowledge
base: folders and pages, a parent before its children, a page naming its mental model) and ``refresh_spend.jsonl``
(the refresh spend ledger: tokens per model per UTC day), and ``refresh_state`` on each model. A version-1 archive
reads as a version-2 one without those (no tree, no ledger, every model's governance record empty); a server that
reads only version 1 refuses a version-2 archive rather than silently flattening its tree.

Records accept unknown fields (a newer producer, the reference's entity and link data mindbank does not keep) and
reject malformed known ones; :func:`record_error` words a validation failure as ``member line N: field: message``.
"""

from __future__ import annotations

import base64
from datetime import UTC, date, datetime
from typing import Annotated, Any, Final, Literal, Self

import numpy as np
import numpy.typing as npt
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    field_validator,
    model_validator,
)

from mindbank.domain.knowledge import MAX_NAME_LENGTH, NodeKind
from mindbank.domain.records import FactType, OperationStatus
from mindbank.domain.timeutil import to_iso
from mindbank.domain.trigger import MentalModelTrigger

FORMAT: Final = "bank-transfer"
FORMAT_VERSION = 2
VECTOR_ENCODING: Final = "float32-le-base64"
EXTENSION = "mindbank"

MANIFEST = "manifest.json"
BANK = "bank.json"
DOCUMENTS = "documents.jsonl"
MEMORIES = "memories.jsonl"
MENTAL_MODELS = "mental_models.jsonl"
DIRECTIVES = "directives.jsonl"
OPERATIONS = "operations.jsonl"
LLM_REQUESTS = "llm_requests.jsonl"
DOCUMENT_HISTORY = "document_history.jsonl"
WEBHOOKS = "webhooks.jsonl"
DELIVERIES = "webhook_deliveries.jsonl"
KNOWLEDGE_NODES = "knowledge_nodes.jsonl"  # format version 2
REFRESH_SPEND = "refresh_spend.jsonl"  # format version 2
MEMBERS = (
    MANIFEST, BANK, DOCUMENTS, MEMORIES, DOCUMENT_HISTORY, MENTAL_MODELS, KNOWLEDGE_NODES, REFRESH_SPEND, DIRECTIVES,
    WEBHOOKS, OPERATIONS, LLM_REQUESTS, DELIVERIES,
)  # fmt: skip


def _utc(value: datetime) -> datetime:
    """Aware UTC (a time without an offset is taken as UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# every archived time: ISO-8601 with microseconds and +00:00 (what the stores keep), read back as aware UTC
Time = Annotated[datetime, AfterValidator(_utc), PlainSerializer(to_iso, return_type=str, when_used="json")]
Text = Annotated[str, Field(min_length=1)]


class Record(BaseModel):
    """Base of every archive record: unknown fields are ignored, known ones validated."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    def line(self) -> bytes:
        """The record as one JSON line (UTF-8, newline-terminated)."""
        return (self.model_dump_json() + "\n").encode()


class Contents(Record):
    """What an archive carries: the producer's include flags and sections."""

    data: bool = True
    bank_config: bool = True
    history: bool = False
    observations: bool = True
    mental_models: bool = True


class EmbeddingInfo(Record):
    """The model the archived vectors were made with; an importer with another model re-embeds."""

    model: Text
    dimension: int = Field(gt=0)
    encoding: Literal["float32-le-base64"] = VECTOR_ENCODING


class Extension(Record):
    """``extensions.mindbank``: ids and vectors are carried (see the module docstring)."""

    ids: bool = True
    embedding: EmbeddingInfo | None = None


class Manifest(Record):
    """``manifest.json``."""

    format: Literal["bank-transfer"]
    format_version: int = Field(ge=1)
    source_bank_id: Text
    exported_at: Time
    producer: str | None = None
    contents: Contents = Field(default_factory=Contents)
    document_ids: list[str] | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    extensions: dict[str, Any] = Field(default_factory=dict)

    @field_validator("format_version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value > FORMAT_VERSION:
            raise ValueError(f"format_version {value} is newer than this server reads ({FORMAT_VERSION})")
        return value

    def extension(self) -> Extension | None:
        """The mindbank extension, when the producer wrote one. Raises ``ValidationError`` when it is malformed."""
        raw = self.extensions.get(EXTENSION)
        return None if raw is None else Extension.model_validate(raw)


class BankRecord(Record):
    """``bank.json``: profile and config overrides (``include_bank_config``) and the bank's bookkeeping."""

    name: str | None = None
    mission: str | None = None
    disposition: dict[str, int] | None = None
    config: dict[str, Any] | None = None
    created_at: Time | None = None
    updated_at: Time | None = None
    last_memory_write_at: Time | None = None


class ChunkRecord(Record):
    """One chunk of a document; ``id`` is the extension."""

    index: int = Field(ge=0)
    text: str
    id: Text | None = None


class DocumentRecord(Record):
    """One line of ``documents.jsonl``."""

    id: Text
    original_text: str
    content_hash: str | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    context: str | None = None
    created_at: Time
    updated_at: Time | None = None
    chunks: list[ChunkRecord] = Field(default_factory=list)

    @field_validator("chunks")
    @classmethod
    def _distinct_indexes(cls, value: list[ChunkRecord]) -> list[ChunkRecord]:
        indexes = [c.index for c in value]
        if len(set(indexes)) != len(indexes):
            raise ValueError("chunk indexes must be distinct")
        return value


class MemoryRecord(Record):
    """One line of ``memories.jsonl``: a fact (of a document, or loose) or an observation.

    ``source_refs``: an observation's sources as 0-based lines of ``memories.jsonl`` before its own. Extension:
    ``id``, ``chunk_id``, ``consolidated_at``, ``source_memory_ids``, ``embedding``, and a fact's repeats
    (``mention_count``, ``last_mentioned_at``, ``repeat_key``: :mod:`mindbank.domain.repeats`)."""

    fact_type: FactType
    text: Text
    document_id: str | None = None
    chunk_index: int | None = Field(default=None, ge=0)
    tags: list[str] = Field(default_factory=list)
    context: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    occurred_start: Time | None = None
    occurred_end: Time | None = None
    mentioned_at: Time | None = None
    created_at: Time
    updated_at: Time | None = None
    proof_count: int | None = None
    source_refs: list[int] | None = None
    id: Text | None = None
    chunk_id: Text | None = None
    consolidated_at: Time | None = None
    source_memory_ids: list[str] | None = None
    embedding: str | None = None
    mention_count: int = Field(default=1, ge=1)
    last_mentioned_at: Time | None = None
    repeat_key: str | None = None


class HistoryRecord(Record):
    """One history entry of a mental model (a replaced version or a failure record); ``id`` and ``version`` (the
    per-model number of the content a version row holds) are the extension."""

    content: dict[str, Any]
    changed_at: Time
    id: int | None = Field(default=None, ge=1)
    version: int | None = Field(default=None, ge=0)


class MentalModelRecord(Record):
    """One line of ``mental_models.jsonl``: the model, its document and its history (oldest entry first).
    ``structured_document`` is also read under the reference's column name ``structured_content``."""

    id: Text
    name: Text
    source_query: Text
    content: str = ""
    structured_document: dict[str, Any] | None = Field(default=None, alias="structured_content")
    reflect_response: dict[str, Any] | None = None
    tags: list[str] = Field(default_factory=list)
    max_tokens: int = Field(default=2048, ge=1)
    trigger: dict[str, Any] = Field(default_factory=dict)
    last_refreshed_at: Time | None = None
    last_memory_seen_at: Time | None = None
    last_refreshed_source_query: str | None = None
    last_refresh_failed_at: Time | None = None
    last_full_refreshed_at: Time | None = None
    created_at: Time | None = None
    cleared_at: Time | None = None
    refresh_state: dict[str, Any] | None = None
    history: list[HistoryRecord] = Field(default_factory=list)

    @field_validator("refresh_state", mode="before")
    @classmethod
    def _state_as_dict(cls, value: Any) -> Any:
        # a stored model's record (domain.governance.RefreshState) is written in its stored form
        to_dict = getattr(value, "to_dict", None)
        return to_dict() if callable(to_dict) else value

    @field_validator("trigger")
    @classmethod
    def _valid_trigger(cls, value: dict[str, Any]) -> dict[str, Any]:
        # every stored trigger is the full validated field set: what the model would have if created here
        return MentalModelTrigger.model_validate(value).model_dump()

    def line(self) -> bytes:
        """The record as one JSON line, the document under ``structured_document``."""
        return (self.model_dump_json(by_alias=False) + "\n").encode()


def _node_name(value: str) -> str:
    cleaned = value.strip()
    if not cleaned:
        raise ValueError("must not be blank")
    if len(cleaned) > MAX_NAME_LENGTH:
        raise ValueError(f"must be at most {MAX_NAME_LENGTH} characters")
    return cleaned


class KnowledgeNodeRecord(Record):
    """One line of ``knowledge_nodes.jsonl`` (format version 2): a folder or a page of the knowledge base. A page
    names its mental model (a line of ``mental_models.jsonl``), a folder none; ``parent_id`` None is the root, else
    an earlier line's folder. Names follow the tree's rule (non-blank, stripped, at most 256 characters)."""

    id: Text
    kind: NodeKind
    name: Annotated[str, AfterValidator(_node_name)]
    parent_id: str | None = None
    mental_model_id: str | None = None
    created_at: Time | None = None
    updated_at: Time | None = None

    @model_validator(mode="after")
    def _page_has_model(self) -> Self:
        if (self.kind == "page") != (self.mental_model_id is not None):
            raise ValueError("a page names its mental_model_id and a folder none")
        return self


def _utc_day(value: str) -> str:
    try:
        if date.fromisoformat(value).isoformat() == value:
            return value
    except ValueError:
        pass
    raise ValueError("must be a UTC day as YYYY-MM-DD")


class RefreshSpendRecord(Record):
    """One line of ``refresh_spend.jsonl`` (format version 2): what the refreshes of one mental model spent on one
    UTC day (the ledger daily token budgets are checked against; a deleted model's rows stay with the bank)."""

    mental_model_id: Text
    day: Annotated[str, AfterValidator(_utc_day)]
    refreshes: int = Field(default=0, ge=0)
    llm_calls: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)


class DirectiveRecord(Record):
    """One line of ``directives.jsonl``; ``id`` and the times are the extension."""

    name: Annotated[str, Field(min_length=1, max_length=256)]
    content: Annotated[str, Field(min_length=1, max_length=20_000)]
    priority: int = 0
    is_active: bool = True
    tags: list[str] = Field(default_factory=list)
    id: Text | None = None
    created_at: Time | None = None
    updated_at: Time | None = None


class WebhookRecord(Record):
    """One line of ``webhooks.jsonl`` (bank config: the reference carries webhooks, secrets included, with it)."""

    url: Text
    secret: str | None = None
    event_types: list[str] = Field(default_factory=list)
    enabled: bool = True
    http_config: dict[str, Any] = Field(default_factory=dict)
    id: Text | None = None
    created_at: Time | None = None
    updated_at: Time | None = None


class DeliveryRecord(Record):
    """One line of ``webhook_deliveries.jsonl`` (history): one event sent, or to be sent, to one webhook."""

    id: Text
    webhook_id: Text
    event_id: str
    event_type: str
    url: str
    payload: dict[str, Any]
    status: Literal["pending", "delivered", "failed"]
    attempts: int = Field(default=0, ge=0)
    operation_id: str | None = None
    next_retry_at: Time | None = None
    last_error: str | None = None
    last_response_status: int | None = None
    last_response_body: str | None = None
    last_attempt_at: Time | None = None
    created_at: Time
    updated_at: Time | None = None


class DocumentEventRecord(Record):
    """One line of ``document_history.jsonl``: a change to a document (retain, append, reprocess, retag, a fact
    edited or deleted); ``id`` is the extension."""

    document_id: Text
    kind: Text
    created_at: Time
    operation_id: str | None = None
    fact_id: str | None = None
    facts_added: int = Field(default=0, ge=0)
    facts_removed: int = Field(default=0, ge=0)
    id: int | None = Field(default=None, ge=1)


class OperationRecord(Record):
    """One line of ``operations.jsonl``: the operations log, with the claim of a running operation."""

    id: Text
    operation_type: Text
    status: OperationStatus
    payload: dict[str, Any] = Field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: str | None = None
    retry_count: int = Field(default=0, ge=0)
    next_retry_at: Time | None = None
    mental_model_id: str | None = None
    progress: dict[str, Any] | None = None
    worker_id: str | None = None
    lease_expires_at: Time | None = None
    created_at: Time
    updated_at: Time | None = None
    completed_at: Time | None = None


class LLMRequestRecord(Record):
    """One line of ``llm_requests.jsonl`` (history)."""

    id: Text
    operation_id: str | None = None
    scope: str
    provider: str
    model: str
    attempt: int = Field(ge=0)
    request: dict[str, Any]
    response: dict[str, Any] | None = None
    error: str | None = None
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    duration_ms: int = Field(default=0, ge=0)
    created_at: Time


def encode_vector(vector: npt.NDArray[np.float32]) -> str:
    """An embedding as archived: little-endian float32 bytes, base64."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: str, dimension: int) -> npt.NDArray[np.float32]:
    """An archived embedding as a float32 vector. Raises ``ValueError`` when it is not ``dimension`` finite
    floats."""
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise ValueError("embedding is not base64") from exc
    if len(raw) != 4 * dimension:
        raise ValueError(f"embedding has {len(raw) // 4} values, the manifest says {dimension}")
    vector = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if not np.isfinite(vector).all():
        raise ValueError("embedding holds a non-finite value (NaN or infinity)")
    return vector


def record_error(where: str, exc: ValidationError) -> str:
    """``where: field: message`` for the first problem of a record that did not validate."""
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"])
    message = str(err["msg"]).removeprefix("Value error, ")
    return f"{where}: {field}: {message}" if field else f"{where}: {message}"
