"""Request and response bodies of the HTTP API, with the reference's field names, defaults and shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mindbank.domain.limits import DEFAULT_MAX_TOKENS, MaxTokens
from mindbank.domain.records import FactType
from mindbank.domain.tags import TagsMatch
from mindbank.domain.trigger import MentalModelTrigger, MentalModelTriggerPatch


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


# ---------------------------------------------------------------- mental models
class CreateMentalModelRequest(RequestBody):
    """``POST /mental-models``."""

    id: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=128)
    name: str = Field(max_length=256)
    source_query: str
    tags: list[str] = Field(default_factory=list)
    max_tokens: MaxTokens = DEFAULT_MAX_TOKENS
    trigger: MentalModelTrigger = Field(default_factory=MentalModelTrigger)

    _name_not_blank = field_validator("name")(_not_blank)
    _query_not_blank = field_validator("source_query")(_not_blank)


class RefreshRequest(RequestBody):
    """``POST /mental-models/{id}/refresh`` optional body."""

    mode: Literal["full"] | None = None


# ---------------------------------------------------------------- operations
class UpdateMentalModelRequest(BaseModel):
    """``PATCH /mental-models/{id}``: only the given fields change; ``trigger`` is merged over the stored one."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, max_length=256)
    source_query: str | None = None
    max_tokens: MaxTokens | None = None
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


# CreateBankRequest settings of the reference's retain and recall pipelines that mindbank does not have: sending one
# is a 422 naming it rather than a setting silently ignored
UNSUPPORTED_BANK_FIELDS = (
    "retain_mission", "retain_extraction_mode", "retain_custom_instructions", "retain_chunk_size",
    "retain_structured_chunk_size", "retain_max_attachments_per_chunk", "enable_observations",
    "observations_mission", "enable_text_search", "enable_temporal_retrieval", "enable_graph_retrieval",
    "enable_reranking",
)  # fmt: skip


class BankRequest(RequestBody):
    """``PUT``/``PATCH /banks/{bank_id}`` (the reference's CreateBankRequest). The mission is ``reflect_mission``,
    else ``mission``, else ``background`` (the reference's deprecated spellings of it); a setting of the
    reference's pipelines that mindbank lacks (:data:`UNSUPPORTED_BANK_FIELDS`) answers 422."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    mission: str | None = None
    reflect_mission: str | None = None
    background: str | None = None
    disposition: dict[str, int] | None = None
    disposition_skepticism: int | None = Field(default=None, ge=1, le=5)
    disposition_literalism: int | None = Field(default=None, ge=1, le=5)
    disposition_empathy: int | None = Field(default=None, ge=1, le=5)

    @model_validator(mode="after")
    def _no_unsupported_settings(self) -> BankRequest:
        for name in UNSUPPORTED_BANK_FIELDS:
            if (self.model_extra or {}).get(name) is not None:
                raise ValueError(f"{name}: mindbank has no such setting (its retain and recall are not configurable)")
        return self

    @property
    def resolved_mission(self) -> str | None:
        """The mission this request sets (None: keep)."""
        return self.reflect_mission or self.mission or self.background


class BankConfigUpdate(RequestBody):
    """``PATCH /config``."""

    updates: dict[str, Any]
