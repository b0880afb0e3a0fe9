"""Wire items to domain values: one adapter from a retain item as HTTP or MCP receive it to a :class:`RetainItem`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Literal

from mindbank.domain.records import RetainItem
from mindbank.domain.timeutil import parse_timestamp


def retain_item(
    content: str,
    *,
    timestamp: datetime | str | None = None,
    context: str | None = None,
    metadata: Mapping[str, str] | None = None,
    document_id: str | None = None,
    tags: Sequence[str] | None = None,
    extra_tags: Sequence[str] | None = None,
    update_mode: Literal["replace", "append"] | None = None,
) -> RetainItem:
    """A :class:`RetainItem` from wire fields. ``timestamp``: ISO-8601 text, a datetime, or null / ``"unset"`` (the
    reference's spelling of "no time": the memory then has no event time and takes its retain time as mention
    time). ``extra_tags``: the request's ``document_tags``, appended to the item's own. Raises ``ValueError`` for an
    unreadable timestamp."""
    when = None if timestamp is None or timestamp == "unset" else parse_timestamp(timestamp)
    return RetainItem(
        content=content,
        timestamp=when,
        context=context,
        metadata=dict(metadata or {}),
        document_id=document_id,
        tags=(*(tags or ()), *(extra_tags or ())),
        update_mode=update_mode or "replace",
    )
