"""``POST /reflect``: answer a question through the memory hierarchy (reference facts §3 "Reflect", §5).

Request and response follow the reference's ``ReflectRequest`` / ``ReflectResponse`` (wire sample 24). A blank
query, ``tags`` together with ``tag_groups``, an invalid ``response_schema`` or tag group answer 422. With no LLM
configured the answer is the extractive one (cited quotations, labelled as such) and ``usage`` is zero.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter
from pydantic import Field, model_validator

from mindbank.api.access import READ
from mindbank.api.deps import Bank, same_named
from mindbank.api.openapi import errors
from mindbank.api.schemas import RequestBody
from mindbank.domain.fields import IdRef, QueryText, TagGroups, TagList, Text, TokenBudget
from mindbank.domain.records import FactType
from mindbank.domain.tags import TagsMatch
from mindbank.domain.trigger import NO_FACT_TYPES, ResponseSchema, not_empty_list

router = APIRouter(prefix="/v1/default/banks/{bank_id}", tags=["reflect"])


class ToolCallsInclude(RequestBody):
    """``include.tool_calls``: ``{}`` for the full trace, ``{"output": false}`` for inputs only."""

    output: bool = True


class FactsInclude(RequestBody):
    """``include.facts``: ``{}`` (the reference's ``FactsIncludeOptions`` has no field)."""


class ReflectInclude(RequestBody):
    """``include``: ``facts: {}`` adds ``based_on``; ``tool_calls`` adds ``trace``. Null or absent: off."""

    facts: FactsInclude | None = None
    tool_calls: ToolCallsInclude | None = None


class ReflectRequest(RequestBody):
    """``ReflectRequest`` (every reference field; ``reflect_search_observations_include_entities`` is accepted and
    has no effect: mindbank has no entities)."""

    query: QueryText
    budget: Literal["low", "mid", "high"] = "low"
    context: Text | None = None  # deprecated by the reference: appended to the query
    max_tokens: TokenBudget = 4096
    include: ReflectInclude = Field(default_factory=ReflectInclude)
    response_schema: ResponseSchema = None
    tags: TagList | None = None
    tags_match: TagsMatch = "any"
    tag_groups: TagGroups | None = None
    apply_all_directives: bool = False
    fact_types: Annotated[list[FactType] | None, not_empty_list(NO_FACT_TYPES)] = Field(
        default=None, json_schema_extra={"minItems": 1}
    )
    exclude_mental_models: bool = False
    exclude_mental_model_ids: list[IdRef] | None = None
    reflect_search_observations_max_tokens: TokenBudget | None = None
    reflect_search_observations_include_entities: bool | None = None

    @model_validator(mode="after")
    def _tags_or_groups(self) -> ReflectRequest:
        if self.tags and self.tag_groups:
            raise ValueError("tags and tag_groups are mutually exclusive")
        return self


@router.post("/reflect", openapi_extra=READ, responses=errors(404, 502, 503))
def reflect(bank_id: str, body: ReflectRequest, mb: Bank) -> dict[str, Any]:
    """``ReflectResponse``: ``text``, ``based_on`` (with ``include.facts``), ``structured_output`` /
    ``structured_output_error`` (with ``response_schema``), ``usage``, ``trace`` (with ``include.tool_calls``)."""
    query = body.query if not body.context else f"{body.query}\n\n{body.context}"
    tool_calls = body.include.tool_calls
    return mb.reflect(
        bank_id,
        query,
        include_facts=body.include.facts is not None,
        include_tool_calls=tool_calls is not None,
        tool_outputs=tool_calls.output if tool_calls is not None else True,
        exclude_mental_model_ids=body.exclude_mental_model_ids or (),
        observations_max_tokens=body.reflect_search_observations_max_tokens,
        **same_named(
            body,
            "budget",
            "max_tokens",
            "response_schema",
            "tags",
            "tags_match",
            "tag_groups",
            "fact_types",
            "exclude_mental_models",
            "apply_all_directives",
        ),
    )
