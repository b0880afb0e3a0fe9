"""Turning a checked archive into the rows one import transaction writes (``Store.import_rows``).

Two modes, as the reference defines them. ``restore`` writes a whole bank into a bank that does not exist yet:
every row keeps its id, timestamps and write stamps, so staleness and watermarks read exactly as they did at the
source (a model fresh there is fresh here and cites the same memories). ``merge`` folds the archive's documents into
an existing bank: its memories are new writes there (fresh stamps, consolidated by the bank itself), a document id
the bank already has is skipped, replaced or given a new id (``document_conflict``), and mental models the bank does
not have yet come along, with their knowledge pages (placed into the bank's tree by
:func:`~mindbank.domain.knowledge.merge_tree`). The refresh spend ledger is restored, never merged: its tokens
were spent by the bank the archive came from.

Ids the target database already uses (a clone inside one database, an archive imported twice) are renamed, with every
reference to them (:class:`~mindbank.domain.transfer.ids.IdMap`); so are records that carry none (the reference's
archives). Vectors are reused when the archive's embedding model is this server's, else computed here, before the
transaction, into a temporary file read back in order.
"""

from __future__ import annotations

import hashlib
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import IO, Any, Literal

import numpy as np
import numpy.typing as npt

from mindbank.domain.governance import RefreshState
from mindbank.domain.knowledge import KnowledgeNode
from mindbank.domain.records import Bank, Chunk, LLMRequestRecord, MemoryUnit, MentalModel, Operation
from mindbank.domain.resources import Directive, Webhook, WebhookDelivery
from mindbank.domain.tags import normalize_tags
from mindbank.domain.timeutil import utcnow
from mindbank.domain.transfer import archive as fmt
from mindbank.domain.transfer.ids import IdMap
from mindbank.engine.transfer.reader import ArchiveError, ArchiveReader, ArchiveSummary
from mindbank.providers.embeddings.base import Embedder
from mindbank.store.base import (
    DocumentReplace,
    IdKind,
    ImportRow,
    ImportTarget,
    KnowledgeTreeImport,
    SpendRecord,
    Store,
    StoredDocument,
    StoredDocumentEvent,
    StoredHistory,
    StoredMemory,
    StoredOperation,
)

Mode = Literal["restore", "merge"]
Conflict = Literal["skip", "replace", "new-id"]
EMBED_BATCH = 256
# the id spaces shared by the whole database, and how a fresh id looks in each
_NEW_ID: dict[IdKind, Callable[[], str]] = {
    "memory": lambda: str(uuid.uuid4()),
    "chunk": lambda: uuid.uuid4().hex,
    "operation": lambda: str(uuid.uuid4()),
    "llm_request": lambda: str(uuid.uuid4()),
    "delivery": lambda: str(uuid.uuid4()),
}


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """How to import: ``mode``, the bank written (``target_bank_id``), what to take (restore mode: ``include_data``
    = documents, memories and the operations log; ``include_bank_config`` = profile, overrides, directives;
    ``mental_models``; ``include_history`` = LLM requests) and, in merge mode, ``document_conflict``."""

    mode: Mode
    target_bank_id: str
    include_data: bool = True
    include_bank_config: bool = True
    mental_models: bool = True
    include_history: bool = False
    document_conflict: Conflict = "skip"


@dataclass
class ImportPlan:
    """Everything decided before the transaction: renamed ids, the fate of each conflicting document, the models
    left out, the history ids kept, the bank to create, and where vectors come from."""

    options: ImportOptions
    summary: ArchiveSummary
    ids: IdMap
    bank: Bank | None
    documents: dict[str, str | None] = field(default_factory=dict)  # archive id -> target id (None: skipped)
    replace: set[str] = field(default_factory=set)
    skip_models: set[str] = field(default_factory=set)
    keep_history_ids: bool = True
    keep_event_ids: bool = True
    reuse_vectors: bool = False
    notes: dict[str, Any] = field(default_factory=dict)
    carried: dict[str, str] = field(default_factory=dict)  # carried-over memory written: archive id -> its id here

    @property
    def restore(self) -> bool:
        return self.options.mode == "restore"

    @property
    def data(self) -> bool:
        return self.options.include_data or not self.restore

    def target(self) -> ImportTarget:
        """Where the store writes: a new bank (restore) or the merged one, stamped fresh."""
        return ImportTarget(self.options.target_bank_id, self.bank, fresh_stamps=not self.restore)

    def keeps(self, memory: fmt.MemoryRecord) -> bool:
        """Whether a memory line is imported (merge: facts of documents not skipped; observations are re-derived)."""
        if not self.data:
            return False
        if memory.fact_type == "observation":
            return self.restore
        return memory.document_id is None or self.documents.get(memory.document_id, memory.document_id) is not None

    def needs_vector(self, memory: fmt.MemoryRecord) -> bool:
        """Whether a kept memory must be embedded here (no archived vector of this server's model)."""
        return self.keeps(memory) and not (self.reuse_vectors and memory.embedding is not None)


def plan_import(
    store: Store,
    reader: ArchiveReader,
    summary: ArchiveSummary,
    options: ImportOptions,
    *,
    embedder: Embedder,
    bank_config: Callable[[dict[str, Any]], tuple[dict[str, Any], list[str]]],
) -> ImportPlan:
    """Decide the import. ``bank_config``: the bank's validator of archived overrides, returning ``(kept,
    ignored keys)``. Raises :class:`ArchiveError` for an archive that cannot go where it is asked to."""
    ext = summary.extension
    embedding = ext.embedding if ext else None
    plan = ImportPlan(
        options,
        summary,
        IdMap(),
        None,
        reuse_vectors=embedding is not None
        and embedding.model == embedder.name
        and embedding.dimension == embedder.dimension,
    )
    for kind, make in _NEW_ID.items():
        for old in sorted(store.existing_ids(kind, summary.ids.get(kind, [])), key=str):
            plan.ids.add(old, make())
    # numbered rows (identity columns) keep their archived numbers only when all of them can: one taken number, or
    # one row without a number (the database picks it), and a kept number could meet a picked one in the same import
    numbered: tuple[tuple[IdKind, str], ...] = (("history", "keep_history_ids"), ("document_event", "keep_event_ids"))
    for kind, attr in numbered:
        archived = summary.ids.get(kind, [])
        setattr(plan, attr, kind not in summary.unnumbered and not store.existing_ids(kind, archived))
    target = options.target_bank_id
    if plan.restore:
        plan.bank = _restored_bank(reader, options, bank_config, plan.notes, source=summary.manifest.source_bank_id)
    else:
        existing = store.existing_ids("document", summary.document_ids, bank_id=target)
        for doc_id in sorted(existing):
            if options.document_conflict == "skip":
                plan.documents[doc_id] = None
            elif options.document_conflict == "replace":
                plan.replace.add(doc_id)
            else:
                plan.documents[doc_id] = str(uuid.uuid4())
        plan.notes["documents_skipped"] = sum(v is None for v in plan.documents.values())
        plan.notes["observations_skipped"] = summary.observations
    if options.mental_models and summary.model_ids:
        plan.skip_models = store.existing_ids("mental_model", summary.model_ids, bank_id=target)
        plan.notes["mental_models_skipped"] = len(plan.skip_models)
        if summary.page_models:
            plan.notes["knowledge_pages_skipped"] = sum(m in plan.skip_models for m in summary.page_models)
    if options.mental_models and summary.refresh_spend and not plan.restore:
        plan.notes["refresh_spend_skipped"] = summary.refresh_spend  # the ledger is the bank's that spent it
    plan.notes["ids_renamed"] = len(plan.ids)
    return plan


def _restored_bank(
    reader: ArchiveReader,
    options: ImportOptions,
    bank_config: Callable[[dict[str, Any]], tuple[dict[str, Any], list[str]]],
    notes: dict[str, Any],
    *,
    source: str,
) -> Bank:
    """The bank row a restore creates: the archive's profile and overrides (with the bank config) and bookkeeping.
    A bank restored under another id than the one exported (a copy, a clone) is named after its own id, so two
    banks never show the same name; restored under its own id it keeps its name; an archive without a name (a
    document subset) leaves it unset (the id is what shows)."""
    now = utcnow()
    rec = reader.bank() or fmt.BankRecord()
    config: dict[str, Any] = {}
    if options.include_bank_config and rec.config:
        try:
            config, ignored = bank_config(rec.config)
        except ValueError as exc:
            raise ArchiveError(f"{fmt.BANK}: config: {exc}") from exc
        if ignored:
            notes["config_ignored"] = ignored
    keep = options.include_bank_config
    return Bank(
        bank_id=options.target_bank_id,
        name=(rec.name if rec.name is None or source == options.target_bank_id else options.target_bank_id)
        if keep
        else None,
        mission=rec.mission if keep else None,
        disposition=rec.disposition if keep else None,
        config=config,
        created_at=rec.created_at or now,
        updated_at=rec.updated_at or now,
        last_memory_write_at=rec.last_memory_write_at if options.include_data else None,
    )


def embed_missing(reader: ArchiveReader, plan: ImportPlan, embedder: Embedder) -> IO[bytes] | None:
    """Compute, in archive order, the vectors of the kept memories that carry none usable; returns a temporary file
    of float32 rows (the caller closes it), or None when every vector is reused."""
    if plan.reuse_vectors and plan.summary.vectors == plan.summary.memories:
        plan.notes["vectors_computed"] = 0
        return None  # every vector is reused: no need to read the memories again
    texts: list[str] = []
    out: IO[bytes] | None = None

    def flush() -> None:
        nonlocal out
        if texts:
            out = out or tempfile.TemporaryFile()  # noqa: SIM115 - returned to the caller, who closes it
            out.write(np.asarray(embedder.embed(texts), dtype="<f4").tobytes())
            texts.clear()

    for _, memory in reader.records(fmt.MEMORIES, fmt.MemoryRecord):
        if plan.needs_vector(memory):
            texts.append(memory.text)
            if len(texts) >= EMBED_BATCH:
                flush()
    flush()
    plan.notes["vectors_computed"] = 0 if out is None else out.tell() // (4 * embedder.dimension)
    if out is not None:
        out.seek(0)
    return out


def import_rows(
    reader: ArchiveReader, plan: ImportPlan, embedded: IO[bytes] | None, dimension: int
) -> Iterator[ImportRow]:
    """The rows of the import, in the order the store writes them: documents (each after the deletion it
    replaces), memories, the documents' history, directives and webhooks, mental models, their history, the
    knowledge tree, the refresh spend ledger (restore), the operations log, webhook deliveries, LLM requests."""
    o, ids = plan.options, plan.ids
    bank_id = o.target_bank_id
    chunk_of: dict[tuple[str, int], str] = {}  # chunks the archive gave no id: (document, index) -> new id
    if plan.data:
        for _, doc in reader.records(fmt.DOCUMENTS, fmt.DocumentRecord):
            target = plan.documents.get(doc.id, doc.id)
            if target is None:
                continue
            if doc.id in plan.replace:
                yield DocumentReplace(doc.id)
            chunks = []
            for c in doc.chunks:
                chunk_id = (
                    ids.id(c.id) if c.id is not None else chunk_of.setdefault((doc.id, c.index), _NEW_ID["chunk"]())
                )
                chunks.append(Chunk(chunk_id, target, c.index, c.text))
            yield StoredDocument(
                id=target,
                original_text=doc.original_text,
                content_hash=doc.content_hash or hashlib.sha256(doc.original_text.encode()).hexdigest(),
                tags=normalize_tags(doc.tags),
                metadata=doc.metadata,
                context=doc.context,
                created_at=doc.created_at,
                updated_at=doc.updated_at or doc.created_at,
                chunks=tuple(chunks),
            )
        yield from _memories(reader, plan, chunk_of, embedded, dimension)
        for _, e in reader.records(fmt.DOCUMENT_HISTORY, fmt.DocumentEventRecord):
            target = plan.documents.get(e.document_id, e.document_id)
            if target is not None:
                kept = e.id if plan.keep_event_ids else None
                yield StoredDocumentEvent(target, e.kind, e.created_at, ids.id(e.operation_id), ids.id(e.fact_id),
                                          e.facts_added, e.facts_removed, kept)  # fmt: skip
    if plan.restore and o.include_bank_config:
        yield from _bank_config(reader, bank_id)
    if o.mental_models:
        for _, rec in reader.records(fmt.MENTAL_MODELS, fmt.MentalModelRecord):
            if rec.id not in plan.skip_models:
                yield _model(rec, bank_id, ids, plan.carried)
        for _, rec in reader.records(fmt.MENTAL_MODELS, fmt.MentalModelRecord):
            if rec.id not in plan.skip_models:
                for h in rec.history:
                    kept = h.id if plan.keep_history_ids else None
                    yield StoredHistory(rec.id, ids.json(h.content), h.changed_at, kept, h.version)
        tree = _tree(reader, plan)
        if tree.nodes:
            yield tree
        if plan.restore:
            for _, spend in reader.records(fmt.REFRESH_SPEND, fmt.RefreshSpendRecord):
                yield SpendRecord(bank_id, spend.mental_model_id, spend.day, spend.refreshes, spend.llm_calls,
                                  spend.input_tokens, spend.output_tokens)  # fmt: skip
    if plan.restore and o.include_data:
        for _, op in reader.records(fmt.OPERATIONS, fmt.OperationRecord):
            yield _operation(op, bank_id, ids)
    if plan.restore and o.include_history and o.include_bank_config:
        for _, d in reader.records(fmt.DELIVERIES, fmt.DeliveryRecord):
            yield WebhookDelivery(
                id=ids.id(d.id) or d.id, bank_id=bank_id, webhook_id=d.webhook_id, event_id=d.event_id,
                event_type=d.event_type, url=d.url, payload=ids.json(d.payload), status=d.status, attempts=d.attempts,
                created_at=d.created_at, updated_at=d.updated_at or d.created_at, operation_id=ids.id(d.operation_id),
                next_retry_at=d.next_retry_at, last_error=d.last_error, last_response_status=d.last_response_status,
                last_response_body=d.last_response_body, last_attempt_at=d.last_attempt_at,
            )  # fmt: skip
    if plan.restore and o.include_history:
        for _, r in reader.records(fmt.LLM_REQUESTS, fmt.LLMRequestRecord):
            yield LLMRequestRecord(
                id=ids.id(r.id) or r.id, bank_id=bank_id, operation_id=ids.id(r.operation_id), scope=r.scope,
                provider=r.provider, model=r.model, attempt=r.attempt, request=ids.json(r.request),
                response=ids.json(r.response), error=r.error, input_tokens=r.input_tokens,
                output_tokens=r.output_tokens, duration_ms=r.duration_ms, created_at=r.created_at,
            )  # fmt: skip


def _tree(reader: ArchiveReader, plan: ImportPlan) -> KnowledgeTreeImport:
    """The archive's knowledge base in the target bank, parents first; a page whose mental model the bank already
    has is left out with it (the bank keeps its own model, and its place in the tree)."""
    now = utcnow()
    nodes = []
    for _, n in reader.records(fmt.KNOWLEDGE_NODES, fmt.KnowledgeNodeRecord):
        if n.mental_model_id not in plan.skip_models:
            created = n.created_at or now
            nodes.append(KnowledgeNode(n.id, plan.options.target_bank_id, n.kind, n.name, n.parent_id,
                                       n.mental_model_id, created, n.updated_at or created))  # fmt: skip
    return KnowledgeTreeImport(tuple(nodes))


def _bank_config(reader: ArchiveReader, bank_id: str) -> Iterator[ImportRow]:
    """A restored bank's directives and webhooks (their ids are the bank's own: kept, or made when missing)."""
    now = utcnow()
    for _, d in reader.records(fmt.DIRECTIVES, fmt.DirectiveRecord):
        yield Directive(
            id=d.id or str(uuid.uuid4()), bank_id=bank_id, name=d.name, content=d.content, priority=d.priority,
            is_active=d.is_active, tags=normalize_tags(d.tags), created_at=d.created_at or now,
            updated_at=d.updated_at or d.created_at or now,
        )  # fmt: skip
    for _, w in reader.records(fmt.WEBHOOKS, fmt.WebhookRecord):
        yield Webhook(
            id=w.id or str(uuid.uuid4()), bank_id=bank_id, url=w.url, secret=w.secret,
            event_types=tuple(w.event_types), enabled=w.enabled, http_config=w.http_config,
            created_at=w.created_at or now, updated_at=w.updated_at or w.created_at or now,
        )  # fmt: skip


def _memories(
    reader: ArchiveReader,
    plan: ImportPlan,
    chunk_of: dict[tuple[str, int], str],
    embedded: IO[bytes] | None,
    dimension: int,
) -> Iterator[StoredMemory]:
    ids, bank_id = plan.ids, plan.options.target_bank_id
    # facts the archive gave no consolidation bookkeeping count as consolidated when it carries their observations
    consolidated_default = plan.summary.extension is None and plan.summary.observations > 0
    line_ids: list[str] = []
    for _, rec in reader.records(fmt.MEMORIES, fmt.MemoryRecord):
        memory_id = (ids.id(rec.id) if rec.id is not None else None) or _NEW_ID["memory"]()
        line_ids.append(memory_id)
        if not plan.keeps(rec):
            continue
        if rec.id is not None and rec.id in plan.summary.carried_over:
            plan.carried[rec.id] = memory_id
        document_id = None if rec.document_id is None else plan.documents.get(rec.document_id, rec.document_id)
        chunk_id = ids.id(rec.chunk_id)
        if chunk_id is None and rec.document_id is not None and rec.chunk_index is not None:
            chunk_id = chunk_of.get((rec.document_id, rec.chunk_index))
        if rec.source_memory_ids is not None:
            sources = ids.ids(rec.source_memory_ids)
        else:
            sources = None if rec.source_refs is None else tuple(line_ids[r] for r in rec.source_refs)
        updated = rec.updated_at or rec.created_at
        yield StoredMemory(
            MemoryUnit(
                id=memory_id,
                bank_id=bank_id,
                text=rec.text,
                fact_type=rec.fact_type,
                tags=normalize_tags(rec.tags),
                context=rec.context,
                metadata=rec.metadata,
                document_id=document_id,
                chunk_id=chunk_id,
                occurred_start=rec.occurred_start,
                occurred_end=rec.occurred_end,
                mentioned_at=rec.mentioned_at,
                created_at=rec.created_at,
                updated_at=updated,
                source_memory_ids=sources,
                proof_count=rec.proof_count,
                mention_count=rec.mention_count,
                last_mentioned_at=rec.last_mentioned_at,
            ),
            _vector(rec, plan, embedded, dimension),
            rec.consolidated_at if plan.summary.extension is not None else (updated if consolidated_default else None),
            repeat_key=rec.repeat_key,
        )


def _vector(
    rec: fmt.MemoryRecord, plan: ImportPlan, embedded: IO[bytes] | None, dimension: int
) -> npt.NDArray[np.float32]:
    if not plan.needs_vector(rec) and rec.embedding is not None:
        return fmt.decode_vector(rec.embedding, dimension)
    raw = embedded.read(4 * dimension) if embedded is not None else b""
    if len(raw) != 4 * dimension:  # pragma: no cover - embed_missing wrote one row per such memory
        raise RuntimeError("precomputed vectors ran out before the memories did")
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


def _model(rec: fmt.MentalModelRecord, bank_id: str, ids: IdMap, carried: dict[str, str]) -> MentalModel:
    """A mental model as imported. Its governance record comes along (failures, re-anchor, the last refusal) with
    the facts it carries over renamed to their ids here; a carried fact this import did not write (not in the
    archive, an observation a merge leaves out, a skipped document's) is dropped: it is not in the bank to place."""
    now = utcnow()
    created = rec.created_at or now
    state = RefreshState.from_dict(rec.refresh_state)
    state = replace(state, carried_over=tuple(carried[i] for i in state.carried_over if i in carried))
    return MentalModel(
        id=rec.id,
        bank_id=bank_id,
        name=rec.name,
        source_query=rec.source_query,
        content=ids.text(rec.content),
        tags=normalize_tags(rec.tags),
        max_tokens=rec.max_tokens,
        trigger=rec.trigger,
        structured_document=ids.json(rec.structured_document),
        reflect_response=ids.json(rec.reflect_response),
        last_refreshed_at=rec.last_refreshed_at or created,
        last_memory_seen_at=rec.last_memory_seen_at,
        last_refreshed_source_query=rec.last_refreshed_source_query,
        last_refresh_failed_at=rec.last_refresh_failed_at,
        last_full_refreshed_at=rec.last_full_refreshed_at,
        created_at=created,
        cleared_at=rec.cleared_at,
        refresh_state=state,
    )


def _operation(op: fmt.OperationRecord, bank_id: str, ids: IdMap) -> StoredOperation:
    updated: datetime = op.updated_at or op.created_at
    return StoredOperation(
        Operation(
            id=ids.id(op.id) or op.id,
            bank_id=bank_id,
            operation_type=op.operation_type,
            status=op.status,
            payload=ids.json(op.payload),
            result=ids.json(op.result),
            error=op.error,
            retry_count=op.retry_count,
            next_retry_at=op.next_retry_at,
            mental_model_id=op.mental_model_id,
            created_at=op.created_at,
            updated_at=updated,
            completed_at=op.completed_at,
            progress=ids.json(op.progress),
        ),
        op.worker_id,
        op.lease_expires_at,
    )
