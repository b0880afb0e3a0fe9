"""Row <-> record conversion for the SQLite store: how SQLite stores values (JSON columns and string lists are
text, times fixed-width ISO strings) for the shared :class:`~mindbank.store.columns.Columns`, and the rows of the
in-process vector index."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import orjson

from mindbank.domain.records import NewMemory
from mindbank.domain.timeutil import to_iso
from mindbank.store.columns import Columns
from mindbank.store.sqlite.vector_index import IndexRow


def ts(value: str | None) -> datetime | None:
    """A stored ISO-8601 string as an aware datetime (None stays None)."""
    return None if value is None else datetime.fromisoformat(value)


def to_json(value: Any) -> str:
    """Compact, key-sorted JSON text for a JSON column."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


TIME_MEMO_SIZE = 1 << 15  # stored time texts whose datetime load_time keeps (emptied when full: a few MB at most)
_TIME_MEMO: dict[str, datetime] = {}


def from_json(text: str) -> Any:
    """A JSON column's text as Python data: orjson (a recall decodes the tags and metadata of every candidate it
    ranks), and the stdlib for what only it reads (``NaN``, integers beyond 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def vector_blob(vector: Any) -> bytes:
    """An embedding as stored: little-endian float32 bytes."""
    return np.asarray(vector, dtype="<f4").tobytes()


class SQLiteColumns(Columns):
    """SQLite's encodings: JSON text, JSON-array string lists, ISO-8601 time strings."""

    def json(self, value: Any) -> str:
        """Compact, key-sorted JSON text."""
        return to_json(value)

    def text_list(self, values: Sequence[str]) -> str:
        """A JSON array, order kept."""
        return to_json(list(values))

    def time(self, value: datetime | None) -> str | None:
        """Fixed-width ISO-8601 (sorts as text)."""
        return to_iso(value)

    def load_json(self, value: Any) -> Any:
        """Parsed JSON text."""
        return from_json(value)

    def load_text_list(self, value: Any) -> tuple[str, ...]:
        """A JSON array as a tuple (the empty one, most memories' tags, without parsing)."""
        return () if value == "[]" else tuple(from_json(value))

    def load_time(self, value: Any) -> datetime:
        """An ISO-8601 string as an aware datetime: one object per stored text while it is in the memo, so a time
        read again (a memory recalled by query after query) carries the hash it computed the first time, and
        :func:`~mindbank.domain.timeutil.to_iso` finds its text in one lookup."""
        found = _TIME_MEMO.get(value)
        if found is None:
            found = datetime.fromisoformat(value)
            if len(_TIME_MEMO) >= TIME_MEMO_SIZE:
                _TIME_MEMO.clear()
            _TIME_MEMO[value] = found
        return found


COLUMNS = SQLiteColumns()


def index_rows(written: Sequence[tuple[str, NewMemory]], stamp: str) -> list[IndexRow]:
    """Vector-index rows for memories just written as ``(id, memory)`` at ``stamp`` (stored ISO form)."""
    updated = datetime.fromisoformat(stamp).timestamp()
    return [
        IndexRow(mid, np.asarray(m.embedding, np.float32), m.fact_type, tuple(sorted(set(m.tags))), updated)
        for mid, m in written
    ]
