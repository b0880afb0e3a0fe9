"""Which memories a mental model reads and watches: scope resolution from its tags and trigger.

Spec: "Tags and Visibility" and the trigger table (tags_match, fact_types). A tagged model defaults to
``all_strict``; an untagged one to ``any`` (no filter). Staleness uses the strict variant of the mode, so an
untagged write never marks a tagged model stale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mindbank.domain.records import FactType
from mindbank.domain.tags import TagsMatch, normalize_tags, strict


def refresh_tags_match(tags: Sequence[str], trigger: Mapping[str, Any]) -> TagsMatch:
    """The match mode a refresh uses: ``trigger.tags_match``, else all_strict for tagged, any for untagged."""
    explicit = trigger.get("tags_match")
    if explicit:
        return explicit  # type: ignore[no-any-return]
    return "all_strict" if tags else "any"


def refresh_fact_types(trigger: Mapping[str, Any]) -> tuple[FactType, ...] | None:
    """``trigger.fact_types`` as a tuple, or None (all three types)."""
    types = trigger.get("fact_types")
    return None if types is None else tuple(types)


def scope_parts(
    tags: Sequence[str], trigger: Mapping[str, Any], *, for_staleness: bool = False
) -> tuple[tuple[str, ...], TagsMatch, tuple[FactType, ...] | None]:
    """``(tags, tags_match, fact_types)`` of the model's scope; strict mode when ``for_staleness``."""
    mode = refresh_tags_match(tags, trigger)
    return normalize_tags(tags), (strict(mode) if for_staleness else mode), refresh_fact_types(trigger)
