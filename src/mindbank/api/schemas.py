"""Request and response bodies of the HTTP API, with the reference's field names, defaults and shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mindbank.domain.records import FactType, MentalModel, Operation, ScoredMemory
from mindbank.domain.tags import TagsMatch
from mindbank.domain.timeutil import to_iso
from mindbank.domain.trigger import MentalModelTrigger

Detail = Literal["metadata", "content", "full"]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


# ---------------------------------------------------------------- retain
class MemoryItem(BaseModel):
    """One retained item: a document whose content is split into chunks and facts."""

    content: str
    timestamp: datetime | Literal["unset"] | None = None
    context: str | None = None
    metadata: dict[str, str] | None = None
    document_id: str | None = None
    tags: list[str] | None = None
    update_mode: Literal["replace", "append"] = "replace"
    # accepted for wire compatibility; the extractive engine does not use them
    entities: list[dict[str, Any]] | None = None
    resolve_entities: bool = True
    observation_scopes: Any = None
    strategy: str | None = None

    _content_not_blank = field_validator("content")(_not_blank)


class RetainRequest(BaseModel):
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
class RecallRequest(BaseModel):
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
class CreateMentalModelRequest(BaseModel):
    """``POST /mental-models``."""

    id: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=128)
    name: str = Field(max_length=256)
    source_query: str
    tags: list[str] = Field(default_factory=list)
    max_tokens: int = Field(default=2048, ge=256, le=8192)
    trigger: MentalModelTrigger = Field(default_factory=MentalModelTrigger)

    _name_not_blank = field_validator("name")(_not_blank)
    _query_not_blank = field_validator("source_query")(_not_blank)


class RefreshRequest(BaseModel):
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
