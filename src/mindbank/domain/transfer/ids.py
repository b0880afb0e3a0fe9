"""Id remapping for an import: an archived id the target database already uses is given a new one, and every
reference to it follows — in plain id fields, in JSON documents (a structured document's ``memory_ids``, a reflect
response's ``based_on``, history entries) and inside text (the ``[mem:<id>]`` citations of a document's blocks and of
its markdown ``content``, which therefore stays the render of the document).

Memory, chunk, operation and LLM-request ids are unique across a whole database, so a bank cloned inside one
database cannot keep them; imported into another database (a migration, a restore elsewhere) it keeps every one.
Generated ids are UUIDs (memories, operations: the dashed form; chunks: 32 hex digits), which is what lets
references be found inside text: a hex run of exactly that shape, not part of a longer one, that the map knows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, overload

# a dashed UUID or 32 hex digits, not inside a longer run of hex digits or dashes (content hashes are 64 digits)
_ID_IN_TEXT = re.compile(
    r"(?<![0-9A-Fa-f-])(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})(?![0-9A-Fa-f-])"
)


class IdMap:
    """Old id -> new id for the ids an import renames; anything it does not know is kept as is."""

    def __init__(self, mapping: Mapping[str, str] | None = None) -> None:
        self._map: dict[str, str] = dict(mapping or {})

    def __len__(self) -> int:
        return len(self._map)

    def add(self, old: str, new: str) -> None:
        """Rename ``old`` to ``new`` from now on."""
        self._map[old] = new

    @overload
    def id(self, value: str) -> str: ...
    @overload
    def id(self, value: None) -> None: ...
    @overload
    def id(self, value: str | None) -> str | None: ...
    def id(self, value: str | None) -> str | None:
        """An id field: its new id, or itself."""
        return None if value is None else self._map.get(value, value)

    def ids(self, values: list[str] | tuple[str, ...] | None) -> tuple[str, ...] | None:
        """A list of ids, each renamed."""
        return None if values is None else tuple(self._map.get(v, v) for v in values)

    def text(self, value: str) -> str:
        """``value`` with every id it contains renamed (``[mem:<id>]`` citations, ids quoted in prose)."""
        if not self._map:
            return value
        renamed = self._map.get(value)
        if renamed is not None:
            return renamed
        return _ID_IN_TEXT.sub(lambda m: self._map.get(m.group(0), m.group(0)), value)

    def json(self, value: Any) -> Any:
        """A JSON value with every id in its strings renamed (keys included)."""
        if not self._map:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.json(v) for k, v in value.items()}
        return value
