"""Row <-> record mapping shared by the stores: column order of the inserts and record construction from a row.

Both stores write the same columns in the same order and read the same records back; they differ only in how a
value is stored. SQLite keeps JSON as text, string lists (tags, source ids) as JSON arrays and times as fixed-width
ISO-8601 strings; PostgreSQL keeps jsonb, ``text[]`` and ``timestamptz``, which psycopg adapts both ways.
:class:`Columns` is the shared part; each backend's ``rows`` module subclasses it with those six encodings and
exposes one instance, ``COLUMNS``. The statements the parameters go to are the backends' ``Q["insert_…"]`` and
``Q["update_mental_model"]``, whose column lists follow the order here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import MISSING, Field, fields, replace
from datetime import datetime
from types import UnionType
from typing import Any, Protocol, TypeVar, Union, get_args, get_origin, get_type_hints

from mindbank.domain.governance import RefreshState
from mindbank.domain.knowledge import KnowledgeNode
from mindbank.domain.records import (
    Bank,
    Chunk,
    HistoryEntry,
    LLMRequestRecord,
    MemorySource,
    MemoryUnit,
    MentalModel,
    NewMemory,
    Operation,
    RetainItem,
)
from mindbank.domain.repeats import content_hash
from mindbank.store.base import StoredDocument, StoredMemory, StoredOperation

_In = TypeVar("_In")
_Out = TypeVar("_Out")
_Record = TypeVar("_Record")


def mental_model_columns(detail: str) -> str:
    """The SELECT list for mental models at a detail level: a listing at ``metadata`` or ``content`` level does not
    read (or decode) the structured document and reflect_response, and ``metadata`` not the content either."""
    if detail == "full":
        return "*"
    content = "content" if detail == "content" else "'' AS content"
    return (
        f"bank_id, id, name, source_query, {content}, NULL AS structured_document, NULL AS reflect_response, tags, "
        "max_tokens, trigger, last_refreshed_at, last_memory_seen_at, last_refreshed_source_query, "
        "last_refresh_failed_at, last_full_refreshed_at, created_at, cleared_at, refresh_state"
    )


def replace_bank(op: Operation, bank_id: str) -> Operation:
    """``op`` recorded against ``bank_id`` (an imported operation belongs to the bank it was imported into)."""
    return op if op.bank_id == bank_id else replace(op, bank_id=bank_id)


class Row(Protocol):
    """A result row read by column name (``sqlite3.Row`` and psycopg's dict rows both are)."""

    def __getitem__(self, key: str, /) -> Any: ...

    def keys(self) -> Any:
        """The row's column names, in statement order."""


def _maybe(convert: Callable[[_In], _Out], value: _In | None) -> _Out | None:
    """``convert(value)``, except that SQL NULL (None) stays None."""
    return None if value is None else convert(value)


def _column(r: Row, key: str) -> Any:
    """A column a statement may not select (None when absent)."""
    try:
        return r[key]
    except (IndexError, KeyError):
        return None


# A column's decoding by the field's annotation (``T | None`` is decoded as ``T`` and keeps NULL): JSON for a
# dict, the backend's list for a tuple of strings, its time for a datetime; SQLite's 0/1 as a bool; counts and
# indexes as int (NULL kept; a no-op on either backend, so a driver's wider integer type never leaks); others as
# read.
_DECODE_BY_TYPE: dict[Any, Callable[[Columns, Any], Any]] = {
    dict: lambda c, v: c.load_json(v),
    tuple: lambda c, v: c.load_text_list(v),
    datetime: lambda c, v: c.load_time(v),
    bool: lambda c, v: bool(v),
    int: lambda c, v: _maybe(int, v),
}


# a parameter's encoding, the inverse of the decoding above (bools and ints bind as they are)
_ENCODE_BY_DECODE: dict[Callable[[Columns, Any], Any], Callable[[Columns, Any], Any]] = {
    _DECODE_BY_TYPE[dict]: lambda c, v: c.json(v),
    _DECODE_BY_TYPE[tuple]: lambda c, v: c.text_list(v),
    _DECODE_BY_TYPE[datetime]: lambda c, v: c.time(v),
}

_Plan = tuple[tuple[str, Callable[["Columns", Any], Any], bool, bool], ...]
_PLANS: dict[type[Any], _Plan] = {}  # per record class: its annotations are read once


def _decoders(cls: type[Any]) -> _Plan:
    """``(name, decode, optional, has default)`` for each init field of the dataclass ``cls``, in field order."""
    plan = _PLANS.get(cls)
    if plan is None:
        hints = get_type_hints(cls)
        plan = _PLANS[cls] = tuple(_decoder(f, hints[f.name]) for f in fields(cls) if f.init)
    return plan


_BY_NAME: dict[type[Any], dict[str, tuple[Callable[[Columns, Any], Any], bool]]] = {}


def _by_name(cls: type[Any]) -> dict[str, tuple[Callable[[Columns, Any], Any], bool]]:
    """``{name: (decode, optional)}`` of :func:`_decoders` (read once per class)."""
    found = _BY_NAME.get(cls)
    if found is None:
        found = _BY_NAME[cls] = {name: (decode, optional) for name, decode, optional, _ in _decoders(cls)}
    return found


def _decoder(f: Field[Any], hint: Any) -> tuple[str, Callable[[Columns, Any], Any], bool, bool]:
    """One field's entry of :func:`_decoders`."""
    args, optional = get_args(hint), False
    if get_origin(hint) in (Union, UnionType) and type(None) in args:
        hint, optional = next(a for a in args if a is not type(None)), True
    decode = _DECODE_BY_TYPE.get(get_origin(hint) or hint, _as_read)
    return f.name, decode, optional, f.default is not MISSING or f.default_factory is not MISSING


def _as_read(_: Columns, value: Any) -> Any:
    return value


# the decoders above as expressions of ``_v{i}`` (the column's value) and ``c`` (the backend's Columns)
_INLINE: dict[Callable[[Columns, Any], Any], str] = {
    _as_read: "_v{i}",
    _DECODE_BY_TYPE[dict]: "c.load_json(_v{i})",
    _DECODE_BY_TYPE[tuple]: "c.load_text_list(_v{i})",
    _DECODE_BY_TYPE[datetime]: "c.load_time(_v{i})",
    _DECODE_BY_TYPE[bool]: "bool(_v{i})",
    _DECODE_BY_TYPE[int]: "None if _v{i} is None else int(_v{i})",
}

_BUILDERS: dict[tuple[Any, ...], Callable[[Columns, Row, dict[str, Any]], Any]] = {}


def _slot_filled(cls: type[Any]) -> bool:
    """Whether a ``cls`` record may be built by writing its slots: a slotted dataclass whose ``__init__`` only
    assigns its fields (every field in it, no ``__post_init__``)."""
    names = set(getattr(cls, "__slots__", ()))
    found = fields(cls)
    return not hasattr(cls, "__post_init__") and all(f.init and f.name in names for f in found)


def _builder(
    cls: type[Any], given: frozenset[str], selected: tuple[str, ...], positional: bool
) -> Callable[[Columns, Row, dict[str, Any]], Any]:
    """``build(columns, row, given) -> cls``: :meth:`Columns.record` for one record class, one set of given names
    and one statement's ``selected`` columns, written out as straight-line code once, as ``dataclasses`` writes
    ``__init__``: a model listing builds a thousand records per call, and a per-field loop (or a caught KeyError per
    unselected column) costs more than the query behind it. A field with a default that the statement does not
    select is left to its default; one without a default is read anyway, so the row raises its own error.
    ``positional``: the row is read by column position (``sqlite3.Row``, whose lookup by name compares the name
    with each column's in turn), else by name (a dict row).

    A slotted record whose ``__init__`` only assigns its fields (:func:`_slot_filled`: every record the stores
    build) is made by writing its slots directly, as ``copy`` and ``pickle`` do: a frozen dataclass's ``__init__``
    assigns each field through ``object.__setattr__``, and for the 19 fields of a memory that was most of the
    cost of a recall's hundred candidate rows (9.7 µs a record against 2.8 µs)."""
    slots = _slot_filled(cls)
    namespace: dict[str, Any] = {"_cls": cls, "_new": object.__new__}
    body, kwargs = [], []
    defaults = {f.name: f for f in fields(cls)}
    for i, (name, decode, optional, has_default) in enumerate(_decoders(cls)):
        if name in given:
            value = f"g[{name!r}]"
        elif has_default and name not in selected:
            if not slots:
                continue
            default = defaults[name]
            if default.default is not MISSING:
                namespace[f"_default{i}"] = default.default
                value = f"_default{i}"
            else:
                namespace[f"_factory{i}"] = default.default_factory
                value = f"_factory{i}()"
        else:
            value = _INLINE.get(decode, "_d{i}(c, _v{i})").format(i=i)
            namespace[f"_d{i}"] = decode
            if optional:
                value = f"None if _v{i} is None else {value}"
            key = selected.index(name) if positional and name in selected else repr(name)
            body.append(f" _v{i} = r[{key}]")
        if slots:
            namespace[f"_set{i}"] = getattr(cls, name).__set__
            kwargs.append(f" _set{i}(o, {value})")
        else:
            kwargs.append(f"{name}={value}")
    if slots:
        tail = " o = _new(_cls)\n" + "".join(f"{line}\n" for line in kwargs) + " return o\n"
    else:
        tail = f" return _cls({', '.join(kwargs)})\n"
    source = "def build(c, r, g):\n" + "".join(f"{line}\n" for line in body) + tail
    exec(source, namespace)  # the source is built above from the dataclass's own field names
    return namespace["build"]  # type: ignore[no-any-return]


def memory_source(r: Row) -> MemorySource:
    """A ``memory_sources`` / ``memory_chunk_sources`` row as a :class:`MemorySource` (plain text columns only)."""
    return MemorySource(r["id"], r["document_id"], r["chunk_id"], r["chunk_text"], r["original_text"], r["chunk_index"])


class Columns(ABC):
    """Column order and record construction over a backend's value encodings (the abstract methods).

    The encoders are only called with non-None values where the column may be NULL; ``time`` is the exception and
    must map None to None itself (so an optional time needs no guard at each use).
    """

    # ---------------------------------------------------------------- the backend's encodings

    @abstractmethod
    def json(self, value: Any) -> Any:
        """A JSON column parameter for a (non-None) value."""

    @abstractmethod
    def text_list(self, values: Sequence[str]) -> Any:
        """A string-list column parameter (tags, source ids), order kept."""

    @abstractmethod
    def time(self, value: datetime | None) -> Any:
        """A time column parameter (None stays None)."""

    @abstractmethod
    def load_json(self, value: Any) -> Any:
        """A (non-NULL) stored JSON value as Python data."""

    @abstractmethod
    def load_text_list(self, value: Any) -> tuple[str, ...]:
        """A (non-NULL) stored string list as a tuple."""

    @abstractmethod
    def load_time(self, value: Any) -> datetime:
        """A (non-NULL) stored time as an aware datetime."""

    # ---------------------------------------------------------------- shared construction

    def tags(self, values: Sequence[str]) -> Any:
        """A tags parameter: sorted and de-duplicated, so ``exact`` tag matching is plain equality."""
        return self.text_list(sorted(set(values)))

    def params(self, obj: Any, columns: str, /, **given: Any) -> tuple[Any, ...]:
        """Statement parameters from the dataclass ``obj``, one per name of ``columns`` (space-separated, in column
        order): ``given[name]`` as is when given, else the field of that name encoded by its annotation — the
        backend's JSON for a dict, its string list for a tuple of strings (``tags`` sorted and de-duplicated), its
        time for a datetime, others as they are; a ``T | None`` field's None stays NULL."""
        hints = _by_name(type(obj))
        out: list[Any] = []
        for name in columns.split():
            if name in given:
                out.append(given[name])
                continue
            value, (decode, optional) = getattr(obj, name), hints[name]
            encode = _ENCODE_BY_DECODE.get(decode)
            if name == "tags":
                out.append(self.tags(value))
            elif encode is None or (value is None and optional):
                out.append(value)
            else:
                out.append(encode(self, value))
        return tuple(out)

    def record(self, cls: type[_Record], r: Row, /, **given: Any) -> _Record:
        """A row as a ``cls`` dataclass: each field not in ``given`` is the column of its name, decoded by its
        annotation (:func:`_decoders`); a field with a default keeps it when the statement does not select the
        column. Raises ``KeyError`` / ``IndexError`` for a missing column of a field without a default."""
        return self._build(cls, r, given)(self, r, given)  # type: ignore[no-any-return]  # builds a ``cls``

    def records(self, cls: type[_Record], rows: Sequence[Row], /, **given: Any) -> list[_Record]:
        """Rows of one statement as ``cls`` dataclasses (:meth:`record` of each), the builder looked up once: a
        recall hydrates a hundred candidates per query."""
        if not rows:
            return []
        build = self._build(cls, rows[0], given)
        return [build(self, r, given) for r in rows]

    @staticmethod
    def _build(cls: type[Any], r: Row, given: dict[str, Any]) -> Callable[[Columns, Row, dict[str, Any]], Any]:
        """The builder of ``cls`` for the statement ``r`` came from (its selected columns, in order)."""
        selected, positional = tuple(r.keys()), not isinstance(r, dict)
        key = (cls, selected, positional, *given)
        build = _BUILDERS.get(key)
        if build is None:
            build = _BUILDERS[key] = _builder(cls, frozenset(given), selected, positional)
        return build

    def bank_row(self, r: Row) -> Bank:
        """A ``banks`` row as a :class:`Bank`."""
        return self.record(Bank, r)

    def document_params(
        self, bank_id: str, document_id: str, item: RetainItem, text: str, created: Any, stamp: Any
    ) -> tuple[Any, ...]:
        """The ``upsert_document`` parameters; ``created`` and ``stamp`` are already in stored form."""
        return (bank_id, document_id, text, content_hash(text), *self.params(item, "tags metadata context"), created,
                stamp)  # fmt: skip

    def memory_params(self, memory_id: str, bank_id: str, m: NewMemory, stamp: Any, embedding: Any) -> tuple[Any, ...]:
        """The ``insert_memory`` parameters of a new memory; ``stamp`` (created and updated) and ``embedding`` are
        already in stored form."""
        return (*self._memory_columns(memory_id, bank_id, m, embedding), stamp, stamp, m.repeat_key)

    def _memory_columns(
        self, memory_id: str, bank_id: str, m: NewMemory | MemoryUnit, embedding: Any
    ) -> tuple[Any, ...]:
        """The memory columns every memory insert starts with, ``id`` to ``proof_count``."""
        return self.params(
            m, "id bank_id document_id chunk_id text fact_type tags context metadata occurred_start occurred_end "
            "mentioned_at embedding source_memory_ids proof_count", id=memory_id, bank_id=bank_id, embedding=embedding,
        )  # fmt: skip

    def memory_row(self, r: Row) -> MemoryUnit:
        """A ``memory_units`` row (the store's memory column list) as a :class:`MemoryUnit`; ``mention_count`` (a
        NOT NULL column) is the field's default, 1, where the statement does not read it."""
        return self.record(MemoryUnit, r)

    def memory_rows(self, rows: Sequence[Row]) -> list[MemoryUnit]:
        """Rows of one statement as :class:`MemoryUnit` records (:meth:`memory_row` of each, :meth:`records`)."""
        return self.records(MemoryUnit, rows)

    def model_params(self, m: MentalModel) -> tuple[Any, ...]:
        """The ``insert_mental_model`` parameters of a model, in column order."""
        return self.params(
            m, "bank_id id name source_query content structured_document reflect_response tags max_tokens trigger "
            "last_refreshed_at last_memory_seen_at last_refreshed_source_query last_refresh_failed_at "
            "last_full_refreshed_at created_at cleared_at refresh_state",
            refresh_state=self.json(m.refresh_state.to_dict()),
        )  # fmt: skip

    def model_update_params(self, m: MentalModel) -> tuple[Any, ...]:
        """The ``update_mental_model`` parameters: every insert column but the key and ``created_at``, then the
        key (``WHERE bank_id = … AND id = …``)."""
        params = self.model_params(m)
        return (*params[2:15], *params[16:18], m.bank_id, m.id)

    def model_row(self, r: Row) -> MentalModel:
        """A ``mental_models`` row (any ``mental_model_columns`` detail) as a :class:`MentalModel`;
        ``is_knowledge_page`` where the statement reads it (``get_mental_model``, ``list_mental_models``)."""
        refresh_state = RefreshState.from_dict(_maybe(self.load_json, r["refresh_state"]))
        return self.record(MentalModel, r, refresh_state=refresh_state)

    def knowledge_node_row(self, r: Row) -> KnowledgeNode:
        """A ``knowledge_nodes`` row as a :class:`KnowledgeNode`."""
        return self.record(KnowledgeNode, r)

    def history_row(self, r: Row) -> HistoryEntry:
        """A ``list_history`` row as a :class:`HistoryEntry`."""
        return self.record(HistoryEntry, r)

    def operation_params(self, op: Operation) -> tuple[Any, ...]:
        """The ``insert_operation`` parameters of an operation, in column order."""
        return self.params(
            op,
            "id bank_id operation_type status payload result error retry_count next_retry_at mental_model_id "
            "created_at updated_at completed_at",
        )

    def operation_row(self, r: Row) -> Operation:
        """An ``operations`` row as an :class:`Operation`."""
        return self.record(Operation, r)

    # ---------------------------------------------------------------- bank transfer (rows as stored)

    def bank_import_params(self, bank: Bank) -> tuple[Any, ...]:
        """The ``import_bank`` parameters: a bank row created by a restore, every column as archived."""
        return self.params(bank, "bank_id name config created_at updated_at last_memory_write_at mission disposition")

    def stored_document_params(self, bank_id: str, doc: StoredDocument) -> tuple[Any, ...]:
        """The ``import_document`` parameters of a :class:`~mindbank.store.base.StoredDocument`."""
        columns = "bank_id id original_text content_hash tags metadata context created_at updated_at"
        return self.params(doc, columns, bank_id=bank_id)

    def stored_document(self, r: Row, chunks: Sequence[Row]) -> StoredDocument:
        """A ``documents`` row and its ``chunks`` rows as a :class:`~mindbank.store.base.StoredDocument`."""
        parts = tuple(self.record(Chunk, c, index=int(c["chunk_index"])) for c in chunks)
        return self.record(StoredDocument, r, chunks=parts)

    def stored_memory_params(
        self, bank_id: str, stored: StoredMemory, embedding: Any, stamp: Any | None
    ) -> tuple[Any, ...]:
        """The ``import_memory`` parameters of a :class:`~mindbank.store.base.StoredMemory`; ``embedding`` already
        in stored form; ``stamp`` (stored form), when given, replaces ``updated_at`` (a merged memory is a new
        write to its bank) and clears ``consolidated_at`` (the bank consolidates it itself)."""
        m = stored.memory
        return (
            *self._memory_columns(m.id, bank_id, m, embedding),
            None if stamp is not None else self.time(stored.consolidated_at),
            self.time(m.created_at),
            stamp if stamp is not None else self.time(m.updated_at),
            m.mention_count,
            self.time(m.last_mentioned_at),
            stored.repeat_key,
        )

    def stored_operation_params(self, bank_id: str, stored: StoredOperation) -> tuple[Any, ...]:
        """The ``import_operation`` parameters of a :class:`~mindbank.store.base.StoredOperation` (the operation
        moved to ``bank_id``)."""
        return (
            *self.operation_params(replace_bank(stored.operation, bank_id)),
            stored.worker_id,
            self.time(stored.lease_expires_at),
            _maybe(self.json, stored.operation.progress),
        )

    def stored_operation(self, r: Row) -> StoredOperation:
        """An ``operations`` row as a :class:`~mindbank.store.base.StoredOperation`."""
        return StoredOperation(self.operation_row(r), r["worker_id"], _maybe(self.load_time, r["lease_expires_at"]))

    def stored_memory(self, r: Row, embedding: Any) -> StoredMemory:
        """A snapshot memory row (memory columns, ``consolidated_at``, ``chunk_index``) and its decoded embedding as a
        :class:`~mindbank.store.base.StoredMemory`."""
        return StoredMemory(
            self.memory_row(r), embedding, _maybe(self.load_time, r["consolidated_at"]), r["chunk_index"],
            _column(r, "repeat_key"),
        )  # fmt: skip

    def llm_request_params(self, record: LLMRequestRecord) -> tuple[Any, ...]:
        """The ``insert_llm_request`` parameters of a traced attempt, in column order."""
        return self.params(
            record,
            "id bank_id operation_id scope provider model attempt request response error input_tokens "
            "output_tokens duration_ms created_at",
        )

    def llm_request_row(self, r: Row) -> LLMRequestRecord:
        """An ``llm_requests`` row as an :class:`LLMRequestRecord`."""
        return self.record(LLMRequestRecord, r)
