"""Reading a bank transfer archive: opening it, streaming its records, and checking all of it before anything is
written (:func:`inspect_archive`).

A file that is not a ZIP, a ZIP without a transfer manifest (another kind of archive), a record that is not JSON or
not the right shape, or a reference inside the archive that leads nowhere (a fact's document or chunk, an
observation's source line, a knowledge node's parent or page model) raises :class:`ArchiveError` naming the member,
the line and the field. Records stream line by line; what the check keeps is ids, never rows.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, TypeVar

from pydantic import BaseModel, ValidationError

from mindbank.domain.governance import RefreshState
from mindbank.domain.limits import scan_json
from mindbank.domain.transfer import archive as fmt
from mindbank.domain.transfer.limits import check_record
from mindbank.errors import InvalidInputError

R = TypeVar("R", bound=BaseModel)
# a single record (one line) larger than this is refused rather than read into memory
MAX_LINE_BYTES = 256 << 20
# a member may inflate to at most this many times its compressed size (past a first MiB): JSON lines compress about
# 5-20x and vectors barely, so only a ZIP bomb goes past it; checked while streaming, before the work it would cost
MAX_RATIO = 200
RATIO_FLOOR = 1 << 20
MAX_MEMBER_BYTES = 4 << 30  # inflated bytes of one member, whatever its ratio
MAX_BLANK_LINES = 10_000  # blank lines of a whole archive (a producer writes none)
# what zipfile and zlib raise for a member they cannot read: a bad CRC, a corrupt deflate stream, an encrypted
# member (RuntimeError), an unknown compression method (NotImplementedError), a truncated member
_MEMBER_ERRORS = (zipfile.BadZipFile, zlib.error, RuntimeError, NotImplementedError, EOFError, OSError, ValueError)


class ArchiveError(ValueError):
    """The archive cannot be imported; the message names the member, line and field at fault."""


class ArchiveReader:
    """An open archive (path or seekable binary file): its manifest, extension, and records member by member.
    Use as a context manager. Raises :class:`ArchiveError` when the file is not a transfer archive."""

    def __init__(self, source: str | IO[bytes]) -> None:
        self.blank_lines = 0
        self._inflated = 0
        try:
            self._zip = zipfile.ZipFile(source)
        except _MEMBER_ERRORS as exc:
            raise ArchiveError("archive: not a ZIP file") from exc
        try:
            self.names = set(self._zip.namelist())
            if fmt.MANIFEST not in self.names:
                raise ArchiveError(f"archive: no {fmt.MANIFEST}, so not a bank transfer archive")
            self.manifest = _validated(fmt.Manifest, self._json(fmt.MANIFEST), fmt.MANIFEST)
            try:
                self.extension = self.manifest.extension()
            except ValidationError as exc:
                raise ArchiveError(fmt.record_error(f"{fmt.MANIFEST}: extensions.{fmt.EXTENSION}", exc)) from exc
        except BaseException:
            self._zip.close()
            raise

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the ZIP file."""
        self._zip.close()

    def _open(self, member: str) -> IO[bytes]:
        """A member opened for streaming; what it may inflate to is counted from here (:meth:`_read`)."""
        try:
            info = self._zip.getinfo(member)
            opened = self._zip.open(info)
        except _MEMBER_ERRORS as exc:
            raise ArchiveError(f"{member}: cannot be read ({exc})") from exc
        self._inflated = 0
        self._budget = min(MAX_MEMBER_BYTES, max(RATIO_FLOOR, MAX_RATIO * info.compress_size))
        return opened

    def _read(self, member: str, read: Callable[[], bytes]) -> bytes:
        """``read()`` on the open member, its errors named and its inflated size held to the member's budget."""
        try:
            data = read()
        except _MEMBER_ERRORS as exc:
            raise ArchiveError(f"{member}: cannot be read ({exc})") from exc
        self._inflated += len(data)
        if self._inflated > self._budget:
            raise ArchiveError(
                f"{member}: inflates to more than {self._budget} bytes ({MAX_RATIO}x its compressed size at most)"
            )
        return data

    def _json(self, member: str) -> Any:
        with self._open(member) as raw:
            return _decoded(self._read(member, lambda: raw.read(MAX_LINE_BYTES + 1)), member)

    def bank(self) -> fmt.BankRecord | None:
        """``bank.json``, or None when the archive has none."""
        return _validated(fmt.BankRecord, self._json(fmt.BANK), fmt.BANK) if fmt.BANK in self.names else None

    def records(self, member: str, model: type[R]) -> Iterator[tuple[int, R]]:
        """``(line number, record)`` for every line of a JSON-lines member (none when the member is absent)."""
        if member not in self.names:
            return
        with self._open(member) as raw:
            number = 0
            while line := self._read(member, lambda: raw.readline(MAX_LINE_BYTES + 1)):
                number += 1
                where = f"{member} line {number}"
                if len(line) > MAX_LINE_BYTES:
                    raise ArchiveError(f"{where}: longer than {MAX_LINE_BYTES} bytes")
                if not line.strip():
                    self.blank_lines += 1
                    if self.blank_lines > MAX_BLANK_LINES:
                        raise ArchiveError(f"{where}: more than {MAX_BLANK_LINES} blank lines")
                    continue
                yield number, _validated(model, _decoded(line, where), where)


def _decoded(raw: bytes, where: str) -> Any:
    """One JSON document of the archive, under the JSON scan of every request body (``limits.scan_json``: depth,
    NUL, 64-bit integers, finite numbers, lone surrogates). Raises :class:`ArchiveError` naming where."""
    try:
        data = json.loads(raw)
    except RecursionError as exc:
        raise ArchiveError(f"{where}: nests too deep") from exc
    except ValueError as exc:
        raise ArchiveError(f"{where}: not valid JSON ({exc})") from exc
    problem = scan_json(data)
    if problem is not None:
        path, _, message = problem
        raise ArchiveError(f"{where}: {'.'.join(map(str, path)) or '(record)'}: {message}")
    return data


def _validated(model: type[R], data: Any, where: str) -> R:
    """A record of the archive, valid for its model and under the importing server's limits."""
    try:
        record = model.model_validate(data)
    except ValidationError as exc:
        raise ArchiveError(fmt.record_error(where, exc)) from exc
    try:
        check_record(record)
    except InvalidInputError as exc:
        raise ArchiveError(f"{where}: {exc.field}: {exc.message}") from exc
    return record


@dataclass
class ArchiveSummary:
    """What :func:`inspect_archive` learned: counts, and the ids the archive carries per id space (for collision
    checks). ``memories``: lines of ``memories.jsonl``; ``observations`` among them. ``page_models``: the mental
    models placed as knowledge pages; ``carried_over``: the memory ids the models' governance records carry over."""

    manifest: fmt.Manifest
    extension: fmt.Extension | None
    document_ids: list[str] = field(default_factory=list)
    memories: int = 0
    observations: int = 0
    vectors: int = 0
    model_ids: list[str] = field(default_factory=list)
    directives: int = 0
    webhooks: int = 0
    ids: dict[str, list[Any]] = field(default_factory=dict)
    knowledge_folders: int = 0
    page_models: list[str] = field(default_factory=list)
    refresh_spend: int = 0
    carried_over: set[str] = field(default_factory=set)
    unnumbered: set[str] = field(default_factory=set)  # id spaces with a record that carries no id

    def counts(self) -> dict[str, int]:
        """Records per section."""
        return {
            "documents": len(self.document_ids),
            "facts": self.memories - self.observations,
            "observations": self.observations,
            "mental_models": len(self.model_ids),
            "knowledge_folders": self.knowledge_folders,
            "knowledge_pages": len(self.page_models),
            "refresh_spend": self.refresh_spend,
            "directives": self.directives,
            "webhooks": self.webhooks,
            "document_events": len(self.ids.get("document_event", [])),
            "operations": len(self.ids.get("operation", [])),
            "llm_requests": len(self.ids.get("llm_request", [])),
            "webhook_deliveries": len(self.ids.get("delivery", [])),
        }


def inspect_archive(reader: ArchiveReader) -> ArchiveSummary:
    """Check every record of the archive (one streaming pass). Raises :class:`ArchiveError` naming the first
    problem: malformed records, duplicate ids, a fact or a document change whose document (or chunk) the archive does
    not hold, an observation whose source line is not an earlier line, a vector that does not match the manifest's
    dimension, a delivery of a webhook the archive does not hold, a knowledge tree that breaks the tree's rules
    (:func:`_check_tree`), a model's spend on one day twice."""
    summary = ArchiveSummary(reader.manifest, reader.extension)
    reader.bank()
    kinds = ("memory", "chunk", "history", "operation", "llm_request", "document_event", "delivery", "webhook")
    ids: dict[str, list[Any]] = {k: [] for k in kinds}
    seen: dict[str, set[Any]] = {k: set() for k in ids}

    def claim(kind: str, value: Any, where: str) -> None:
        if value is None:
            summary.unnumbered.add(kind)
            return
        if value in seen[kind]:
            raise ArchiveError(f"{where}: {kind} id {value!r} appears twice")
        seen[kind].add(value)
        ids[kind].append(value)

    chunk_indexes: dict[str, set[int]] = {}
    for number, doc in reader.records(fmt.DOCUMENTS, fmt.DocumentRecord):
        where = f"{fmt.DOCUMENTS} line {number}"
        if doc.id in chunk_indexes:
            raise ArchiveError(f"{where}: id: document {doc.id!r} appears twice")
        chunk_indexes[doc.id] = {c.index for c in doc.chunks}
        summary.document_ids.append(doc.id)
        for c in doc.chunks:
            claim("chunk", c.id, where)
    dimension = reader.extension.embedding.dimension if reader.extension and reader.extension.embedding else None
    for number, memory in reader.records(fmt.MEMORIES, fmt.MemoryRecord):
        where = f"{fmt.MEMORIES} line {number}"
        _check_memory(memory, where, summary.memories, chunk_indexes, dimension)
        claim("memory", memory.id, where)
        summary.memories += 1
        summary.observations += memory.fact_type == "observation"
        summary.vectors += memory.embedding is not None
    model_ids: set[str] = set()
    for number, model in reader.records(fmt.MENTAL_MODELS, fmt.MentalModelRecord):
        where = f"{fmt.MENTAL_MODELS} line {number}"
        if model.id in model_ids:
            raise ArchiveError(f"{where}: id: mental model {model.id!r} appears twice")
        model_ids.add(model.id)
        summary.model_ids.append(model.id)
        for h in model.history:
            claim("history", h.id, where)
        summary.carried_over.update(RefreshState.from_dict(model.refresh_state).carried_over)
    _check_tree(reader, model_ids, summary)
    spent: set[tuple[str, str]] = set()
    for number, spend in reader.records(fmt.REFRESH_SPEND, fmt.RefreshSpendRecord):
        key = (spend.mental_model_id, spend.day)
        if key in spent:
            raise ArchiveError(f"{fmt.REFRESH_SPEND} line {number}: day: model {key[0]!r} has {key[1]} twice")
        spent.add(key)
    summary.refresh_spend = len(spent)
    for number, event in reader.records(fmt.DOCUMENT_HISTORY, fmt.DocumentEventRecord):
        where = f"{fmt.DOCUMENT_HISTORY} line {number}"
        if event.document_id not in chunk_indexes:
            raise ArchiveError(f"{where}: document_id: {event.document_id!r} is not in {fmt.DOCUMENTS}")
        claim("document_event", event.id, where)
    for _, _directive in reader.records(fmt.DIRECTIVES, fmt.DirectiveRecord):
        summary.directives += 1
    for number, webhook in reader.records(fmt.WEBHOOKS, fmt.WebhookRecord):
        claim("webhook", webhook.id, f"{fmt.WEBHOOKS} line {number}")
        summary.webhooks += 1
    for number, op in reader.records(fmt.OPERATIONS, fmt.OperationRecord):
        claim("operation", op.id, f"{fmt.OPERATIONS} line {number}")
    for number, request in reader.records(fmt.LLM_REQUESTS, fmt.LLMRequestRecord):
        claim("llm_request", request.id, f"{fmt.LLM_REQUESTS} line {number}")
    for number, delivery in reader.records(fmt.DELIVERIES, fmt.DeliveryRecord):
        where = f"{fmt.DELIVERIES} line {number}"
        if delivery.webhook_id not in seen["webhook"]:
            raise ArchiveError(f"{where}: webhook_id: {delivery.webhook_id!r} is not in {fmt.WEBHOOKS}")
        claim("delivery", delivery.id, where)
    summary.ids = ids
    return summary


def _check_tree(reader: ArchiveReader, model_ids: set[str], summary: ArchiveSummary) -> None:
    """``knowledge_nodes.jsonl`` keeps the tree's rules: unique ids, a parent that is an earlier folder, names unique
    among siblings, a page naming a mental model of the archive that no other page names."""
    kinds: dict[str, str] = {}
    names: set[tuple[str | None, str]] = set()
    pages: set[str] = set()
    for number, node in reader.records(fmt.KNOWLEDGE_NODES, fmt.KnowledgeNodeRecord):
        where = f"{fmt.KNOWLEDGE_NODES} line {number}"
        if node.id in kinds:
            raise ArchiveError(f"{where}: id: node {node.id!r} appears twice")
        if node.parent_id is not None and kinds.get(node.parent_id) != "folder":
            raise ArchiveError(f"{where}: parent_id: {node.parent_id!r} is not a folder on an earlier line")
        if (node.parent_id, node.name) in names:
            raise ArchiveError(f"{where}: name: {node.name!r} is taken by a sibling")
        if node.mental_model_id is not None:
            if node.mental_model_id not in model_ids:
                raise ArchiveError(f"{where}: mental_model_id: {node.mental_model_id!r} is not in {fmt.MENTAL_MODELS}")
            if node.mental_model_id in pages:
                raise ArchiveError(f"{where}: mental_model_id: {node.mental_model_id!r} is already a page")
            pages.add(node.mental_model_id)
            summary.page_models.append(node.mental_model_id)
        else:
            summary.knowledge_folders += 1
        kinds[node.id] = node.kind
        names.add((node.parent_id, node.name))


def _check_memory(
    memory: fmt.MemoryRecord, where: str, line: int, chunk_indexes: dict[str, set[int]], dimension: int | None
) -> None:
    if memory.document_id is not None and memory.document_id not in chunk_indexes:
        raise ArchiveError(f"{where}: document_id: {memory.document_id!r} is not in {fmt.DOCUMENTS}")
    if memory.chunk_index is not None:
        if memory.document_id is None:
            raise ArchiveError(f"{where}: chunk_index: a fact without a document has no chunk")
        if memory.chunk_index not in chunk_indexes[memory.document_id]:
            raise ArchiveError(
                f"{where}: chunk_index: document {memory.document_id!r} has no chunk {memory.chunk_index}"
            )
    for ref in memory.source_refs or ():
        if not 0 <= ref < line:
            raise ArchiveError(f"{where}: source_refs: {ref} is not an earlier line of {fmt.MEMORIES}")
    if memory.embedding is not None and dimension is not None:
        try:
            fmt.decode_vector(memory.embedding, dimension)
        except ValueError as exc:
            raise ArchiveError(f"{where}: embedding: {exc}") from exc
