"""Bank backup and migration: export a bank (or some documents) to a transfer archive, import one (restore a whole
bank, or merge documents into one), clone a bank; the archive's format is :mod:`mindbank.domain.transfer.archive`.

Each is an operation, as in the reference: submitting checks what can be checked at once (the bank, the target,
every record of an uploaded archive: a malformed or foreign archive is a 422 naming the member, line and field) and
queues the work; the worker writes the export to file storage (``GET /v1/default/files/download/{key}``), or applies
the import in one transaction. An uploaded archive waits in file storage and is deleted by the transaction that
imports it, so a rerun finds it gone and knows the import committed (the effect happens once).
"""

from __future__ import annotations

import io
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from datetime import timedelta
from typing import IO, Any, BinaryIO, Literal, cast

from mindbank.config import BANK_OVERRIDABLE
from mindbank.domain.access import Principal, check_new_bank
from mindbank.domain.limits import Limits
from mindbank.domain.records import Operation
from mindbank.domain.transfer.archive import EmbeddingInfo
from mindbank.engine.transfer.importer import ImportOptions, embed_missing, import_rows, plan_import
from mindbank.engine.transfer.reader import ArchiveError, ArchiveReader, ArchiveSummary, inspect_archive
from mindbank.engine.transfer.writer import ExportOptions, write_archive
from mindbank.errors import ConflictError, InvalidInputError, NotFoundError
from mindbank.service.banks import config_value_problem
from mindbank.service.core import ServiceCore, ServiceState
from mindbank.service.operations import OperationsService
from mindbank.store.base import AlreadyExists, FileGone, StoredFile
from mindbank.version import __version__
from mindbank.worker.runner import PermanentFailure

EXPORT_TYPES = ("bank_transfer_export", "document_export")
IMPORT_TYPES = ("bank_transfer_import", "document_import")
CLONE_TYPE = "clone_bank"
# counts of an import that say how its knowledge tree was placed in the bank's (reported as they are)
TREE_NOTES = ("knowledge_folders_merged", "knowledge_nodes_renamed", "knowledge_node_ids_replaced")
DOWNLOAD_PATH = "/v1/default/files/download/"
MERGE_ATTEMPTS = 5  # plans of one merge when other merges into the same bank keep committing first
ZIP = "application/zip"


def archived_config(config: dict[str, Any], limits: Limits) -> tuple[dict[str, Any], list[str]]:
    """An archive's bank overrides as this server keeps them: ``(kept, ignored keys)``; keys it has no such setting
    for are ignored (another version, the reference). Raises ``ValueError`` naming a known key with a wrong value."""
    kept, ignored = {}, []
    for key, value in config.items():
        kind = BANK_OVERRIDABLE.get(key)
        if kind is None:
            ignored.append(key)
        elif value is not None:
            problem = config_value_problem(key, kind, value, limits)
            if problem:
                raise ValueError(f"{key} {problem}")
            kept[key] = value
    return kept, sorted(ignored)


class TransferService(ServiceCore):
    """Transfer methods of the service."""

    def __init__(self, state: ServiceState, *, operations: OperationsService) -> None:
        super().__init__(state)
        self.operations = operations

    # ---------------------------------------------------------------- submitting

    def export_bank(
        self,
        bank_id: str,
        *,
        include_data: bool = True,
        include_bank_config: bool = True,
        include_history: bool = False,
        document_ids: Sequence[str] | None = None,
    ) -> str:
        """Queue an export of the bank (``POST /transfer/export``); returns the operation id. ``include_data``:
        documents (with their history), memories, observations, the operations log; ``include_bank_config``: profile,
        overrides, mental models with their history and governance records, the knowledge base, the refresh spend
        ledger, directives, webhooks; ``include_history``: LLM requests and the
        webhook delivery log. ``document_ids``: only those
        documents and their facts, no bank-level section. Raises :class:`NotFoundError` (bank, documents)."""
        options = ExportOptions(
            documents=include_data or document_ids is not None,
            bank_config=include_bank_config,
            mental_models=include_bank_config,
            llm_requests=include_history,
            document_ids=None if document_ids is None else tuple(document_ids),
        )
        return self._submit_export(bank_id, "bank_transfer_export", options)

    def export_documents(
        self,
        bank_id: str,
        *,
        document_ids: Sequence[str] | None = None,
        include_observations: bool = False,
        include_knowledge_base: bool = False,
    ) -> str:
        """Queue an export of the bank's documents (``POST /document-transfer/export``): facts and chunks, plus
        observations and, with ``include_knowledge_base``, the mental models and the knowledge tree (whole bank
        only; never the refresh spend ledger). Raises :class:`NotFoundError`,
        :class:`InvalidInputError` (a flag that needs the whole bank with ``document_ids``)."""
        if document_ids is not None and (include_observations or include_knowledge_base):
            flag = "include_observations" if include_observations else "include_knowledge_base"
            raise InvalidInputError(flag, "applies to a whole-bank export only (leave out document_id)")
        options = ExportOptions(
            documents=True,
            observations=include_observations,
            operations=False,
            bank_config=False,
            mental_models=include_knowledge_base,
            document_ids=None if document_ids is None else tuple(document_ids),
            refresh_spend=False,
        )
        return self._submit_export(bank_id, "document_export", options)

    def _submit_export(self, bank_id: str, operation_type: str, options: ExportOptions) -> str:
        self._require_bank(bank_id)
        if options.document_ids is not None:
            missing = sorted(set(options.document_ids) - self.store.existing_ids("document", options.document_ids,
                                                                                 bank_id=bank_id))  # fmt: skip
            if missing:
                raise NotFoundError(f"Document(s) not found in bank '{bank_id}': {', '.join(missing)}")
        self._purge_expired_files()
        return self._submit(bank_id, operation_type, {"options": asdict(options)})

    def import_bank(
        self,
        bank_id: str,
        archive: bytes | IO[bytes],
        *,
        mode: Literal["restore", "merge"] = "restore",
        target_bank_id: str | None = None,
        document_conflict: Literal["skip", "replace", "new-id"] = "skip",
        include_data: bool | None = None,
        include_bank_config: bool | None = None,
        include_history: bool | None = None,
        caller: Principal | None = None,
        reembed: bool = False,
    ) -> str:
        """Check an archive and queue its import (``POST /transfer/import``); returns the operation id.

        ``restore`` creates ``target_bank_id`` (default: the archive's source bank), which must be a valid bank id
        inside ``caller``'s scopes (:func:`~mindbank.domain.access.check_new_bank`: else 422, or 404 as for a
        missing bank) and must not exist (409);
        the operation is recorded against ``bank_id``, which must exist unless it is the target. ``merge`` folds
        the archive's documents into ``bank_id`` (``document_conflict`` for ids it has). The include flags narrow a
        restore. ``reembed``: import an archive whose vectors another embedding model made by embedding its
        memories again with this server's model (without it, such an archive is a 409 naming both models).
        ``archive``: bytes or a binary file. Raises :class:`InvalidInputError` (``file``: what is wrong with the
        archive), :class:`ConflictError`, :class:`NotFoundError`."""
        archive = _file(archive)
        summary = self._inspect(archive)
        self._check_archive_model(summary, reembed)
        if mode == "merge":
            self._check_embedding_model(bank_id)
            if target_bank_id not in (None, bank_id):
                raise InvalidInputError("target_bank_id", "applies to restore mode; merge imports into this bank")
            options = ImportOptions("merge", bank_id, document_conflict=document_conflict)
            return self._submit_import(bank_id, archive, "bank_transfer_import", options, summary)
        if target_bank_id is not None:
            target = check_new_bank(caller, target_bank_id, "target_bank_id")
        else:
            target = check_new_bank(caller, summary.manifest.source_bank_id, "file")
        if self.store.bank_exists(target):
            raise ConflictError(f"Bank '{target}' already exists; a restore creates a new bank (or use mode=merge)")
        if bank_id != target:
            self._require_bank(bank_id)
        config = True if include_bank_config is None else include_bank_config
        options = ImportOptions(
            "restore",
            target,
            include_data=True if include_data is None else include_data,
            include_bank_config=config,
            mental_models=config,
            include_history=bool(include_history),
        )
        return self._submit_import(bank_id, archive, "bank_transfer_import", options, summary)

    def import_documents(
        self,
        bank_id: str,
        archive: bytes | IO[bytes],
        *,
        on_conflict: Literal["skip", "replace", "new-id"] = "skip",
        reembed: bool = False,
    ) -> str:
        """Check an archive and queue a merge of its documents into the bank (``POST /document-transfer``);
        returns the operation id. Raises :class:`InvalidInputError` (``file``) and :class:`ConflictError` (an
        archive of another embedding model without ``reembed``, or a bank of another model)."""
        archive = _file(archive)
        summary = self._inspect(archive)
        self._check_archive_model(summary, reembed)
        self._check_embedding_model(bank_id)
        options = ImportOptions("merge", bank_id, document_conflict=on_conflict)
        return self._submit_import(bank_id, archive, "document_import", options, summary)

    def clone_bank(
        self,
        bank_id: str,
        target_bank_id: str,
        *,
        include_data: bool = True,
        include_bank_config: bool = True,
        include_history: bool = False,
        caller: Principal | None = None,
    ) -> str:
        """Queue a copy of the bank into ``target_bank_id`` (``POST /clone``): an export and a restore back to back
        on this server; ``include_data`` carries the mental models too, with the knowledge base and the models'
        governance records (the reference's clone rule), but not the refresh spend ledger: the clone starts having
        spent nothing. The target follows :func:`~mindbank.domain.access.check_new_bank` for ``caller``. Raises
        :class:`NotFoundError` (source; a target outside the caller's scopes), :class:`ConflictError` (target
        exists), :class:`InvalidInputError`."""
        check_new_bank(caller, target_bank_id, "target_bank_id")
        self._require_bank(bank_id)
        if target_bank_id == bank_id:
            raise InvalidInputError("target_bank_id", "must differ from the bank being cloned")
        if self.store.bank_exists(target_bank_id):
            raise ConflictError(f"Bank '{target_bank_id}' already exists; a clone creates a new bank")
        # the clone is a new bank that has spent nothing yet: the source's spend ledger (today's counting against
        # its daily budgets) stays with the source
        export = ExportOptions(
            documents=include_data, bank_config=include_bank_config, mental_models=include_data,
            llm_requests=include_history, refresh_spend=False,
        )  # fmt: skip
        restore = ImportOptions(
            "restore", target_bank_id, include_data=include_data, include_bank_config=include_bank_config,
            mental_models=include_data, include_history=include_history,
        )  # fmt: skip
        payload = {"export": asdict(export), "import": asdict(restore)}
        return self._submit(bank_id, CLONE_TYPE, payload)

    def _check_archive_model(self, summary: ArchiveSummary, reembed: bool) -> None:
        """Refuse (409) an archive whose memories carry vectors of another embedding model than this server's,
        unless the request asks to embed them again (``reembed``): importing them silently would re-embed every
        memory, which costs what a fresh retain costs."""
        embedding = summary.extension.embedding if summary.extension else None
        if reembed or embedding is None or summary.memories == 0:
            return
        if (embedding.model, embedding.dimension) != (self.embedder.name, self.embedder.dimension):
            raise ConflictError(
                f"the archive's vectors were made by embedding model {embedding.model!r} ({embedding.dimension} "
                f"dimensions) but this server embeds with {self.embedder.name!r} ({self.embedder.dimension} "
                f"dimensions): import with reembed=true to embed its memories again with {self.embedder.name!r}"
            )

    def _inspect(self, archive: IO[bytes]) -> ArchiveSummary:
        """Check every record of an uploaded archive. Raises :class:`InvalidInputError` (``file``)."""
        try:
            with ArchiveReader(archive) as reader:
                return inspect_archive(reader)
        except ArchiveError as exc:
            raise InvalidInputError("file", str(exc)) from exc

    def _submit_import(
        self, bank_id: str, archive: IO[bytes], operation_type: str, options: ImportOptions, summary: ArchiveSummary
    ) -> str:
        self._purge_expired_files()
        op = self._new_operation(bank_id, operation_type, {"options": asdict(options)})
        archive.seek(0)
        key = f"uploads/{op.id}.zip"
        self.store.put_file(
            key, bank_id=bank_id, filename=f"{op.id}.zip", content_type=ZIP, source=cast(BinaryIO, archive)
        )
        op.payload |= {"upload_key": key, "archive": summary.counts()}
        # a restore may be recorded against the very bank it creates: do not create it here
        self.store.submit_operation(op, ensure_bank=options.mode == "merge")
        self.wake()
        return op.id

    def _purge_expired_files(self) -> None:
        before = self.clock() - timedelta(hours=self.settings.transfer_retention_hours)
        for prefix in ("exports/", "uploads/", "clones/"):
            self.store.purge_files(before, prefix=prefix)

    # ---------------------------------------------------------------- doing (in process; the handlers call these)

    def write_bank_archive(
        self, bank_id: str, out: IO[bytes], options: ExportOptions, *, skip_operations: Sequence[str] = ()
    ) -> dict[str, int]:
        """Write the bank's archive to ``out`` (a writable, seekable binary file) from one consistent snapshot;
        returns the record counts. Raises ``LookupError`` when the bank does not exist."""
        embedding = EmbeddingInfo(model=self.embedder.name, dimension=self.embedder.dimension)
        with self.store.bank_snapshot(bank_id) as snapshot:
            return write_archive(
                snapshot, cast(BinaryIO, out), options, bank_id=bank_id, embedding=embedding,
                producer=f"mindbank {__version__}", skip_operations=skip_operations,
            )  # fmt: skip

    def read_bank_archive(
        self, archive: IO[bytes], options: ImportOptions, *, consume_file: str | None = None
    ) -> dict[str, Any]:
        """Import an archive now, in one transaction (all of it or nothing); returns the counts. Raises
        :class:`ArchiveError` (a bad archive) and :class:`~mindbank.store.base.AlreadyExists` (the restored bank,
        or a key, exists)."""
        with ArchiveReader(archive) as reader:
            summary = inspect_archive(reader)
            for attempt in range(1, MERGE_ATTEMPTS + 1):
                plan = plan_import(self.store, reader, summary, options, embedder=self.embedder,
                                   bank_config=lambda config: archived_config(config, self.limits))  # fmt: skip
                vectors = embed_missing(reader, plan, self.embedder)
                try:
                    rows = import_rows(reader, plan, vectors, self.embedder.dimension)
                    counts = self.store.import_rows(plan.target(), rows, consume_file=consume_file)
                    break
                except AlreadyExists:
                    # a merge planned against the bank as it was: another merge into it committed a row this plan
                    # writes too (its transaction rolled back whole). Plan again against the bank as it is now,
                    # so concurrent merges into one bank apply one after the other
                    if options.mode != "merge" or attempt == MERGE_ATTEMPTS:
                        raise
                finally:
                    if vectors is not None:
                        vectors.close()
        if counts.get("facts") or counts.get("observations"):
            # every imported vector is this server's model's (reused only when the archive's model is the same)
            self._check_embedding_model(options.target_bank_id, record=True)
        if options.mode == "merge" and counts.get("facts") and self.settings.enable_auto_consolidation:
            self.queue_consolidation(options.target_bank_id)
        reused = counts.get("facts", 0) + counts.get("observations", 0) - plan.notes.get("vectors_computed", 0)
        placed = {k: counts.pop(k) for k in TREE_NOTES if k in counts}  # what placing the tree in the bank's did
        return {
            "bank_id": options.target_bank_id,
            "mode": options.mode,
            **{f"{k}_imported": v for k, v in sorted(counts.items())},
            **plan.notes,
            **placed,
            "vectors_reused": reused,
        }

    # ---------------------------------------------------------------- stored files

    def stored_file(self, key: str) -> StoredFile:
        """A stored file (an export archive). Raises :class:`NotFoundError`."""
        info = self.store.get_file(key)
        if info is None:
            raise NotFoundError(f"File '{key}' not found (exports expire after the retention period)")
        return info

    def stored_file_chunks(self, key: str) -> Iterator[bytes]:
        """A stored file's bytes, chunk by chunk."""
        return self.store.read_file(key)

    def download_archive(self, download_url: str) -> bytes:
        """The bytes of a stored archive, named by its ``download_url`` or storage key (the client's name). Raises
        :class:`NotFoundError`."""
        key = download_url.removeprefix(DOWNLOAD_PATH)
        self.stored_file(key)
        return b"".join(self.store.read_file(key))

    def fetch_archive(self, bank_id: str, operation_id: str, *, timeout: float = 300.0) -> bytes:
        """Wait for an export operation and return its archive (the client's name). Raises ``TimeoutError``, and
        :class:`ConflictError` when the export did not complete."""
        op = self.operations.wait_for(bank_id, operation_id, timeout=timeout)
        url = (op.result or {}).get("download_url") if op.status == "completed" else None
        if not url:
            raise ConflictError(f"export {operation_id} is {op.status} without an archive: {op.error or '-'}")
        return self.download_archive(url)

    # ---------------------------------------------------------------- the worker's handlers

    def transfer_handlers(self) -> dict[str, Callable[[Operation], dict[str, Any]]]:
        """Operation type -> handler for the transfer operations."""
        return {
            **dict.fromkeys(EXPORT_TYPES, self._run_export),
            **dict.fromkeys(IMPORT_TYPES, self._run_import),
            CLONE_TYPE: self._run_clone,
        }

    def _run_export(self, op: Operation) -> dict[str, Any]:
        options = _export_options(op.payload["options"])
        key = f"exports/{op.id}.zip"
        # the file name goes into a content-disposition header: only characters that are safe there
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", op.bank_id)[:100]
        filename = f"{safe}-{op.created_at:%Y%m%dT%H%M%SZ}.zip"
        with tempfile.TemporaryFile() as tmp:
            try:
                counts = self.write_bank_archive(op.bank_id, tmp, options, skip_operations=[op.id])
            except LookupError as exc:
                raise PermanentFailure(str(exc)) from exc
            tmp.seek(0)
            info = self.store.put_file(key, bank_id=op.bank_id, filename=filename, content_type=ZIP, source=tmp)
        return {
            "download_url": DOWNLOAD_PATH + key,
            "storage_key": key,
            "byte_size": info.byte_size,
            "filename": filename,
            **{f"{k}_exported": v for k, v in sorted(counts.items())},
        }

    def _run_import(self, op: Operation) -> dict[str, Any]:
        options = ImportOptions(**op.payload["options"])
        key = op.payload["upload_key"]
        if self.store.get_file(key) is None:
            # the upload goes with the transaction that imports it: a rerun after that commit has nothing to do
            return {"bank_id": options.target_bank_id, "mode": options.mode, "already_imported": True}
        return self._import_stored(key, options)

    def _run_clone(self, op: Operation) -> dict[str, Any]:
        key = f"clones/{op.id}.zip"
        options = ImportOptions(**op.payload["import"])
        if self.store.get_file(key) is None:
            if self.store.bank_exists(options.target_bank_id):
                raise PermanentFailure(f"bank '{options.target_bank_id}' already exists")
            with tempfile.TemporaryFile() as tmp:
                export = _export_options(op.payload["export"])
                try:
                    self.write_bank_archive(op.bank_id, tmp, export, skip_operations=[op.id])
                except LookupError as exc:
                    raise PermanentFailure(str(exc)) from exc
                tmp.seek(0)
                self.store.put_file(key, bank_id=op.bank_id, filename=f"{op.id}.zip", content_type=ZIP, source=tmp)
        return {"source_bank_id": op.bank_id, **self._import_stored(key, options)}

    def _import_stored(self, key: str, options: ImportOptions) -> dict[str, Any]:
        with tempfile.TemporaryFile() as tmp:
            for chunk in self.store.read_file(key):
                tmp.write(chunk)
            tmp.seek(0)
            try:
                return self.read_bank_archive(tmp, options, consume_file=key)
            except FileGone:
                return {"bank_id": options.target_bank_id, "mode": options.mode, "already_imported": True}
            except (ArchiveError, AlreadyExists) as exc:
                self.store.delete_file(key)  # it will never import: do not keep it
                raise PermanentFailure(str(exc)) from exc


def _file(archive: bytes | IO[bytes]) -> IO[bytes]:
    return io.BytesIO(archive) if isinstance(archive, bytes | bytearray) else archive


def _export_options(data: dict[str, Any]) -> ExportOptions:
    ids = data.get("document_ids")
    return ExportOptions(**{**data, "document_ids": None if ids is None else tuple(ids)})
