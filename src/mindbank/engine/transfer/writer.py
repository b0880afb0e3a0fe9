"""Writing a bank transfer archive from a store snapshot (format: :mod:`mindbank.domain.transfer.archive`).

Every section streams from the snapshot's pages into its ZIP member as it is read, so an export holds one page of
rows at a time plus two id → position maps (an observation names its sources by line, a fact its chunk by index);
the archive itself goes to a file, never to memory. The manifest is written last, with the counts.
"""

from __future__ import annotations

import zipfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any, BinaryIO

from mindbank.domain.knowledge import KnowledgeNode, walk
from mindbank.domain.records import Bank, HistoryEntry, MentalModel
from mindbank.domain.timeutil import utcnow
from mindbank.domain.transfer import archive as fmt
from mindbank.store.base import BankSnapshot, StoredDocument, StoredMemory, StoredOperation


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """What an archive carries. ``documents``: documents and their facts (``include_data``), with ``observations``
    and the ``operations`` log; ``bank_config``: the bank's profile and overrides (and directives); ``mental_models``
    with their history, governance records and the knowledge base (its folders and pages); ``refresh_spend``: the
    bank's refresh spend ledger, with the mental models (a clone leaves it out: the new bank has spent nothing);
    ``llm_requests`` (``include_history``). ``document_ids``: only these documents' facts and no bank-level section
    (the reference's document subset)."""

    documents: bool = True
    observations: bool = True
    operations: bool = True
    bank_config: bool = True
    mental_models: bool = True
    llm_requests: bool = False
    document_ids: tuple[str, ...] | None = None
    refresh_spend: bool = True

    @property
    def whole_bank(self) -> bool:
        """Whether bank-level sections may be written (not a document subset)."""
        return self.document_ids is None


def write_archive(
    snapshot: BankSnapshot,
    out: BinaryIO,
    options: ExportOptions,
    *,
    bank_id: str,
    embedding: fmt.EmbeddingInfo,
    producer: str,
    skip_operations: Iterable[str] = (),
) -> dict[str, int]:
    """Write the archive of ``snapshot`` to ``out`` (a writable, seekable binary file); returns the count of
    records per section. ``skip_operations``: operations left out of the log (the export's own, still running).
    Raises ``LookupError`` when the bank does not exist in the snapshot."""
    bank = snapshot.bank()
    if bank is None:
        raise LookupError(f"bank {bank_id!r} does not exist")
    counts: Counter[str] = Counter()
    whole = options.whole_bank
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        if whole:
            zf.writestr(fmt.BANK, _bank_record(bank, options.bank_config).line())
        if options.documents:
            ids = list(options.document_ids) if options.document_ids is not None else None
            with zf.open(fmt.DOCUMENTS, "w", force_zip64=True) as member:
                for doc in snapshot.documents(ids):
                    member.write(_document_record(doc).line())
                    counts["documents"] += 1
            with zf.open(fmt.MEMORIES, "w", force_zip64=True) as member:
                memories = snapshot.memories(document_ids=ids, observations=whole and options.observations)
                counts.update(_write_memories(member, memories))
            wanted = None if ids is None else set(ids)
            with zf.open(fmt.DOCUMENT_HISTORY, "w", force_zip64=True) as member:
                for event in snapshot.document_events():
                    if wanted is None or event.document_id in wanted:
                        member.write(fmt.DocumentEventRecord.model_validate(event, from_attributes=True).line())
                        counts["document_events"] += 1
        if whole and options.mental_models:
            with zf.open(fmt.MENTAL_MODELS, "w", force_zip64=True) as member:
                for model, history in snapshot.mental_models():
                    member.write(_model_record(model, history).line())
                    counts["mental_models"] += 1
                    counts["history"] += len(history)
            counts.update(_write_tree(zf, snapshot.knowledge_nodes()))
            if options.refresh_spend:
                counts["refresh_spend"] = _write_all(zf, fmt.REFRESH_SPEND, fmt.RefreshSpendRecord,
                                                     snapshot.refresh_spend())  # fmt: skip
        if whole and options.bank_config:
            counts["directives"] = _write_all(zf, fmt.DIRECTIVES, fmt.DirectiveRecord, snapshot.directives())
            counts["webhooks"] = _write_all(zf, fmt.WEBHOOKS, fmt.WebhookRecord, snapshot.webhooks())
        if whole and options.documents and options.operations:
            skip = set(skip_operations)
            with zf.open(fmt.OPERATIONS, "w", force_zip64=True) as member:
                for stored in snapshot.operations():
                    if stored.operation.id not in skip:
                        member.write(_operation_record(stored).line())
                        counts["operations"] += 1
        if whole and options.llm_requests:
            counts["llm_requests"] = _write_all(zf, fmt.LLM_REQUESTS, fmt.LLMRequestRecord, snapshot.llm_requests())
            if options.bank_config:  # the delivery log goes with the webhooks it belongs to
                counts["webhook_deliveries"] = _write_all(zf, fmt.DELIVERIES, fmt.DeliveryRecord, snapshot.deliveries())
        manifest = fmt.Manifest(
            format=fmt.FORMAT,
            format_version=fmt.FORMAT_VERSION,
            source_bank_id=bank_id,
            exported_at=utcnow(),
            producer=producer,
            contents=fmt.Contents(
                data=options.documents,
                bank_config=whole and options.bank_config,
                history=whole and options.llm_requests,
                observations=whole and options.documents and options.observations,
                mental_models=whole and options.mental_models,
            ),
            document_ids=None if whole else list(options.document_ids or ()),
            counts=dict(counts),
            extensions={fmt.EXTENSION: fmt.Extension(ids=True, embedding=embedding).model_dump(mode="json")},
        )
        zf.writestr(fmt.MANIFEST, manifest.model_dump_json(indent=2))
    return dict(counts)


def _write_all(zf: zipfile.ZipFile, name: str, record: type[fmt.Record], rows: Iterable[Any]) -> int:
    """Write every row as a record line of the member ``name``; returns how many."""
    count = 0
    with zf.open(name, "w", force_zip64=True) as member:
        for row in rows:
            member.write(record.model_validate(row, from_attributes=True).line())
            count += 1
    return count


def _write_tree(zf: zipfile.ZipFile, nodes: Sequence[KnowledgeNode]) -> Counter[str]:
    """The knowledge base, a parent before its children (depth first, in display order), so an importer places each
    node under a folder it has already placed."""
    counts: Counter[str] = Counter()
    with zf.open(fmt.KNOWLEDGE_NODES, "w", force_zip64=True) as member:
        for node, _ in walk(nodes):
            member.write(fmt.KnowledgeNodeRecord.model_validate(node, from_attributes=True).line())
            counts["knowledge_folders" if node.kind == "folder" else "knowledge_pages"] += 1
    return counts


def _write_memories(member: IO[bytes], memories: Iterable[StoredMemory]) -> Counter[str]:
    """Memories in write order; an observation names its sources by their line here too (the portable form)."""
    counts: Counter[str] = Counter()
    line_of: dict[str, int] = {}
    for line, stored in enumerate(memories):
        m = stored.memory
        record = fmt.MemoryRecord.model_validate(m, from_attributes=True)
        record.chunk_index = stored.chunk_index
        record.consolidated_at = stored.consolidated_at
        record.repeat_key = stored.repeat_key
        record.embedding = fmt.encode_vector(stored.embedding)
        if m.source_memory_ids is not None:
            record.source_refs = [line_of[s] for s in m.source_memory_ids if s in line_of]
        member.write(record.line())
        line_of[m.id] = line
        counts["observations" if m.fact_type == "observation" else "facts"] += 1
    return counts


def _bank_record(bank: Bank, with_config: bool) -> fmt.BankRecord:
    """``bank.json``: the bookkeeping always, profile and overrides with the bank config."""
    return fmt.BankRecord(
        name=bank.name if with_config else None,
        mission=bank.mission if with_config else None,
        disposition=bank.disposition if with_config else None,
        config=bank.config if with_config else None,
        created_at=bank.created_at,
        updated_at=bank.updated_at,
        last_memory_write_at=bank.last_memory_write_at,
    )


def _document_record(doc: StoredDocument) -> fmt.DocumentRecord:
    return fmt.DocumentRecord.model_validate(doc, from_attributes=True)


def _model_record(model: MentalModel, history: Sequence[HistoryEntry]) -> fmt.MentalModelRecord:
    record = fmt.MentalModelRecord.model_validate(model, from_attributes=True)
    record.history = [fmt.HistoryRecord.model_validate(h, from_attributes=True) for h in history]
    return record


def _operation_record(stored: StoredOperation) -> fmt.OperationRecord:
    record = fmt.OperationRecord.model_validate(stored.operation, from_attributes=True)
    record.worker_id = stored.worker_id
    record.lease_expires_at = stored.lease_expires_at
    return record
