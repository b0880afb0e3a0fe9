"""What differs between the SQLite and PostgreSQL spelling of SQL that both stores otherwise run alike.

Statements live in each backend's ``Q`` (``store/<backend>/queries.py``); a method body written once for both stores
(``store/shared.py``, ``store/memory_reads.py``, ...) adds the fragments it builds itself — an extra condition, a
pattern match — through the backend's :class:`Dialect`, so the body never names a backend.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


def merge_statements(*parts: Mapping[str, str]) -> dict[str, str]:
    """A backend's ``Q``: its feature modules' statements in one mapping. Raises ``ValueError`` if two modules
    define the same key (the later one would otherwise replace the earlier silently)."""
    merged: dict[str, str] = {}
    for part in parts:
        twice = merged.keys() & part.keys()
        if twice:
            raise ValueError(f"statement keys defined twice: {sorted(twice)}")
        merged.update(part)
    return merged


def substring_pattern(query: str) -> str:
    """A ``LIKE``/``ILIKE`` pattern (escape ``\\``) that finds ``query`` anywhere in the text."""
    return "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


@dataclass(frozen=True, slots=True)
class Dialect:
    """One backend's SQL spelling.

    ``mark``: the positional placeholder (``?`` or ``%s``). ``ilike``: the case-insensitive ``LIKE`` operator
    (SQLite's ``LIKE`` already ignores ASCII case; PostgreSQL spells it ``ILIKE``). ``tag_filter``: the condition
    on a tag of the ``list_tags``/``count_tags`` join (``j``) that one ``tag_pattern(pattern)`` parameter fills;
    ``tag_pattern`` translates a user pattern (``*`` the only wildcard, no ``*``: substring) into it.
    ``model_tags(tags, tags_match)``: the ``{where}`` (and its parameters) of a tag filter on mental models.
    ``tags_clause(alias, tags, mode)``: one tag filter on the memory table ``alias`` (None: no constraint).
    ``in_list(column, values)``: a condition that ``column`` is one of ``values``, and its parameters. ``time``: a
    datetime as the backend binds it. ``true``/``false``: the constant conditions. ``duplicate``: what the driver
    raises when an insert hits an existing key. ``id_batch``: the most ids one lookup binds (None: any number, bound
    as one array).
    """

    mark: str
    ilike: str
    tag_filter: str
    tag_pattern: Callable[[str], str]
    model_tags: Callable[[Sequence[str], str], tuple[str, list[Any]]]
    tags_clause: Callable[[str, Sequence[str], str], tuple[str | None, list[Any]]]
    in_list: Callable[[str, list[Any]], tuple[str, list[Any]]]
    time: Callable[[datetime], Any]
    true: str
    false: str
    duplicate: tuple[type[Exception], ...]
    id_batch: int | None

    def contains(self, column: str) -> str:
        """A condition (with one ``substring_pattern`` parameter) that ``column`` contains a text, any case."""
        return f"{column} {self.ilike} {self.mark} ESCAPE '\\'"

    def equals(self, column: str) -> str:
        """A condition (with one parameter) that ``column`` equals a value."""
        return f"{column} = {self.mark}"
