"""What every MCP tool family shares: argument types (their descriptions are what an agent reads), the tool-layer
error, shorthand folding, and :class:`ToolFamily`, the base a family of tools subclasses."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ValidationError

from mindbank.domain import fields
from mindbank.domain.limits import NO_CONTROL_PATTERN
from mindbank.domain.tags import TagsMatch
from mindbank.domain.trigger import MentalModelTriggerPatch
from mindbank.service.facade import MindBank

Detail = Literal["metadata", "content", "full"]
MAX_FILTER_TAGS = 10  # tags of a listing's filter, as the HTTP listings take them in a query string
BankId = Annotated[fields.BankId, Field(description="Id of the memory bank to use.")]
ModelId = Annotated[
    str, Field(description="Id of the mental model.", min_length=1, max_length=128, pattern=NO_CONTROL_PATTERN)
]
TagList = Annotated[fields.TagList | None, Field(description="Tags (e.g. 'user:alice').")]
FilterTags = Annotated[
    list[fields.FilterTag] | None,
    Field(description="Only items carrying these tags (per tags_match).", max_length=MAX_FILTER_TAGS),
]
Offset = Annotated[fields.Offset, Field(description="How many items to skip.")]
# The trigger input mirrors every field of the HTTP MentalModelTrigger, all optional, unknown keys rejected; tag_groups
# are plain objects (recursive schemas break some providers) and are validated like HTTP ones after the merge.
TriggerInput = Annotated[
    MentalModelTriggerPatch | None,
    Field(description="Trigger settings (same fields as the HTTP API's trigger); only the given fields are set."),
]
ShorthandTagsMatch = Annotated[
    TagsMatch | None, Field(description="Shorthand for trigger.tags_match (how the model's tags filter its memories).")
]
ShorthandAfterConsolidation = Annotated[
    bool | None, Field(description="Shorthand for trigger.refresh_after_consolidation.")
]


class ToolInputError(ValueError):
    """A tool argument breaks a rule that only the tool layer knows (e.g. a shorthand contradicting the trigger)."""


def with_shorthands(
    trigger: dict[str, Any] | None, tags_match: str | None, refresh_after_consolidation: bool | None
) -> dict[str, Any] | None:
    """Fold the legacy shorthand arguments into the trigger dict; a shorthand contradicting the same trigger field
    is an error (the reference's rule), an agreeing one is harmless."""
    merged = dict(trigger or {})
    for key, value in (("tags_match", tags_match), ("refresh_after_consolidation", refresh_after_consolidation)):
        if value is None:
            continue
        if merged.get(key) is not None and merged[key] != value:
            raise ToolInputError(f"{key} is given both as an argument ({value!r}) and in trigger ({merged[key]!r})")
        merged[key] = value
    return merged if trigger is not None or merged else None


def validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        parts.append(f"{where}: {err['msg']}" if where else err["msg"])
    return "; ".join(parts)


def jsonable(value: Any) -> dict[str, Any]:
    """A tool result as a dict: pydantic models and dataclasses are dumped, dicts pass through."""
    if isinstance(value, dict):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")  # type: ignore[no-any-return]  # a pydantic model dumps to a dict
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return {"result": value}


class ToolFamily:
    """A family of MCP tools over a :class:`MindBank`: ``TOOLS`` names its tool methods in listing order. Every tool
    returns a JSON-able dict and raises domain errors (``wrap.as_tool`` turns them into MCP tool errors). A new family
    subclasses this in its own module and is added to ``FAMILIES`` in ``tools/__init__.py``."""

    TOOLS: ClassVar[tuple[str, ...]] = ()
    READS: ClassVar[frozenset[str]] = frozenset()
    """The tools that write nothing (open to read-only API keys); every other tool is a write."""

    def __init__(self, mb: MindBank) -> None:
        self.mb = mb
