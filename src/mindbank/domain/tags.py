"""Tag matching: the five match modes shared by recall, refresh scope and staleness.

Truth table (reference facts §4.1), for a row's tag set R and the requested tags V:

=============  ======================  ================
mode           tagged row matches if   untagged row
=============  ======================  ================
any            R ∩ V ≠ ∅               included
all            V ⊆ R                   included
any_strict     R ∩ V ≠ ∅               excluded
all_strict     V ⊆ R                   excluded
exact          R = V                   excluded
=============  ======================  ================

Empty/absent V means "no filter" in every mode except ``exact``, where it selects untagged rows only.
The store compiles the same table into SQL; :func:`matches` is the Python mirror used by tests and in-memory paths.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, cast, get_args

TagsMatch = Literal["any", "all", "any_strict", "all_strict", "exact"]
TAGS_MATCH_MODES: tuple[str, ...] = get_args(TagsMatch)


def strict(mode: TagsMatch) -> TagsMatch:
    """The strict variant of a mode (any→any_strict, all→all_strict; others unchanged)."""
    if mode == "any":
        return "any_strict"
    if mode == "all":
        return "all_strict"
    return mode


def normalize_tags(tags: Iterable[str] | None) -> tuple[str, ...]:
    """Strip, drop empties and duplicates, sort: the canonical stored form of a tag list."""
    if not tags:
        return ()
    return tuple(sorted({t.strip() for t in tags if t and t.strip()}))


def matches(row_tags: Sequence[str], wanted: Sequence[str] | None, mode: TagsMatch) -> bool:
    """Whether a row carrying ``row_tags`` passes the filter ``(wanted, mode)``.

    Raises ``ValueError`` for an unknown mode.
    """
    if mode not in TAGS_MATCH_MODES:
        raise ValueError(f"unknown tags_match mode: {mode!r}")
    row = set(row_tags)
    want = set(wanted or ())
    if mode == "exact":
        return row == want
    if not want:
        return True
    if not row:
        return mode in ("any", "all")
    if mode in ("any", "any_strict"):
        return bool(row & want)
    return want <= row


# ---------------------------------------------------------------- tag groups
# A tag group is a boolean expression over tag filters, stored as plain JSON:
#   leaf {"tags": [...], "match": <mode, default any_strict>}   and {"and": [g, ...]}   or {"or": [g, ...]}
#   not {"not": g}.  A top-level list of groups is AND-ed (reference facts §4.1).
TagGroup = dict[str, object]
MAX_GROUP_DEPTH = 32  # groups inside groups; a real filter is a few levels deep


def validate_tag_groups(groups: object, *, allow_fuzzy: bool = False, path: str = "tag_groups") -> list[TagGroup]:
    """Check a tag-group list and return it in canonical form (leaf tags normalised, default match filled in).

    Raises ``ValueError`` whose message names the offending path (e.g. ``tag_groups[0].and[1].match``).
    """
    if not isinstance(groups, list):
        raise ValueError(f"{path} must be a list of tag groups")
    return [_validate_group(g, allow_fuzzy, f"{path}[{i}]", 1) for i, g in enumerate(groups)]


def _validate_group(group: object, allow_fuzzy: bool, path: str, depth: int) -> TagGroup:
    if depth > MAX_GROUP_DEPTH:
        # checked before descending: a caller's nesting never reaches the interpreter's recursion limit
        raise ValueError(f"{path.split('.')[0]} nests deeper than {MAX_GROUP_DEPTH} levels")
    if not isinstance(group, dict):
        raise ValueError(f"{path} must be an object")
    keys = set(group)
    operators = keys & {"and", "or", "not"}
    if (operators and keys != operators) or len(operators) > 1:
        raise ValueError(f"{path} must have exactly one of 'and', 'or', 'not', or be a leaf with 'tags'")
    for op in ("and", "or"):
        if op in keys:
            children = group[op]
            if not isinstance(children, list) or not children:
                raise ValueError(f"{path}.{op} must be a non-empty list of tag groups")
            return {
                op: [_validate_group(c, allow_fuzzy, f"{path}.{op}[{i}]", depth + 1) for i, c in enumerate(children)]
            }
    if "not" in keys:
        return {"not": _validate_group(group["not"], allow_fuzzy, f"{path}.not", depth + 1)}
    unknown = keys - {"tags", "match", "resolve"}
    if unknown or "tags" not in keys:
        raise ValueError(
            f"{path} must be a leaf {{tags, match}} or one of and/or/not (unknown keys: {sorted(unknown)})"
        )
    tags = group["tags"]
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValueError(f"{path}.tags must be a list of strings")
    match = group.get("match", "any_strict")
    if match not in TAGS_MATCH_MODES:
        raise ValueError(f"{path}.match must be one of {', '.join(TAGS_MATCH_MODES)}")
    resolve = group.get("resolve", "exact")
    if resolve not in ("exact", "fuzzy") or (resolve == "fuzzy" and not allow_fuzzy):
        raise ValueError(f"{path}.resolve must be 'exact' here (fuzzy leaves are not allowed)")
    return {"tags": list(normalize_tags(tags)), "match": match}


def group_matches(row_tags: Sequence[str], group: TagGroup) -> bool:
    """Evaluate one (validated) tag group against a row's tags."""
    if "and" in group:
        return all(group_matches(row_tags, g) for g in _children(group, "and"))
    if "or" in group:
        return any(group_matches(row_tags, g) for g in _children(group, "or"))
    if "not" in group:
        return not group_matches(row_tags, cast(TagGroup, group["not"]))
    return matches(row_tags, cast(list[str], group["tags"]), cast(TagsMatch, group["match"]))


def _children(group: TagGroup, op: str) -> list[TagGroup]:
    """The operands of a validated ``and``/``or`` group (validation made them a list of groups)."""
    return cast(list[TagGroup], group[op])


def groups_match(row_tags: Sequence[str], groups: Sequence[TagGroup]) -> bool:
    """A top-level tag-group list: every group must match."""
    return all(group_matches(row_tags, g) for g in groups)


def strict_groups(groups: Sequence[TagGroup]) -> list[TagGroup]:
    """The same groups with every leaf's mode made strict (staleness never counts untagged writes)."""

    def walk(g: TagGroup) -> TagGroup:
        if "and" in g or "or" in g:
            op = "and" if "and" in g else "or"
            return {op: [walk(c) for c in _children(g, op)]}
        if "not" in g:
            return {"not": walk(cast(TagGroup, g["not"]))}
        return {"tags": g["tags"], "match": strict(cast(TagsMatch, g["match"]))}

    return [walk(g) for g in groups]


def freeze_groups(groups: Sequence[TagGroup] | None) -> str | None:
    """A hashable canonical key for a tag-group list (so equal scopes share one staleness lookup)."""
    import json

    return None if groups is None else json.dumps(list(groups), sort_keys=True, separators=(",", ":"))
