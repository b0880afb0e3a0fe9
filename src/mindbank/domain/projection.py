"""Records as JSON-ready dicts: one rule for every response shape built from a dataclass record (wire shapes in
``mindbank.wire``, the result dicts engine and service code store or return), so a field is spelled out once.

The rule: a ``datetime`` is written as ISO 8601 (:func:`~mindbank.domain.timeutil.to_iso`), a tuple or list as a
new list, anything else (None, str, numbers, dicts) as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from mindbank.domain.timeutil import to_iso


def plain(value: Any) -> Any:
    """``value`` in its JSON-ready form: ISO 8601 for a ``datetime``, a new list for a tuple or list, else itself."""
    if isinstance(value, datetime):
        return to_iso(value)
    if isinstance(value, tuple | list):
        return list(value)
    return value


def project(record: object, keys: Iterable[str], renames: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``{key: plain(record.<attribute>)}`` for each of ``keys`` in order; the attribute is the key itself unless
    ``renames`` maps the key to another attribute name (``{"chunk_id": "id"}``). Raises ``AttributeError`` for a key
    the record lacks."""
    names = renames or {}
    return {key: plain(getattr(record, names.get(key, key))) for key in keys}


# wire keys that name a record field differently: a memory's ``type`` is its fact type; an operation's
# ``operation_id``/``task_type`` are its id and type, its ``error_message`` its error
MEMORY_RENAMES = {"type": "fact_type"}
OPERATION_RENAMES = {"operation_id": "id", "task_type": "operation_type", "error_message": "error"}
