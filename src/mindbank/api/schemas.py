"""Request and response bodies of the HTTP API, with the reference's field names, defaults and shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mindbank.domain.records import Bank, FactType, MemoryUnit, MentalModel, Operation, ScoredMemory
from mindbank.domain.tags import TagsMatch
from mindbank.domain.timeutil import to_iso
from mindbank.domain.trigger import MentalModelTrigger, MentalModelTriggerPatch

Detail = Literal["metadata", "content", "full"]


class RequestBody(BaseModel):
    """Base of request bodies: an explicit ``null`` means "use the default", as the reference's clients send
    ``null`` for every field they were not given."""

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


# ---------------------------------------------------------------- retain
class MemoryItem(RequestBody):
    """One retained item: a document whose content is split into chunks and facts."""

    content: str
    timestamp: datetime | Literal["unset"] | None = None
    context: str | None = None
    metadata: dict[str, str] | None = None
    document_id: str | None = None
    tags: list[str] | None = None
    update_mode: Literal["replace", "append"] | None = None  # null = replace
    # accepted for wire compatibility; the extractive engine does not use them
    entities: list[dict[str, Any]] | None = None
    resolve_entities: bool = True
    observation_scopes: Any = None
    strategy: str | None = None

    _content_not_blank = field_validator("content")(_not_blank)


class RetainRequest(RequestBody):
    """``POST /memories``."""

    model_config = ConfigDict(populate_by_name=True)

    items: list[MemoryItem] = Field(min_length=1)
    async_: bool = Field(default=False, alias="async")
    document_tags: list[str] | None = None
    operation_id: str | None = None


class RetainResponse(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    success: bool = True
    bank_id: str
    items_count: int
    async_: bool = Field(alias="async", serialization_alias="async")
    operation_id: str | None = None
    operation_ids: list[str] | None = None
    usage: dict[str, int] | None = None


# ---------------------------------------------------------------- recall
class RecallRequest(RequestBody):
    """``POST /memories/recall``."""

    query: str
    types: list[FactType] | None = None
    prefer_observations: bool = False
    budget: Literal["low", "mid", "high"] = "mid"
    max_tokens: int = Field(default=4096, ge=1)
    trace: bool = False
    query_timestamp: datetime | None = None
    include: dict[str, Any] | None = None
    tags: list[str] | None = None
    tags_match: TagsMatch = "any"
    tag_groups: list[dict[str, Any]] | None = None

    _query_not_blank = field_validator("query")(_not_blank)

    @field_validator("tag_groups")
    @classmethod
    def _no_tag_groups_yet(cls, value: list[dict[str, Any]] | None) -> None:
        if value:
            raise ValueError("tag_groups are not supported yet; use tags with tags_match")
        return None


def recall_result(hit: ScoredMemory) -> dict[str, Any]:
    """One ``RecallResponse.results`` entry."""
    m = hit.memory
    return {
        "id": m.id,
        "text": m.text,
        "type": m.fact_type,
        "entities": None,
        "context": m.context,
        "occurred_start": to_iso(m.occurred_start),
        "occurred_end": to_iso(m.occurred_end),
        "mentioned_at": to_iso(m.mentioned_at),
        "document_id": m.document_id,
        "metadata": m.metadata,
        "chunk_id": m.chunk_id,
        "tags": list(m.tags),
        "source_fact_ids": None if m.source_memory_ids is None else list(m.source_memory_ids),
        "scores": {"final": hit.final, "reranker": None, "semantic": hit.semantic, "keyword": hit.keyword},
        "attachments": None,
    }


# ---------------------------------------------------------------- mental models
class CreateMentalModelRequest(RequestBody):
    """``POST /mental-models``."""

    id: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=128)
    name: str = Field(max_length=256)
    source_query: str
    tags: list[str] = Field(default_factory=list)
    max_tokens: int = Field(default=2048, ge=256, le=8192)
    trigger: MentalModelTrigger = Field(default_factory=MentalModelTrigger)

    _name_not_blank = field_validator("name")(_not_blank)
    _query_not_blank = field_validator("source_query")(_not_blank)


class RefreshRequest(RequestBody):
    """``POST /mental-models/{id}/refresh`` optional body."""

    mode: Literal["full"] | None = None


_METADATA_KEYS = (
    "id",
    "bank_id",
    "name",
    "tags",
    "last_refreshed_at",
    "last_memory_seen_at",
    "last_refresh_failed_at",
    "last_full_refreshed_at",
    "created_at",
    "is_knowledge_page",
)
_CONTENT_KEYS = ("source_query", "content", "max_tokens", "trigger")


def mental_model_response(model: MentalModel, detail: Detail) -> dict[str, Any]:
    """``MentalModelResponse`` projected to a detail level; keys outside the level are present and null."""
    full = {
        "id": model.id,
        "bank_id": model.bank_id,
        "name": model.name,
        "source_query": model.source_query,
        "content": model.content,
        "tags": list(model.tags),
        "max_tokens": model.max_tokens,
        "trigger": model.trigger,
        "last_refreshed_at": to_iso(model.last_refreshed_at),
        "last_memory_seen_at": to_iso(model.last_memory_seen_at),
        "last_refresh_failed_at": to_iso(model.last_refresh_failed_at),
        "last_full_refreshed_at": to_iso(model.last_full_refreshed_at),
        "created_at": to_iso(model.created_at),
        "is_knowledge_page": False,
        "reflect_response": model.reflect_response,
        "is_stale": model.is_stale,
    }
    keep = set(_METADATA_KEYS) | {"is_stale"}
    if detail in ("content", "full"):
        keep |= set(_CONTENT_KEYS)
    if detail == "full":
        keep.add("reflect_response")
    return {k: (v if k in keep else None) for k, v in full.items()}


# ---------------------------------------------------------------- operations
def operation_response(op: Operation) -> dict[str, Any]:
    """``OperationStatusResponse`` (wire sample 03)."""
    return {
        "operation_id": op.id,
        "status": op.status,
        "operation_type": op.operation_type,
        "id": op.id,
        "task_type": op.operation_type,
        "mental_model_id": op.mental_model_id,
        "created_at": to_iso(op.created_at),
        "updated_at": to_iso(op.updated_at),
        "completed_at": to_iso(op.completed_at),
        "error_message": op.error,
        "retry_count": op.retry_count,
        "next_retry_at": to_iso(op.next_retry_at),
        "progress": None,
        "result_metadata": op.result,
        "details": _details(op),
        "child_operations": [],
        "task_payload": None,
    }


def _details(op: Operation) -> dict[str, Any] | None:
    if op.operation_type != "refresh_mental_model" or not op.result:
        return None
    return {
        "operation_type": op.operation_type,
        "outcome": op.result.get("outcome"),
        "failure_reason": op.result.get("failure_reason"),
    }


class UpdateMentalModelRequest(BaseModel):
    """``PATCH /mental-models/{id}``: only the given fields change; ``trigger`` is merged over the stored one."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, max_length=256)
    source_query: str | None = None
    max_tokens: int | None = Field(default=None, ge=256, le=8192)
    tags: list[str] | None = None
    trigger: MentalModelTriggerPatch | None = None  # type: ignore[valid-type]


class RevertRequest(RequestBody):
    """``POST /mental-models/{id}/revert``."""

    history_id: int


class ScopePreviewRequest(RequestBody):
    """``POST /mental-models/scope-preview``: the create body; only ``tags`` and ``trigger`` matter."""

    id: str | None = None
    name: str | None = None
    source_query: str | None = None
    tags: list[str] = Field(default_factory=list)
    max_tokens: int | None = None
    trigger: MentalModelTrigger = Field(default_factory=MentalModelTrigger)


class BankRequest(RequestBody):
    """``PUT``/``PATCH /banks/{bank_id}`` (the reference's CreateBankRequest; fields we do not use are accepted)."""

    name: str | None = None
    mission: str | None = None
    background: str | None = None
    disposition: dict[str, int] | None = None
    disposition_skepticism: int | None = Field(default=None, ge=1, le=5)
    disposition_literalism: int | None = Field(default=None, ge=1, le=5)
    disposition_empathy: int | None = Field(default=None, ge=1, le=5)


class BankConfigUpdate(RequestBody):
    """``PATCH /config``."""

    updates: dict[str, Any]


DEFAULT_DISPOSITION = {"skepticism": 3, "literalism": 3, "empathy": 3}


def bank_profile(bank: Bank) -> dict[str, Any]:
    """``BankProfileResponse``."""
    return {
        "bank_id": bank.bank_id,
        "name": bank.name or bank.bank_id,
        "disposition": bank.disposition or DEFAULT_DISPOSITION,
        "mission": bank.mission or "",
        "background": None,
    }


def bank_list_item(bank: Bank, fact_count: int) -> dict[str, Any]:
    """``BankListItem``."""
    return {
        **bank_profile(bank),
        "created_at": to_iso(bank.created_at),
        "updated_at": to_iso(bank.updated_at),
        "fact_count": fact_count,
        "last_document_at": None,
        "last_write_at": to_iso(bank.last_memory_write_at),
        "display_alias": None,
        "matched_aliases": [],
    }


def memory_item(m: MemoryUnit) -> dict[str, Any]:
    """One memory as ``GET /memories/list`` and ``GET /memories/{id}`` return it."""
    return {
        "id": m.id,
        "bank_id": m.bank_id,
        "text": m.text,
        "type": m.fact_type,
        "fact_type": m.fact_type,
        "context": m.context,
        "tags": list(m.tags),
        "metadata": m.metadata,
        "document_id": m.document_id,
        "chunk_id": m.chunk_id,
        "occurred_start": to_iso(m.occurred_start),
        "occurred_end": to_iso(m.occurred_end),
        "mentioned_at": to_iso(m.mentioned_at),
        "date": to_iso(m.occurred_start or m.mentioned_at),
        "created_at": to_iso(m.created_at),
        "updated_at": to_iso(m.updated_at),
        "source_memory_ids": None if m.source_memory_ids is None else list(m.source_memory_ids),
        "proof_count": m.proof_count,
        "entities": None,
    }


def operation_summary(op: Operation) -> dict[str, Any]:
    """One ``OperationsListResponse.operations`` entry (wire sample 22)."""
    return {
        "id": op.id,
        "task_type": op.operation_type,
        "operation_id": op.id,
        "operation_type": op.operation_type,
        "items_count": len(op.payload.get("items", [])),
        "document_id": None,
        "filename": None,
        "mental_model_id": op.mental_model_id,
        "details": _details(op),
        "created_at": to_iso(op.created_at),
        "updated_at": to_iso(op.updated_at),
        "status": op.status,
        "error_message": op.error,
        "retry_count": op.retry_count,
        "next_retry_at": to_iso(op.next_retry_at),
        "progress": None,
    }
