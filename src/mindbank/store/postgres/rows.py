"""Row <-> record conversion for the PostgreSQL store: how PostgreSQL stores values (jsonb, ``text[]``,
``timestamptz``, all adapted by psycopg; rows are dicts) for the shared :class:`~mindbank.store.columns.Columns`,
and pgvector ``vector`` values read back."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from psycopg.types.json import Jsonb

from mindbank.store.columns import Columns


def jsonb(value: Any) -> Jsonb | None:
    """A jsonb parameter, or None for SQL NULL."""
    return None if value is None else Jsonb(value)


def as_vector(value: Any) -> npt.NDArray[np.float32]:
    """A stored embedding as a float32 numpy vector (pgvector's adapter yields ``Vector`` objects or arrays, plain
    psycopg yields the text form ``[1,2,3]``)."""
    if isinstance(value, str):
        return np.array(json.loads(value), dtype=np.float32)
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if callable(to_numpy) else value, dtype=np.float32)


class PostgresColumns(Columns):
    """PostgreSQL's encodings: psycopg adapts lists and datetimes both ways and decodes jsonb on read; only a JSON
    parameter needs wrapping (``Jsonb``), so that a dict or list is sent as jsonb rather than adapted as an array."""

    def json(self, value: Any) -> Jsonb:
        """A jsonb parameter."""
        return Jsonb(value)

    def text_list(self, values: Sequence[str]) -> list[str]:
        """A list psycopg adapts to ``text[]``."""
        return list(values)

    def time(self, value: datetime | None) -> datetime | None:
        """The datetime itself (``timestamptz``)."""
        return value

    def load_json(self, value: Any) -> Any:
        """Already decoded by psycopg."""
        return value

    def load_text_list(self, value: Any) -> tuple[str, ...]:
        """A ``text[]`` (a list) as a tuple."""
        return tuple(value)

    def load_time(self, value: Any) -> datetime:
        """Already an aware datetime (sessions run in UTC)."""
        at: datetime = value
        return at


COLUMNS = PostgresColumns()
