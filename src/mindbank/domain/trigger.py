"""Mental-model trigger settings: every field of the reference's ``MentalModelTrigger``, validated once here.

Spec: "Trigger Settings" table. The API schema and the service both use :class:`MentalModelTrigger`, so the same
rules hold whether a model is created over HTTP or in-process.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mindbank.domain.records import FactType
from mindbank.domain.tags import TagsMatch


class MentalModelTrigger(BaseModel):
    """When and how a mental model refreshes, and what its refresh reads. Unknown keys are rejected."""

    model_config = ConfigDict(extra="forbid")

    budget: Literal["low", "mid", "high"] | None = None
    mode: Literal["full", "delta"] = "full"
    refresh_after_consolidation: bool = False
    refresh_cron: str | None = None
    full_refresh_cron: str | None = None
    min_refresh_interval_seconds: int | None = Field(default=None, ge=0)
    fact_types: list[FactType] | None = None
    exclude_mental_models: bool = False
    exclude_mental_model_ids: list[str] | None = None
    tags_match: TagsMatch | None = None
    tag_groups: list[dict[str, Any]] | None = None
    include_chunks: bool | None = None
    recall_max_tokens: int | None = Field(default=None, ge=1)
    recall_chunks_max_tokens: int | None = Field(default=None, ge=1)
    reflect_search_observations_max_tokens: int | None = Field(default=None, ge=1)
    reflect_search_observations_include_entities: bool | None = None
    response_schema: dict[str, Any] | None = None
    keep_trace: bool = False

    @field_validator("fact_types")
    @classmethod
    def _fact_types_not_empty(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("fact_types must not be an empty list (use null for all types)")
        return value

    @field_validator("refresh_cron", "full_refresh_cron")
    @classmethod
    def _cron_shape(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if len(value.split()) != 5:
            raise ValueError("must be a 5-field UTC cron expression such as '0 3 * * *'")
        return " ".join(value.split())

    @model_validator(mode="after")
    def _exclusive_triggers(self) -> MentalModelTrigger:
        if self.refresh_after_consolidation and self.refresh_cron:
            raise ValueError("refresh_after_consolidation and refresh_cron are mutually exclusive")
        return self


def default_trigger() -> dict[str, Any]:
    """The stored form of a trigger with every field at its default."""
    return MentalModelTrigger().model_dump()
