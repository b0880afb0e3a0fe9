"""Mental-model trigger settings: every field of the reference's ``MentalModelTrigger``, validated once here.

Spec: "Trigger Settings" table. The API schema and the service both use :class:`MentalModelTrigger`, so the same
rules hold whether a model is created over HTTP or in-process.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from mindbank.domain.fields import IdRef, Seconds, TagGroups, TokenBudget, nullable_optionals
from mindbank.domain.limits import MAX_DAILY_TOKEN_BUDGET
from mindbank.domain.records import FactType
from mindbank.domain.tags import TagsMatch

Cron = Annotated[str, Field(max_length=256)]


def not_empty_list(message: str) -> AfterValidator:
    """The check of an optional list field where an empty list means nothing and is refused (``ValueError`` with
    ``message``); ``None`` passes."""

    def check(value: list[Any] | None) -> list[Any] | None:
        if value is not None and not value:
            raise ValueError(message)
        return value

    return AfterValidator(check)


def _schema_valid(value: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if value is None else validate_response_schema(value)


# a reflect's (or a refresh's) structured-output JSON schema: checked by validate_response_schema
ResponseSchema = Annotated[dict[str, Any] | None, AfterValidator(_schema_valid)]
NO_FACT_TYPES = "must not be an empty list (use null for all types)"


class MentalModelTrigger(BaseModel):
    """When and how a mental model refreshes, and what its refresh reads. Unknown keys are rejected."""

    # strict: JSON types as the schema says (no "1" for 1, no 0 for false); null means the default
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=nullable_optionals)

    budget: Literal["low", "mid", "high"] | None = None
    mode: Literal["full", "delta"] = "full"
    refresh_after_consolidation: bool = False
    refresh_cron: Cron | None = None
    full_refresh_cron: Cron | None = None
    min_refresh_interval_seconds: Seconds | None = None
    fact_types: Annotated[list[FactType] | None, not_empty_list(f"fact_types {NO_FACT_TYPES}")] = Field(
        default=None, json_schema_extra={"minItems": 1}
    )
    exclude_mental_models: bool = False
    exclude_mental_model_ids: list[IdRef] | None = None
    tags_match: TagsMatch | None = None
    tag_groups: TagGroups | None = None
    include_chunks: bool | None = None
    recall_max_tokens: TokenBudget | None = None
    recall_chunks_max_tokens: TokenBudget | None = None
    reflect_search_observations_max_tokens: TokenBudget | None = None
    reflect_search_observations_include_entities: bool | None = None
    response_schema: ResponseSchema = None
    keep_trace: bool = False
    # beyond the reference (automatic spend is bounded): LLM tokens this model's refreshes may spend per UTC day
    # before automatic refreshes are refused (overrides the bank's and the environment's
    # refresh_model_daily_token_budget)
    daily_token_budget: int | None = Field(default=None, ge=0, le=MAX_DAILY_TOKEN_BUDGET)
    # beyond the reference (curation, docs/curation.md): every refresh writes a draft that a person approves or
    # rejects; the published content, last_refreshed_at and staleness change only on approval
    review: bool = False

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: Any) -> Any:
        # clients send null for fields they were not given; null and absent both mean the default
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data

    @field_validator("refresh_cron", "full_refresh_cron")
    @classmethod
    def _cron_valid(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        return validate_cron(value)

    @model_validator(mode="after")
    def _exclusive_triggers(self) -> MentalModelTrigger:
        if self.refresh_after_consolidation and self.refresh_cron:
            raise ValueError("refresh_after_consolidation and refresh_cron are mutually exclusive")
        return self


JSON_TYPES = ("string", "number", "integer", "boolean", "array", "object")


def validate_cron(expression: str) -> str:
    """A 5-field UTC cron expression, whitespace-normalised. Raises ``ValueError`` if croniter rejects it."""
    from croniter import croniter

    normalized = " ".join(expression.split())
    if len(normalized.split()) != 5 or not croniter.is_valid(normalized):
        raise ValueError(f"{expression!r} is not a 5-field UTC cron expression such as '0 3 * * *'")
    return normalized


def validate_response_schema(schema: object, *, path: str = "response_schema") -> dict[str, Any]:
    """Spec "Structured Output": an object schema with a non-empty ``properties`` map whose property types are among
    string/number/integer/boolean/array/object (nested objects and array items checked too); ``required`` names
    known properties. Raises ``ValueError`` naming the path."""
    if not isinstance(schema, dict):
        raise ValueError(f"{path} must be a JSON Schema object")
    if schema.get("type", "object") != "object":
        raise ValueError(f"{path}.type must be 'object'")
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        raise ValueError(f"{path}.properties must be a non-empty object")
    for name, prop in properties.items():
        _validate_property(prop, f"{path}.properties.{name}")
    required = schema.get("required", [])
    if not isinstance(required, list) or any(r not in properties for r in required):
        raise ValueError(f"{path}.required must list only properties defined in {path}.properties")
    return schema


def _validate_property(prop: object, path: str) -> None:
    if not isinstance(prop, dict):
        raise ValueError(f"{path} must be an object")
    kind = prop.get("type")
    if kind is not None and kind not in JSON_TYPES:
        raise ValueError(f"{path}.type must be one of {', '.join(JSON_TYPES)}")
    if kind == "object" and "properties" in prop:
        validate_response_schema(prop, path=path)
    if kind == "array" and "items" in prop:
        _validate_property(prop["items"], f"{path}.items")


def merge_trigger(stored: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """PATCH semantics (reference ``_merge_trigger``): supplied keys overwrite the stored trigger; supplying
    ``refresh_cron`` drops an unstated ``refresh_after_consolidation`` and vice versa. The result is re-validated,
    so both truthy raises ``ValueError`` (pydantic ``ValidationError``)."""
    merged = {**stored, **patch}
    if "refresh_cron" in patch and "refresh_after_consolidation" not in patch:
        merged["refresh_after_consolidation"] = False
    if "refresh_after_consolidation" in patch and "refresh_cron" not in patch:
        merged["refresh_cron"] = None
    return MentalModelTrigger.model_validate(merged).model_dump()


def _optional(annotation: Any) -> Any:
    """``annotation | None``, built at run time from a field's annotation (a type object, not a static type)."""
    return annotation | None


# PATCH body for a trigger: every field optional, unknown keys rejected; the merged result is validated in full.
MentalModelTriggerPatch = create_model(  # type: ignore[call-overload]  # field definitions built from a dict
    "MentalModelTriggerPatch",
    __config__=ConfigDict(extra="forbid", strict=True),
    **{
        # a field's limits live in its annotation (Annotated inside the union), so they carry over to the patch
        name: (_optional(field.annotation), None)
        for name, field in MentalModelTrigger.model_fields.items()
    },
)


def default_trigger() -> dict[str, Any]:
    """The stored form of a trigger with every field at its default."""
    return MentalModelTrigger().model_dump()
