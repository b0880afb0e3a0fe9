"""The limits of :mod:`mindbank.domain.limits` as pydantic annotated types, for request bodies, query parameters
and MCP tool signatures.

Each type validates with the same ``check_*`` function the service uses for in-process callers, against the limits
that apply when the value is validated (``limits.current_limits()``: the request's), and publishes those limits in
its JSON Schema (``maxLength``, ``maxItems``, ``maximum``, ``pattern``), so the OpenAPI document and the MCP tool
schemas say what the server enforces. A violation is a pydantic error whose ``type`` names the rule
(``limit_exceeded``, ``string_nul``, ``blank_string``...) and whose ``loc`` names the field.

Use them for every new field: ``Text`` (any free text), ``NotBlankText`` (free text that must say something),
``QueryText`` (a query), ``ContentText`` (retained content), ``Tag`` / ``TagList``, ``DocumentId``, ``BankId``,
``Metadata``, ``TokenBudget``, ``Offset``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PlainSerializer,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from mindbank.domain import limits as L
from mindbank.domain.tags import TagsMatch, validate_tag_groups
from mindbank.errors import InvalidInputError

Check = Callable[[Any, L.Limits], object]
Schema = Callable[[L.Limits], dict[str, Any]]


def _error_type(message: str) -> str:
    """The pydantic error type of a ``check_*`` message (clients may branch on it; the message says the rest)."""
    if message.startswith("must match"):
        return "string_pattern_mismatch"
    if "control characters" in message:
        return "string_control_character"
    if "NUL" in message:
        return "string_nul"
    if "blank" in message:
        return "blank_string"
    return "limit_exceeded"


class Rule:
    """Annotated-type metadata: run ``check(value, limits)`` after the base type validated, and merge
    ``schema(limits)`` into the JSON Schema. ``check`` raises :class:`InvalidInputError`; its message becomes the
    pydantic error message (the field is named by pydantic's ``loc``)."""

    def __init__(self, check: Check, schema: Schema, *, keys_rule: bool = False) -> None:
        self.check = check
        self.schema = schema
        # pydantic publishes a dict's key constraints as patternProperties, which only constrains the values of
        # matching keys; keys_rule publishes them as propertyNames (what the validation does) instead
        self.keys_rule = keys_rule

    def _validate(self, value: Any) -> Any:
        try:
            self.check(value, L.current_limits())
        except InvalidInputError as exc:
            raise PydanticCustomError(_error_type(exc.message), exc.message) from None
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self._validate, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        result = handler(schema)
        target = handler.resolve_ref_schema(result)
        target.update(self.schema(L.current_limits()))
        patterns = target.pop("patternProperties", None) if self.keys_rule else None
        if patterns:
            (pattern, values), *_ = patterns.items()
            target["propertyNames"] = {**target.get("propertyNames", {}), "pattern": pattern}
            target["additionalProperties"] = values
        return result


def _text(max_of: Callable[[L.Limits], int], *, blank_ok: bool) -> Rule:
    pattern = L.NO_NUL_PATTERN if blank_ok else L.NOT_BLANK_PATTERN
    return Rule(
        lambda v, lim: L.check_text(v, "value", max_of(lim), blank_ok=blank_ok),
        lambda lim: {"maxLength": max_of(lim), "pattern": pattern, **({} if blank_ok else {"minLength": 1})},
    )


def _identifier(max_of: Callable[[L.Limits], int]) -> Rule:
    return Rule(
        lambda v, lim: L.check_identifier(v, "value", max_of(lim)),
        lambda lim: {"maxLength": max_of(lim), "pattern": L.NO_CONTROL_PATTERN},
    )


Text = Annotated[str, _text(lambda lim: lim.max_text_chars, blank_ok=True)]
"""Free text (context, mission, a metadata value...): no NUL, at most ``max_text_chars``."""
NotBlankText = Annotated[str, _text(lambda lim: lim.max_text_chars, blank_ok=False)]
"""Free text that must hold more than whitespace, at most ``max_text_chars``."""
QueryText = Annotated[str, _text(lambda lim: lim.max_query_chars, blank_ok=False)]
"""A recall / reflect query or a source query: not blank, at most ``max_query_chars``."""
ContentText = Annotated[str, _text(lambda lim: lim.max_content_chars, blank_ok=False)]
"""Retained content or an edited fact: not blank, at most ``max_content_chars``."""
NameText = Annotated[str, _text(lambda lim: L.MAX_NAME_CHARS, blank_ok=False)]
"""A display name: not blank, at most 256 characters."""
Tag = Annotated[str, _identifier(lambda lim: lim.max_tag_chars)]
"""One tag: at most ``max_tag_chars``, no control characters."""
FilterTag = Annotated[str, Field(min_length=1), _identifier(lambda lim: lim.max_tag_chars)]
"""A tag in a query-string filter: as :data:`Tag`, and not empty (``?tags=`` names no tag: 422, not "no filter")."""
TagList = Annotated[
    list[Tag],
    Rule(lambda v, lim: L.check_tags(v, lim), lambda lim: {"maxItems": lim.max_tags_per_item}),
]
"""Tags: at most ``max_tags_per_item`` of them."""
DocumentId = Annotated[str, _identifier(lambda lim: lim.max_document_id_chars)]
"""A document id: at most ``max_document_id_chars``, no control characters."""
MetadataKey = Annotated[str, _identifier(lambda lim: lim.max_tag_chars)]
Metadata = Annotated[
    dict[MetadataKey, Text],
    Rule(
        lambda v, lim: (
            None
            if len(v) <= lim.max_metadata_entries
            else _raise(f"must have at most {lim.max_metadata_entries} keys (got {len(v)})")
        ),
        lambda lim: {"maxProperties": lim.max_metadata_entries},
        keys_rule=True,
    ),
]
"""String-to-string metadata: at most ``max_metadata_entries`` keys."""
BankId = Annotated[
    str,
    Rule(
        lambda v, lim: L.check_bank_id(v, lim),
        lambda lim: {"minLength": 1, "maxLength": lim.max_bank_id_chars, "pattern": lim.bank_id_pattern},
    ),
]
"""A bank id: ``bank_id_pattern``, at most ``max_bank_id_chars``."""
TokenBudget = Annotated[
    int,
    Rule(
        lambda v, lim: L.check_token_budget(v, "value", lim),
        lambda lim: {"minimum": 1, "maximum": lim.max_token_budget},
    ),
]
"""A token budget: 1..``max_token_budget``."""
DailyTokenBudget = Annotated[int, Field(ge=0, le=L.MAX_DAILY_TOKEN_BUDGET)]
"""LLM tokens a model's or a bank's automatic refreshes may spend per UTC day (0 refuses every automatic refresh)."""
Offset = Annotated[
    int,
    Rule(lambda v, lim: L.check_offset(v, "value", lim), lambda lim: {"minimum": 0, "maximum": lim.max_offset}),
]
"""A page offset: 0..``max_offset``."""


RETAIN_ITEMS = Rule(
    lambda v, lim: (
        None
        if len(v) <= lim.max_items_per_request
        else _raise(f"must have at most {lim.max_items_per_request} items (got {len(v)}); split the request")
    ),
    lambda lim: {"maxItems": lim.max_items_per_request},
)
"""Annotation of a retain request's item list: at most ``max_items_per_request``."""
ModelId = Annotated[str, Field(max_length=L.MAX_MODEL_ID_CHARS, pattern=L.MODEL_ID_PATTERN.pattern)]
"""A mental model id: ``^[a-z0-9][a-z0-9-]*$``, at most 128 characters."""
IdRef = Annotated[str, _identifier(lambda lim: L.MAX_MODEL_ID_CHARS)]
"""A reference to an id (a model, an operation...): at most 128 characters, no control characters."""
Seconds = Annotated[int, Field(ge=0, le=L.MAX_INTERVAL_SECONDS)]
"""A duration in seconds: 0 to ten years."""
Int64 = Annotated[int, Field(ge=L.INT64_MIN, le=L.INT64_MAX)]
"""An integer a 64-bit column holds."""
PositiveId = Annotated[int, Field(ge=1, le=2**53 - 1)]
"""A row number: 1 to 2^53 - 1 (the integers every JSON reader holds exactly)."""


def _iso_only(value: Any) -> Any:
    if isinstance(value, bool | int | float):
        raise PydanticCustomError("datetime_type", "Input should be an ISO-8601 date-time string")
    return value


IsoTime = Annotated[datetime, BeforeValidator(_iso_only), Field(strict=False)]
"""A date-time sent as ISO-8601 text (a strict model still parses it; a bare number is refused)."""
_NUMBER_TEXT = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")


def _iso_text_only(value: Any) -> Any:
    if isinstance(value, str) and _NUMBER_TEXT.match(value):
        raise PydanticCustomError("datetime_type", "Input should be an ISO-8601 date-time, not a number")
    return _iso_only(value)


QueryTime = Annotated[datetime, BeforeValidator(_iso_text_only)]
"""A date-time in a URL query: ISO-8601 text (every query value is text, so a number's text is refused too, where
pydantic would read ``0.5`` as seconds since the epoch)."""
QueryParamText = Annotated[str, Field(max_length=1000), _text(lambda lim: 1000, blank_ok=True)]
"""Free text in a URL query (a filter): at most 1,000 characters, so a URL stays within the server's limit."""


def nullable_optionals(schema: dict[str, Any]) -> None:
    """JSON Schema hook: an optional field also takes ``null`` (it means the default), so say so."""
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        if name in required or prop.get("type") == "null" or _allows_null(prop):
            continue
        kept = {k: prop.pop(k) for k in ("title", "description", "default", "deprecated") if k in prop}
        schema["properties"][name] = {"anyOf": [prop, {"type": "null"}], **kept}


def _allows_null(prop: dict[str, Any]) -> bool:
    return any(option.get("type") == "null" for option in prop.get("anyOf", ()))


def _raise(message: str) -> None:
    raise InvalidInputError("value", message)


# ---------------------------------------------------------------- tag groups (the reference's TagGroup* schemas)
class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)


class TagGroupLeaf(_Group):
    """A leaf: rows whose tags match ``tags`` in ``match`` mode (``resolve: fuzzy`` is not supported)."""

    tags: TagList
    match: TagsMatch = "any_strict"
    resolve: Literal["exact"] = "exact"


class TagGroupAnd(_Group):
    """Every child group matches."""

    and_: list[TagGroup] = Field(alias="and", min_length=1)


class TagGroupOr(_Group):
    """At least one child group matches."""

    or_: list[TagGroup] = Field(alias="or", min_length=1)


class TagGroupNot(_Group):
    """The child group does not match."""

    not_: TagGroup = Field(alias="not")


TagGroup = TagGroupLeaf | TagGroupAnd | TagGroupOr | TagGroupNot
for _model in (TagGroupAnd, TagGroupOr, TagGroupNot):
    _model.model_rebuild()


def _canonical_groups(groups: list[TagGroup]) -> list[dict[str, Any]]:
    return validate_tag_groups([g.model_dump(by_alias=True) for g in groups])


if TYPE_CHECKING:  # what a validated value is: the canonical dicts
    TagGroups = list[dict[str, Any]]
else:
    TagGroups = Annotated[
        list[TagGroup],
        AfterValidator(_canonical_groups),
        PlainSerializer(lambda groups: groups, return_type=list[dict[str, Any]]),
    ]
"""A list of tag groups (AND-ed), typed for the schema and kept as canonical dicts (``domain.tags``) once valid."""
