"""Request bodies of the knowledge-base routes (``api/routes/knowledge_base.py``), with the reference's field names:
``CreateFolderRequest``, ``CreatePageRequest`` and ``UpdateNodeRequest``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mindbank.api.schemas import RequestBody
from mindbank.domain.knowledge import MAX_NAME_LENGTH
from mindbank.domain.limits import MaxTokens
from mindbank.domain.trigger import MentalModelTriggerPatch


def _not_blank(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError("must not be blank")
    return value


class CreateFolderRequest(RequestBody):
    """``POST /knowledge-base/folders``: a folder at the root, or under ``parent_id`` (a folder)."""

    name: str = Field(max_length=MAX_NAME_LENGTH)
    parent_id: str | None = None

    _name_not_blank = field_validator("name")(_not_blank)


class CreatePageRequest(RequestBody):
    """``POST /knowledge-base/pages``: a page (a mental model in the tree). ``tags`` scope the memories it is built
    from; ``trigger`` is merged over the page default (delta mode, observations, refreshed after consolidation)."""

    name: str = Field(max_length=MAX_NAME_LENGTH)
    source_query: str
    parent_id: str | None = None
    tags: list[str] | None = None
    max_tokens: MaxTokens | None = None
    trigger: MentalModelTriggerPatch | None = None

    _not_blank = field_validator("name", "source_query")(_not_blank)


class UpdateNodeRequest(BaseModel):
    """``PATCH /knowledge-base/nodes/{node_id}``: each field applies only when present. ``parent_id`` present and
    null moves the node to the root (so nulls are NOT dropped here); ``source_query``, ``tags``, ``max_tokens`` and
    ``trigger`` (merged over the stored one) are pages only."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, max_length=MAX_NAME_LENGTH)
    parent_id: str | None = None
    source_query: str | None = None
    tags: list[str] | None = None
    max_tokens: MaxTokens | None = None
    trigger: MentalModelTriggerPatch | None = None

    _not_blank = field_validator("name", "source_query")(_not_blank)
