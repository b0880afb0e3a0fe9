"""Bank templates (``GET /export``, ``POST /import``): a bank's setup — profile, config overrides, mental-model
definitions and directives — as the reference's ``BankTemplateManifest`` (``version`` "1"), without any data.

The ``bank`` section uses the reference's field names. mindbank keeps those it has: ``reflect_mission`` (the bank's
mission), ``disposition_*`` (1–5), the refresh and recall overrides it shares with the reference, plus its own
``refresh_relevance_threshold``. The reference's other settings (retain, entity, consolidation tuning...) describe
machinery mindbank does not have: they are accepted and reported back as ignored, never silently dropped; a key
neither side knows is refused (a typo).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mindbank.domain import fields
from mindbank.domain.limits import DEFAULT_MAX_TOKENS, MaxTokens
from mindbank.domain.resource_checks import (
    INT32_MAX,
    INT32_MIN,
    MAX_DIRECTIVE_CHARS,
    MAX_DIRECTIVE_NAME_CHARS,
    MAX_DIRECTIVES,
)
from mindbank.domain.trigger import MentalModelTrigger

TEMPLATE_VERSION = "1"
MAX_TEMPLATE_MODELS = 1000  # each queues a first refresh
# bank-config overrides a template carries, with the type each must have (mindbank's bank-overridable settings)
TEMPLATE_OVERRIDES: dict[str, type] = {
    "mental_model_min_refresh_interval_seconds": int,
    "recall_include_chunks": bool,
    "recall_max_tokens": int,
    "recall_chunks_max_tokens": int,
    "refresh_relevance_threshold": float,
}
DISPOSITION_TRAITS = ("skepticism", "literalism", "empathy")
# the reference's BankTemplateConfig fields mindbank has no machinery for (accepted, reported as ignored)
REFERENCE_ONLY_FIELDS = frozenset(
    """retain_mission retain_extraction_mode retain_custom_instructions retain_chunk_size retain_structured_chunk_size
    enable_observations observations_mission enable_text_search enable_temporal_retrieval enable_graph_retrieval
    enable_reranking reflect_use_decision_model mental_model_refresh_use_decision_model
    mental_model_delta_use_decision_model entity_labels entities_allow_free_form retain_default_strategy
    retain_strategies retain_chunk_batch_size retain_max_attachments_per_chunk mcp_enabled_tools
    consolidation_llm_batch_size consolidation_source_facts_max_tokens
    consolidation_source_facts_max_tokens_per_observation max_observations_per_scope observation_scope_limits
    default_observation_scopes consolidation_strategies reflect_source_facts_max_tokens knowledge_page_default_trigger
    reflect_default_options llm_gemini_safety_settings recall_budget_function recall_budget_fixed_low
    recall_budget_fixed_mid recall_budget_fixed_high recall_budget_adaptive_low recall_budget_adaptive_mid
    recall_budget_adaptive_high recall_budget_min recall_budget_max audit_log_enabled store_document_text
    enable_auto_consolidation consolidation_use_decision_model consolidation_max_memories_per_round
    consolidation_llm_parallelism recall_prefer_observations memory_defense""".split()
)
Trait = Annotated[int, Field(ge=1, le=5)]


class TemplateBank(BaseModel):
    """The ``bank`` section (``BankTemplateConfig``): only the given fields are applied."""

    model_config = ConfigDict(extra="allow")

    reflect_mission: str | None = None
    disposition_skepticism: Trait | None = None
    disposition_literalism: Trait | None = None
    disposition_empathy: Trait | None = None
    mental_model_min_refresh_interval_seconds: Annotated[int, Field(ge=0)] | None = None
    recall_include_chunks: bool | None = None
    recall_max_tokens: Annotated[int, Field(ge=1)] | None = None
    recall_chunks_max_tokens: Annotated[int, Field(ge=1)] | None = None
    refresh_relevance_threshold: Annotated[float, Field(ge=0, le=1)] | None = None

    def ignored(self) -> list[str]:
        """The reference's fields this template sets that mindbank has no use for, sorted. Raises ``ValueError``
        naming a field neither knows."""
        extra = sorted(self.model_extra or {})
        unknown = [k for k in extra if k not in REFERENCE_ONLY_FIELDS]
        if unknown:
            raise ValueError(f"unknown bank setting(s): {', '.join(unknown)}")
        return extra

    def overrides(self) -> dict[str, Any]:
        """The bank-config overrides the section sets."""
        return {k: getattr(self, k) for k in TEMPLATE_OVERRIDES if getattr(self, k) is not None}

    def disposition(self, current: dict[str, int] | None) -> dict[str, int] | None:
        """The disposition after applying the section's traits over ``current`` (None: no trait given)."""
        given = {t: getattr(self, f"disposition_{t}") for t in DISPOSITION_TRAITS}
        if all(v is None for v in given.values()):
            return None
        base = {t: 3 for t in DISPOSITION_TRAITS} | (current or {})
        return base | {t: v for t, v in given.items() if v is not None}


class TemplateMentalModel(BaseModel):
    """A mental-model definition (``BankTemplateMentalModel``): matched by ``id`` on import."""

    model_config = ConfigDict(extra="forbid")

    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="lowercase letters, digits, hyphens")]
    name: fields.NameText
    source_query: fields.QueryText
    tags: fields.TagList = Field(default_factory=list)
    max_tokens: MaxTokens = DEFAULT_MAX_TOKENS
    trigger: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name", "source_query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @field_validator("trigger")
    @classmethod
    def _valid_trigger(cls, value: dict[str, Any]) -> dict[str, Any]:
        return MentalModelTrigger.model_validate(value).model_dump()


class TemplateDirective(BaseModel):
    """A directive definition (``BankTemplateDirective``): matched by ``name`` on import."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(min_length=1, max_length=MAX_DIRECTIVE_NAME_CHARS)]
    content: Annotated[str, Field(min_length=1, max_length=MAX_DIRECTIVE_CHARS)]
    priority: Annotated[int, Field(ge=INT32_MIN, le=INT32_MAX)] = 0
    is_active: bool = True
    tags: fields.TagList = Field(default_factory=list)

    @field_validator("name", "content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


class BankTemplate(BaseModel):
    """``BankTemplateManifest``: a section left out (null) leaves that part of the bank unchanged."""

    model_config = ConfigDict(extra="forbid")

    version: Literal["1"]
    bank: TemplateBank | None = None
    # a template sets a bank up: as many models as a bank is meant to hold, no more directives than a bank holds
    mental_models: Annotated[list[TemplateMentalModel], Field(max_length=MAX_TEMPLATE_MODELS)] | None = None
    directives: Annotated[list[TemplateDirective], Field(max_length=MAX_DIRECTIVES)] | None = None

    @field_validator("mental_models")
    @classmethod
    def _distinct_ids(cls, value: list[TemplateMentalModel] | None) -> list[TemplateMentalModel] | None:
        ids = [m.id for m in value or ()]
        if len(set(ids)) != len(ids):
            raise ValueError("mental model ids must be distinct")
        return value

    @field_validator("directives")
    @classmethod
    def _distinct_names(cls, value: list[TemplateDirective] | None) -> list[TemplateDirective] | None:
        names = [d.name for d in value or ()]
        if len(set(names)) != len(names):
            raise ValueError("directive names must be distinct")
        return value
