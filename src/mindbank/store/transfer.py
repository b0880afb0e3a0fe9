"""Bank transfer and stored files, written once for both backends: consistent snapshots read in pages, imports
applied in one transaction, files kept in chunks.

Like :mod:`mindbank.store.shared`, every method here runs one backend's named statements (``self._q``, keyed alike
in both ``queries`` modules) and maps rows through its :class:`~mindbank.store.columns.Columns`. What differs
between the backends is supplied by hooks each backend's ``transfer`` mixin implements: how a read-only snapshot
transaction is opened, how a vector is stored and read back, how a list of ids is bound (``IN (?,…)`` or one
array), and how an import starts (create the bank, or lock it and take a write stamp) and ends (the bank's stamp).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from mindbank.domain.knowledge import KnowledgeNode, TreeMerge
from mindbank.domain.records import Bank, HistoryEntry, LLMRequestRecord, MentalModel
from mindbank.domain.resources import Directive, Webhook, WebhookDelivery
from mindbank.domain.timeutil import utcnow
from mindbank.store.base import (
    AlreadyExists,
    DocumentReplace,
    FileGone,
    IdKind,
    ImportRow,
    ImportTarget,
    KnowledgeTreeImport,
    SpendRecord,
    StoredDocument,
    StoredDocumentEvent,
    StoredFile,
    StoredHistory,
    StoredMemory,
    StoredOperation,
    cited_ids,
)
from mindbank.store.columns import Row
from mindbank.store.shared import SharedQueries

# rows per read page and per insert batch: bounds what an export or an import holds in memory at once
PAGE = 500
# bytes per stored file chunk
FILE_CHUNK = 1 << 20
# rows whose integer ids come from an identity sequence (kept on import when free)
_NUMBERED = (StoredHistory, StoredDocumentEvent)

_BANK_SCOPED = frozenset({"document", "mental_model"})


class TransferQueries(SharedQueries):
    """The backend-neutral half of bank transfer and file storage; see the module docstring. Mixed into each
    backend's store through its ``transfer`` mixin, which supplies the hooks below."""

    # the knowledge queries' (store/knowledge.py), mixed into the same store: places an imported tree in the open
    # transaction
    _import_knowledge_tree: Callable[[Any, str, Sequence[KnowledgeNode]], TreeMerge]

    # ---------------------------------------------------------------- supplied by the backend

    def _snapshot_read(self) -> AbstractContextManager[Any]:
        """A connection inside one read-only transaction that sees a single committed state (the backend's)."""
        raise NotImplementedError

    def _decode_vector(self, value: Any) -> npt.NDArray[np.float32]:
        """A stored embedding as a float32 vector (the backend's)."""
        raise NotImplementedError

    def _encode_vector(self, vector: npt.NDArray[np.float32]) -> Any:
        """An embedding as an insert parameter (the backend's)."""
        raise NotImplementedError

    def _id_slots(self, ids: Sequence[Any]) -> tuple[dict[str, str], tuple[Any, ...]]:
        """A list of ids as ``(format slots, parameters)`` for a statement that filters on it (the backend's)."""
        raise NotImplementedError

    def _import_begin(self, conn: Any, target: ImportTarget) -> Any:
        """Start an import in the open transaction: create the restored bank (raising :class:`AlreadyExists` when
        it exists) or ensure and lock the merged one; returns the write stamp (stored form) when ``fresh_stamps``
        (the backend's)."""
        raise NotImplementedError

    def _import_end(self, conn: Any, target: ImportTarget, newest: datetime | None) -> None:
        """Finish an import in the open transaction: the bank's write stamp covers every imported memory
        (``newest``: the newest imported ``updated_at``) and its memory version moves on (the backend's)."""
        raise NotImplementedError

    def _is_conflict(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the database refusing a duplicate key (the backend's)."""
        raise NotImplementedError

    def _after_import(self, bank_id: str) -> None:
        """Called after an import committed (the SQLite store drops its cached vector index)."""

    # ---------------------------------------------------------------- snapshot reads

    @contextmanager
    def bank_snapshot(self, bank_id: str) -> Iterator[BankSnapshotReader]:
        """One consistent, read-only view of a bank for as long as the block runs (see
        :class:`~mindbank.store.base.BankSnapshot`)."""
        with self._snapshot_read() as conn:
            yield BankSnapshotReader(self, conn, bank_id)

    def existing_ids(self, kind: IdKind, ids: Sequence[Any], *, bank_id: str | None = None) -> set[Any]:
        """Which of ``ids`` are already taken in the id space ``kind`` (document and mental-model ids: within
        ``bank_id``; the others: anywhere in the database)."""
        found: set[Any] = set()
        statement = {
            "memory": self._q["existing_memory_ids"],
            "chunk": self._q["existing_chunk_ids"],
            "operation": self._q["existing_operation_ids"],
            "llm_request": self._q["existing_llm_request_ids"],
            "delivery": self._q["existing_delivery_ids"],
            "history": self._q["existing_history_ids"],
            "document_event": self._q["existing_document_event_ids"],
            "document": self._q["existing_document_ids"],
            "mental_model": self._q["existing_mental_model_ids"],
        }[kind]
        unique = list(dict.fromkeys(ids))
        with self._read() as conn:
            for start in range(0, len(unique), PAGE):
                slots, params = self._id_slots(unique[start : start + PAGE])
                head = (bank_id,) if kind in _BANK_SCOPED else ()
                rows = conn.execute(statement.format(**slots), (*head, *params)).fetchall()
                found.update(r["id"] for r in rows)
        return found

    # ---------------------------------------------------------------- import

    def import_rows(
        self, target: ImportTarget, rows: Iterable[ImportRow], *, consume_file: str | None = None
    ) -> dict[str, int]:
        """Write ``rows`` into ``target`` in ONE transaction: all of them or, on any error, none (the bank stays as
        it was). Rows are written in the order given, batched by kind; a document's chunks come with it, a model's
        citations are derived from its structured document. ``consume_file``: a stored file deleted in the same
        transaction (the uploaded archive: its absence then proves the import committed). Returns counts by row
        kind. Raises :class:`AlreadyExists` when the restored bank, or any imported key, already exists, and
        :class:`FileGone` when ``consume_file`` was consumed by another import meanwhile."""
        counts: Counter[str] = Counter()
        newest: datetime | None = None
        explicit: set[type] = set()  # row kinds written with ids of their own (identity sequences to move on)
        try:
            with self._tx() as conn:
                stamp = self._import_begin(conn, target)
                for _, group in itertools.groupby(rows, key=type):
                    for batch in _batches(group):
                        newest = _later(newest, self._write_batch(conn, target, batch, stamp, counts))
                        explicit |= {
                            type(r) for r in batch if isinstance(r, StoredHistory | StoredDocumentEvent) and r.id
                        }
                if StoredHistory in explicit:
                    conn.execute(self._q["sync_history_ids"])
                if counts.get("history"):  # rows of an archive written before numbers were stored
                    conn.execute(self._q["number_history"], (target.bank_id,))
                if StoredDocumentEvent in explicit:
                    conn.execute(self._q["sync_document_event_ids"])
                self._import_end(conn, target, newest)
                # the upload is a once-only token: a second run of the same import (a worker that lost its lease)
                # finds it gone, even while the first is still committing, and rolls back
                if consume_file is not None and not conn.execute(self._q["delete_file"], (consume_file,)).rowcount:
                    raise FileGone(f"{consume_file} was already imported")
        except (AlreadyExists, FileGone):
            raise
        except Exception as exc:
            if self._is_conflict(exc):
                raise AlreadyExists(str(exc).splitlines()[0]) from exc
            raise
        self._after_import(target.bank_id)
        return dict(counts)

    def _write_batch(
        self, conn: Any, target: ImportTarget, batch: list[Any], stamp: Any, counts: Counter[str]
    ) -> datetime | None:
        """Insert one batch of same-kind rows; returns the newest memory ``updated_at`` it wrote (memories only)."""
        cols, bank_id = self._columns, target.bank_id
        first = batch[0]
        if isinstance(first, StoredDocument):
            _many(conn, self._q["import_document"], [cols.stored_document_params(bank_id, d) for d in batch])
            chunks = [(c.id, bank_id, d.id, c.index, c.text) for d in batch for c in d.chunks]
            if chunks:
                _many(conn, self._q["insert_chunk"], chunks)
            counts["documents"] += len(batch)
            counts["chunks"] += len(chunks)
        elif isinstance(first, DocumentReplace):
            for r in batch:
                conn.execute(self._q["delete_document_memories"], (bank_id, r.document_id))
                conn.execute(self._q["delete_document_chunks"], (bank_id, r.document_id))
                conn.execute(self._q["delete_document"], (bank_id, r.document_id))
            counts["documents_replaced"] += len(batch)
        elif isinstance(first, StoredMemory):
            fresh = stamp if target.fresh_stamps else None
            _many(
                conn,
                self._q["import_memory"],
                [cols.stored_memory_params(bank_id, m, self._encode_vector(m.embedding), fresh) for m in batch],
            )
            for m in batch:
                counts["observations" if m.memory.fact_type == "observation" else "facts"] += 1
            return None if fresh is not None else max(m.memory.updated_at for m in batch)
        elif isinstance(first, MentalModel):
            _many(conn, self._q["insert_mental_model"], [cols.model_params(m) for m in batch])
            citations = [(bank_id, m.id, mid) for m in batch for mid in cited_ids(m.structured_document)]
            if citations:
                _many(conn, self._q["insert_citation"], citations)
            counts["mental_models"] += len(batch)
        elif isinstance(first, StoredHistory):
            for h in batch:
                content, changed = cols.json(h.content), cols.time(h.changed_at)
                if h.id is None:
                    conn.execute(
                        self._q["import_history_new"], (bank_id, h.mental_model_id, content, changed, h.version)
                    )
                else:
                    conn.execute(
                        self._q["import_history"], (h.id, bank_id, h.mental_model_id, content, changed, h.version)
                    )
            counts["history"] += len(batch)
        elif isinstance(first, StoredOperation):
            _many(conn, self._q["import_operation"], [cols.stored_operation_params(bank_id, o) for o in batch])
            counts["operations"] += len(batch)
        elif isinstance(first, LLMRequestRecord):
            _many(conn, self._q["insert_llm_request"], [cols.llm_request_params(r) for r in batch])
            counts["llm_requests"] += len(batch)
        elif isinstance(first, SpendRecord):
            _many(conn, self._q["add_refresh_spend"], [replace(r, bank_id=bank_id).params() for r in batch])
            counts["refresh_spend"] += len(batch)
        elif isinstance(first, KnowledgeTreeImport):
            for tree in batch:
                self._write_tree(conn, bank_id, tree, counts)
        else:
            self._write_resources(conn, bank_id, batch, counts)
        return None

    def _write_tree(self, conn: Any, bank_id: str, tree: KnowledgeTreeImport, counts: Counter[str]) -> None:
        """Place an imported knowledge-base tree into the bank's (the pages' models are written already): counts
        the folders and pages written and, when the bank had a tree, the folders merged and nodes renamed."""
        merged = self._import_knowledge_tree(conn, bank_id, tree.nodes)
        for node in merged.nodes:
            counts["knowledge_folders" if node.kind == "folder" else "knowledge_pages"] += 1
        for key, value in (("knowledge_folders_merged", merged.folders_merged),
                           ("knowledge_nodes_renamed", merged.nodes_renamed),
                           ("knowledge_node_ids_replaced", merged.ids_replaced)):  # fmt: skip
            if value:
                counts[key] += value

    def _write_resources(self, conn: Any, bank_id: str, batch: list[Any], counts: Counter[str]) -> None:
        """Insert a batch of the bank's other resources: document history, directives, webhooks, deliveries."""
        cols, first = self._columns, batch[0]
        t = cols.time
        if isinstance(first, StoredDocumentEvent):
            for e in batch:
                row = (bank_id, e.document_id, e.kind, e.operation_id, e.fact_id, e.facts_added, e.facts_removed)
                if e.id is None:
                    conn.execute(self._q["insert_document_event"], (*row, t(e.created_at)))
                else:
                    conn.execute(self._q["import_document_event"], (e.id, *row, t(e.created_at)))
            counts["document_events"] += len(batch)
        elif isinstance(first, Directive):
            _many(conn, self._q["insert_directive"], [
                (bank_id, d.id, d.name, d.content, d.priority, d.is_active, cols.tags(d.tags), t(d.created_at),
                 t(d.updated_at)) for d in batch
            ])  # fmt: skip
            counts["directives"] += len(batch)
        elif isinstance(first, Webhook):
            _many(conn, self._q["insert_webhook"], [
                (bank_id, w.id, w.url, w.secret, cols.text_list(w.event_types), w.enabled, cols.json(w.http_config),
                 t(w.created_at), t(w.updated_at)) for w in batch
            ])  # fmt: skip
            counts["webhooks"] += len(batch)
        elif isinstance(first, WebhookDelivery):
            _many(conn, self._q["import_delivery"], [
                (d.id, bank_id, d.webhook_id, d.event_id, d.event_type, d.url, cols.json(d.payload), d.status,
                 d.attempts, d.operation_id, t(d.next_retry_at), d.last_error, d.last_response_status,
                 d.last_response_body, t(d.last_attempt_at), t(d.created_at), t(d.updated_at)) for d in batch
            ])  # fmt: skip
            counts["webhook_deliveries"] += len(batch)
        else:  # pragma: no cover - the ImportRow union is closed
            raise TypeError(f"cannot import {type(first).__name__}")

    # ---------------------------------------------------------------- stored files

    def put_file(self, key: str, *, bank_id: str, filename: str, content_type: str, source: BinaryIO) -> StoredFile:
        """Store the bytes read from ``source`` under ``key`` (a file already there is replaced), in chunks of
        ``FILE_CHUNK`` bytes, in one transaction. Returns the stored file's description."""
        cols = self._columns
        now = utcnow()
        size = count = 0
        with self._tx() as conn:
            conn.execute(self._q["delete_file"], (key,))
            conn.execute(self._q["insert_file"], (key, bank_id, filename, content_type, 0, 0, cols.time(now)))
            while chunk := source.read(FILE_CHUNK):
                conn.execute(self._q["insert_file_chunk"], (key, count, chunk))
                size, count = size + len(chunk), count + 1
            conn.execute(self._q["finish_file"], (size, count, key))
        return StoredFile(key, bank_id, filename, content_type, size, count, now)

    def get_file(self, key: str) -> StoredFile | None:
        """A stored file's description, or None."""
        with self._read() as conn:
            r = conn.execute(self._q["get_file"], (key,)).fetchone()
        if r is None:
            return None
        return StoredFile(
            r["key"], r["bank_id"], r["filename"], r["content_type"], int(r["byte_size"]), int(r["chunk_count"]),
            self._columns.load_time(r["created_at"]),
        )  # fmt: skip

    def read_file(self, key: str) -> Iterator[bytes]:
        """The file's bytes, one chunk per step (one short read each, so a download never holds a connection or
        the whole file). Yields nothing for an unknown key."""
        info = self.get_file(key)
        for seq in range(info.chunk_count if info else 0):
            with self._read() as conn:
                r = conn.execute(self._q["get_file_chunk"], (key, seq)).fetchone()
            if r is None:  # deleted while being read
                return
            yield bytes(r["data"])

    def delete_file(self, key: str) -> bool:
        """Delete a stored file; False when there was none."""
        return self._changed(self._q["delete_file"], (key,)) > 0

    def purge_files(self, before: datetime, *, prefix: str) -> int:
        """Delete the files whose key starts with ``prefix`` stored before ``before``; returns how many went."""
        pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        return self._changed(self._q["purge_files"], (self._columns.time(before), pattern))


class BankSnapshotReader:
    """The :class:`~mindbank.store.base.BankSnapshot` of both backends: pages of rows read on one snapshot
    connection."""

    def __init__(self, store: Any, conn: Any, bank_id: str) -> None:
        # ``store``: the backend's store, whose resource mixin maps directive, webhook and delivery rows
        self._store = store
        self._conn = conn
        self._bank_id = bank_id
        self._q = store._q
        self._cols = store._columns

    def _rows(self, statement: str, params: Sequence[Any], **slots: str) -> list[Row]:
        return list(self._conn.execute(statement.format(**slots), tuple(params)).fetchall())

    def bank(self) -> Bank | None:
        """The bank row, or None when the bank does not exist."""
        rows = self._rows(self._q["get_bank"], (self._bank_id,))
        return self._cols.bank_row(rows[0]) if rows else None

    def documents(self, document_ids: Sequence[str] | None = None) -> Iterator[StoredDocument]:
        """Documents with their chunks, ordered by id: all of them, or those of ``document_ids`` that exist."""
        if document_ids is not None:
            unique = sorted(set(document_ids))
            for start in range(0, len(unique), PAGE):
                slots, params = self._store._id_slots(unique[start : start + PAGE])
                yield from self._with_chunks(
                    self._rows(self._q["snap_documents_in"], (self._bank_id, *params), **slots)
                )
            return
        for rows in self._pages(self._q["snap_documents"]):
            yield from self._with_chunks(rows)

    def _pages(self, statement: str, after: Any = "") -> Iterator[list[Row]]:
        """The pages of a snapshot statement taking ``(bank_id, after, PAGE)`` and ordered by ``id`` (keyset
        pagination: each page starts after the previous page's last id; ``after`` is the first, below every id)."""
        while rows := self._rows(statement, (self._bank_id, after, PAGE)):
            yield rows
            after = rows[-1]["id"]

    def _with_chunks(self, rows: list[Row]) -> Iterator[StoredDocument]:
        slots, params = self._store._id_slots([r["id"] for r in rows])
        chunks: dict[str, list[Row]] = {}
        for c in self._rows(self._q["snap_chunks_in"], (self._bank_id, *params), **slots):
            chunks.setdefault(c["document_id"], []).append(c)
        for r in rows:
            yield self._cols.stored_document(r, chunks.get(r["id"], []))

    def memories(
        self, *, document_ids: Sequence[str] | None = None, observations: bool = True
    ) -> Iterator[StoredMemory]:
        """Memories in write order (``seq``) with their embeddings: every one (observations unless left out), or
        the facts of ``document_ids``."""
        wanted = None if document_ids is None else set(document_ids)
        small = wanted is not None and len(wanted) <= PAGE
        after = -1
        while True:
            if small:
                slots, params = self._store._id_slots(sorted(wanted or ()))
                rows = self._rows(self._q["snap_document_memories"], (self._bank_id, *params, after, PAGE), **slots)
            else:
                rows = self._rows(
                    self._q["snap_memories"], (self._bank_id, observations and wanted is None, after, PAGE)
                )
            if not rows:
                return
            for r in rows:
                if wanted is None or (r["document_id"] in wanted and r["fact_type"] != "observation"):
                    yield self._cols.stored_memory(r, self._store._decode_vector(r["embedding"]))
            after = int(rows[-1]["seq"])

    def mental_models(self) -> Iterator[tuple[MentalModel, list[HistoryEntry]]]:
        """Every mental model (ordered by id) with its history, oldest entry first."""
        for r in self._rows(self._q["snap_mental_models"], (self._bank_id,)):
            history = self._rows(self._q["snap_history"], (self._bank_id, r["id"]))
            yield self._cols.model_row(r), [self._cols.history_row(h) for h in history]

    def operations(self) -> Iterator[StoredOperation]:
        """Every operation of the bank with its claim, ordered by id."""
        return (self._cols.stored_operation(r) for rows in self._pages(self._q["snap_operations"]) for r in rows)

    def llm_requests(self) -> Iterator[LLMRequestRecord]:
        """Every traced LLM request of the bank, ordered by id."""
        return (self._cols.llm_request_row(r) for rows in self._pages(self._q["snap_llm_requests"]) for r in rows)

    def document_events(self) -> Iterator[StoredDocumentEvent]:
        """The change history of every document of the bank, oldest first."""
        rows = (r for page in self._pages(self._q["snap_document_events"], after=0) for r in page)
        return (self._cols.record(StoredDocumentEvent, r) for r in rows)

    def directives(self) -> list[Directive]:
        """Every directive of the bank, ordered by id."""
        return [self._store._directive_row(r) for r in self._rows(self._q["snap_directives"], (self._bank_id,))]

    def webhooks(self) -> list[Webhook]:
        """Every webhook of the bank, ordered by id."""
        return [self._store._webhook_row(r) for r in self._rows(self._q["snap_webhooks"], (self._bank_id,))]

    def deliveries(self) -> Iterator[WebhookDelivery]:
        """Every webhook delivery of the bank (the delivery log), ordered by id."""
        return (self._store._delivery_row(r) for rows in self._pages(self._q["snap_deliveries"]) for r in rows)

    def knowledge_nodes(self) -> list[KnowledgeNode]:
        """Every node of the bank's knowledge base, ordered by id (a bank's tree is small: read whole)."""
        return [self._cols.knowledge_node_row(r) for r in self._rows(self._q["snap_knowledge_nodes"], (self._bank_id,))]

    def refresh_spend(self) -> Iterator[SpendRecord]:
        """The bank's refresh spend ledger, one row per model and UTC day, ordered by day then model (the rows of
        deleted models included: their tokens still count against the bank's budget)."""
        day, model = "", ""
        while rows := self._rows(self._q["snap_refresh_spend"], (self._bank_id, day, day, model, PAGE)):
            yield from (self._cols.record(SpendRecord, r, bank_id=self._bank_id) for r in rows)
            day, model = rows[-1]["day"], rows[-1]["mental_model_id"]


def _many(conn: Any, statement: str, params: Sequence[Sequence[Any]]) -> None:
    """``executemany`` on a cursor of ``conn`` (a psycopg connection has no ``executemany`` of its own)."""
    cur = conn.cursor()
    try:
        cur.executemany(statement, params)
    finally:
        cur.close()


def _batches(rows: Iterable[Any]) -> Iterator[list[Any]]:
    """``rows`` in lists of at most ``PAGE``."""
    it = iter(rows)
    while batch := list(itertools.islice(it, PAGE)):
        yield batch


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    """The later of two optional times."""
    if a is None:
        return b
    return a if b is None or a >= b else b
