"""Which memories a read may see (:class:`MemoryFilter`) and which a mental model reads and watches.

Spec: "Tags and Visibility" and the trigger table (tags_match, tag_groups, fact_types); reference facts §4.2.
``trigger.tag_groups`` overrides the flat tags entirely. Otherwise a tagged model defaults to ``all_strict`` and an
untagged one to ``any`` (no filter). Staleness uses the strict variant of every mode, so an untagged write never
marks a tagged model stale.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from mindbank.domain.records import FactType
from mindbank.domain.tags import TagsMatch, freeze_groups, groups_match, matches, normalize_tags, strict, strict_groups


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Which memories a read may see.

    ``fact_types`` None = all; ``tags`` empty = no tag filter (except ``exact``: untagged only);
    ``updated_before`` / ``updated_after`` bound ``updated_at`` (inclusive / exclusive) for snapshot reads and
    delta windows. ``tag_groups`` is a validated tag-group list in canonical JSON (``domain.tags.freeze_groups``),
    AND-ed with the flat tag filter; kept as a string so filters stay hashable.
    """

    fact_types: tuple[FactType, ...] | None = None
    tags: tuple[str, ...] = ()
    tags_match: TagsMatch = "any"
    updated_before: datetime | None = None
    updated_after: datetime | None = None
    tag_groups: str | None = None

    @property
    def groups(self) -> list[dict[str, Any]]:
        """The tag groups as a list of dicts (empty when none)."""
        return [] if self.tag_groups is None else json.loads(self.tag_groups)


def admits_tags(flt: MemoryFilter, tags: Sequence[str]) -> bool:
    """Whether a row carrying ``tags`` passes the filter's tag rules (flat tags with their mode, and tag groups);
    the Python twin of the stores' SQL predicate."""
    return matches(tags, flt.tags, flt.tags_match) and groups_match(tags, flt.groups)


def admits(flt: MemoryFilter, tags: Sequence[str], fact_type: str) -> bool:
    """Whether a memory with ``tags`` and ``fact_type`` is inside ``flt`` (its time bounds are not checked)."""
    return (flt.fact_types is None or fact_type in flt.fact_types) and admits_tags(flt, tags)


def refresh_tags_match(tags: Sequence[str], trigger: Mapping[str, Any]) -> TagsMatch:
    """The match mode a refresh uses: ``trigger.tags_match``, else all_strict for tagged, any for untagged."""
    explicit = trigger.get("tags_match")
    if explicit:
        return cast(TagsMatch, explicit)  # the trigger was validated: tags_match is one of the modes
    return "all_strict" if tags else "any"


def model_scope(tags: Sequence[str], trigger: Mapping[str, Any], *, for_staleness: bool = False) -> MemoryFilter:
    """The memories a model with ``tags`` and ``trigger`` reads (or, ``for_staleness``, whose writes make it stale)."""
    types = trigger.get("fact_types")
    fact_types: tuple[FactType, ...] | None = None if types is None else tuple(types)
    groups = trigger.get("tag_groups")
    if groups:
        chosen = strict_groups(groups) if for_staleness else groups
        return MemoryFilter(fact_types=fact_types, tag_groups=freeze_groups(chosen))
    mode = refresh_tags_match(tags, trigger)
    return MemoryFilter(
        fact_types=fact_types, tags=normalize_tags(tags), tags_match=strict(mode) if for_staleness else mode
    )
