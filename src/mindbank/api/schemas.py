"""Request and response bodies of the HTTP API, with the reference's field names, defaults and shapes.

Every request body derives from :class:`RequestBody`: a key that neither the reference (Hindsight 1.1.0) nor
mindbank defines is a 422 naming it, at every level (nested objects are models too), and the limits of
:mod:`mindbank.domain.fields` are part of each field's type. A reference field mindbank cannot honour is either
accepted with its documented no-effect (hints such as ``entities``) or, where ignoring it would mislead the caller
(a filter, a setting), declared as :data:`Refused`: only null is accepted, anything else is a 422 naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, model_validator
from pydantic_core import PydanticCustomError

from mindbank.config import BANK_OVERRIDABLE
from mindbank.domain.fields import (
    RETAIN_ITEMS,
    ContentText,
    DailyTokenBudget,
    DocumentId,
    IdRef,
    IsoTime,
    Metadata,
    ModelId,
    NameText,
    NotBlankText,
    PositiveId,
    QueryText,
    Seconds,
    TagGroups,
    TagList,
    Text,
    TokenBudget,
    nullable_optionals,
)
from mindbank.domain.limits import DEFAULT_MAX_TOKENS, MaxTokens
from mindbank.domain.records import FactType
from mindbank.domain.tags import TagsMatch
from mindbank.domain.trigger import MentalModelTrigger, MentalModelTriggerPatch

Budget = Literal["low", "mid", "high"]
Score = Annotated[float, Field(allow_inf_nan=False)]


class RequestBody(BaseModel):
    """Base of request bodies: unknown keys are refused (422 naming them), and an explicit ``null`` for a known
    field means "use the default", as the reference's clients send ``null`` for every field they were not given."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True, json_schema_extra=nullable_optionals)

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = set(cls.model_fields) | {f.alias for f in cls.model_fields.values() if f.alias}
        return {k: v for k, v in data.items() if v is not None or k not in known}


def refused(message: str = "not supported by mindbank (send null or leave it out)") -> Any:
    """The annotated type of a reference field mindbank cannot honour: declared (its JSON Schema is ``null``) so
    the reference's clients may send null; any other value is a 422 (``unsupported_field``) saying ``message``."""

    def refuse(value: Any) -> None:
        if value is not None:
            raise PydanticCustomError("unsupported_field", message)

    return Annotated[None, BeforeValidator(refuse), Field(default=None, description=f"Only null: {message}.")]


if TYPE_CHECKING:  # the only value a refused field takes
    Refused: TypeAlias = None
else:
    Refused = refused()


# ---------------------------------------------------------------- retain
class EntityInput(RequestBody):
    """The reference's entity hint; mindbank has no entity graph and keeps none."""

    text: Text
    type: Text | None = None


class MemoryItem(RequestBody):
    """One retained item: a document whose content is split into chunks and facts."""

    content: ContentText
    timestamp: IsoTime | Literal["unset"] | None = None
    context: Text | None = None
    metadata: Metadata | None = None
    document_id: DocumentId | None = None
    tags: TagList | None = None
    update_mode: Literal["replace", "append"] | None = None  # null = replace
    # accepted for wire compatibility; the extractive engine does not use them
    entities: list[EntityInput] | None = None
    resolve_entities: bool = True
    observation_scopes: Literal["per_tag", "combined", "all_combinations", "shared"] | list[TagList] | None = None
    strategy: Text | None = None


class RetainRequest(RequestBody):
    """``POST /memories``."""

    items: Annotated[list[MemoryItem], Field(min_length=1), RETAIN_ITEMS]
    async_: bool = Field(default=False, alias="async")
    document_tags: TagList | None = None
    operation_id: IdRef | None = None


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
class EntityIncludeOptions(RequestBody):
    """``include.entities`` (on by default, like the reference; null turns it off): each result's ``entities`` lists
    the names its text mentions and the response's ``entities`` maps each name to ``{entity_id, canonical_name,
    observations}``. mindbank keeps no per-entity observations, so ``max_tokens`` has nothing to cut."""

    max_tokens: TokenBudget = 500


class ChunkIncludeOptions(RequestBody):
    """``include.chunks``: the chunk each result came from, keyed by chunk id, texts within ``max_tokens``.

    ``neighbours`` (a mindbank extension): also the chunks just before and after each
    result's chunk (the document's adjacent chunks, else the turns said just before and after in the same
    context), after every result's own chunk and within the same ``max_tokens``. Each carries ``neighbour_of``
    (the result chunk it sits beside) and ``side`` (``"before"`` / ``"after"``)."""

    max_tokens: TokenBudget = 8192
    neighbours: bool = Field(
        default=False,
        description="Also return the chunks just before and after each result's chunk (mindbank extension).",
    )


class SourceFactsIncludeOptions(RequestBody):
    """``include.source_facts``: the facts each observation result was built from (-1: unlimited)."""

    max_tokens: Annotated[int, Field(ge=-1, le=10_000_000)] = 4096
    max_tokens_per_observation: Annotated[int, Field(ge=-1, le=10_000_000)] = -1


class RecallInclude(RequestBody):
    """``include``: extra data beside the results. ``chunks`` and ``source_facts`` are off unless given;
    ``entities`` is on unless sent as null (the reference's defaults)."""

    entities: EntityIncludeOptions | None = Field(default_factory=EntityIncludeOptions)
    chunks: ChunkIncludeOptions | None = None
    source_facts: SourceFactsIncludeOptions | None = None

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        # here null is a value, as in the reference: "entities": null turns entities off (absent: on)
        return data


class MinScores(RequestBody):
    """Inclusive score floors. ``semantic`` (cosine) and ``keyword`` (BM25) prune their own retriever's candidates;
    ``final`` drops every result scoring below it. mindbank computes no ``reranker`` score: a floor on it is a 422."""

    semantic: Annotated[float, Field(ge=-1, le=1, allow_inf_nan=False)] | None = None
    keyword: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    reranker: refused("mindbank computes no reranker score (no cross-encoder); put the floor on final")  # type: ignore[valid-type]  # an annotation built by a call
    final: Score | None = None


class TemporalWindow(RequestBody):
    """Memories whose own dates fall inside ``[start, end]`` rank higher (a boost, not a filter)."""

    start: IsoTime
    end: IsoTime

    @model_validator(mode="after")
    def _ordered(self) -> TemporalWindow:
        if self.start > self.end:
            raise ValueError("start must not be after end")
        return self


class RecallRequest(RequestBody):
    """``POST /memories/recall``: every field of the reference's ``RecallRequest``."""

    query: QueryText
    types: list[FactType] | None = None
    prefer_observations: bool | None = None
    budget: Budget = "mid"
    max_tokens: TokenBudget = 4096
    trace: bool = False
    query_timestamp: IsoTime | None = Field(
        default=None, description="Accepted; mindbank applies no recency scoring and parses no relative dates."
    )
    include: RecallInclude = Field(default_factory=RecallInclude)
    tags: TagList | None = None
    tags_match: TagsMatch = "any"
    tag_groups: TagGroups | None = None
    min_scores: MinScores | None = None
    temporal_window: TemporalWindow | None = None


# ---------------------------------------------------------------- mental models
class CreateMentalModelRequest(RequestBody):
    """``POST /mental-models``."""

    id: ModelId | None = None
    name: NameText
    source_query: QueryText
    tags: TagList = Field(default_factory=list)
    max_tokens: MaxTokens = DEFAULT_MAX_TOKENS
    trigger: MentalModelTrigger = Field(default_factory=MentalModelTrigger)


class RefreshRequest(RequestBody):
    """``POST /mental-models/{id}/refresh`` optional body."""

    mode: Literal["full"] | None = None


class UpdateMentalModelRequest(BaseModel):
    """``PATCH /mental-models/{id}``: only the given fields change; ``trigger`` is merged over the stored one."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: NameText | None = None
    source_query: QueryText | None = None
    max_tokens: MaxTokens | None = None
    tags: TagList | None = None
    trigger: MentalModelTriggerPatch | None = None


class RevertRequest(RequestBody):
    """``POST /mental-models/{id}/revert``."""

    history_id: PositiveId


class AddBlockRequest(RequestBody):
    """``POST /mental-models/{id}/blocks``: a person-written block into ``section_id`` (after ``after_block_id``,
    else at its end), or into a new section titled ``heading``."""

    text: NotBlankText
    section_id: IdRef | None = None
    after_block_id: IdRef | None = None
    heading: NameText | None = None


class EditBlockRequest(RequestBody):
    """``PATCH /mental-models/{id}/blocks/{block_id}``: new ``text`` (the block becomes person-written) and/or
    ``pinned``; at least one."""

    text: NotBlankText | None = None
    pinned: bool | None = None

    @model_validator(mode="after")
    def _something(self) -> EditBlockRequest:
        if self.text is None and self.pinned is None:
            raise PydanticCustomError("missing", "give text and/or pinned")
        return self


class PinSectionRequest(RequestBody):
    """``PATCH /mental-models/{id}/sections/{section_id}``: pin or unpin the whole section."""

    pinned: bool


class DraftDecisionRequest(RequestBody):
    """``POST /mental-models/{id}/draft/approve`` and ``…/reject`` (optional body): ``draft_id`` decides only that
    draft (409 when a newer one replaced it); ``reason`` is recorded with a rejection."""

    draft_id: IdRef | None = None
    reason: Text | None = None


class ScopePreviewRequest(RequestBody):
    """``POST /mental-models/scope-preview``: the create body; only ``tags`` and ``trigger`` matter."""

    id: ModelId | None = None
    name: NameText | None = None
    source_query: QueryText | None = None
    tags: TagList = Field(default_factory=list)
    max_tokens: MaxTokens | None = None
    trigger: MentalModelTrigger = Field(default_factory=MentalModelTrigger)


# ---------------------------------------------------------------- banks
Trait = Annotated[int, Field(ge=1, le=5)]


class DispositionTraits(RequestBody):
    """The reference's ``DispositionTraits``, in ``PUT /profile`` and in a bank's ``disposition``: all three traits,
    each an integer 1-5 (a missing or out-of-range trait is a 422 naming it, e.g. ``disposition.empathy``)."""

    skepticism: Trait
    literalism: Trait
    empathy: Trait


class BankRequest(RequestBody):
    """``PUT``/``PATCH /banks/{bank_id}``: every field of the reference's ``CreateBankRequest``. The mission is
    ``reflect_mission``, else ``mission``, else ``background`` (the reference's deprecated spellings of it); the
    settings of the reference's pipelines that mindbank does not have are :data:`Refused` unless null."""

    name: Annotated[Text, Field(max_length=256)] | None = None
    mission: Text | None = None
    background: Text | None = None
    disposition: DispositionTraits | None = None
    disposition_skepticism: Trait | None = None
    disposition_literalism: Trait | None = None
    disposition_empathy: Trait | None = None
    reflect_mission: Text | None = None
    retain_mission: Refused
    retain_extraction_mode: Refused
    retain_custom_instructions: Refused
    retain_chunk_size: Refused
    retain_structured_chunk_size: Refused
    retain_max_attachments_per_chunk: Refused
    enable_observations: Refused
    observations_mission: Refused
    enable_text_search: Refused
    enable_temporal_retrieval: Refused
    enable_graph_retrieval: Refused
    enable_reranking: Refused

    @property
    def resolved_mission(self) -> str | None:
        """The mission this request sets (None: keep)."""
        return self.reflect_mission or self.mission or self.background


def _override_type(key: str, kind: type) -> Any:
    if kind is dict:  # knowledge_page_default_trigger: a trigger object, validated by the service
        return dict[str, Any]
    if kind is bool:
        return bool
    if kind is float:
        return Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    if key.endswith("_daily_token_budget"):
        return DailyTokenBudget
    return Seconds if key.endswith("_seconds") else TokenBudget


# one optional field per bank-overridable setting (config.BANK_OVERRIDABLE), unknown keys refused; null removes one
if TYPE_CHECKING:  # statically a model; its fields are built from configuration at import
    BankConfigOverrides = BaseModel
else:
    BankConfigOverrides = create_model(
        "BankConfigOverrides",
        __config__=ConfigDict(extra="forbid", strict=True),
        **{key: (_override_type(key, kind) | None, None) for key, kind in BANK_OVERRIDABLE.items()},
    )


class BankConfigUpdate(RequestBody):
    """``PATCH /config``: ``updates`` maps a bank-overridable setting to its value (null removes the override)."""

    updates: BankConfigOverrides
