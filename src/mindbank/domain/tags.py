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
from typing import Literal, get_args

TagsMatch = Literal["any", "all", "any_strict", "all_strict", "exact"]
TAGS_MATCH_MODES: tuple[str, ...] = get_args(TagsMatch)

_STRICT = {"any": "any_strict", "all": "all_strict"}


def strict(mode: TagsMatch) -> TagsMatch:
    """The strict variant of a mode (any→any_strict, all→all_strict; others unchanged)."""
    return _STRICT.get(mode, mode)  # type: ignore[return-value]


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
