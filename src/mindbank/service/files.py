"""``POST /files/retain``: files converted to text (``engine/retain/convert.py``) and retained, one queued retain
operation per file (the reference's response: ``operation_ids``).

Every file is read and converted before anything is queued, so a request with one unreadable file queues nothing.
A file's document id defaults to its name, so uploading a changed file again replaces what it said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from mindbank.domain import fields
from mindbank.domain.limits import check_text
from mindbank.domain.records import RetainItem
from mindbank.engine.retain.convert import UnreadableFile, UnsupportedFileType, file_to_text
from mindbank.errors import InvalidInputError, PayloadTooLargeError, UnsupportedTypeError
from mindbank.service.core import ServiceCore, ServiceState
from mindbank.service.memories import MemoriesService

MAX_FILES = 100  # per request


class FileMetadata(BaseModel):
    """One ``files_metadata`` entry, under the limits of a retained item's fields (``domain.fields``); unknown keys
    are refused. ``parser`` (the reference picks a converter with it) is accepted and ignored: mindbank has one
    reader per type."""

    model_config = ConfigDict(extra="forbid", strict=True)

    context: fields.Text | None = None
    document_id: fields.DocumentId | None = None
    tags: fields.TagList | None = None
    metadata: fields.Metadata | None = None
    timestamp: fields.IsoTime | None = None
    parser: str | list[str] | None = None


def _file_metadata(raw: Mapping[str, Any], i: int) -> FileMetadata:
    """``files_metadata[i]`` validated. Raises :class:`InvalidInputError` naming the entry's field."""
    if not isinstance(raw, Mapping):
        raise InvalidInputError(f"files_metadata[{i}]", "must be an object")
    try:
        return FileMetadata.model_validate(dict(raw))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        field = f"files_metadata[{i}].{where}" if where else f"files_metadata[{i}]"
        raise InvalidInputError(field, err["msg"]) from exc


@dataclass(frozen=True, slots=True)
class UploadedFile:
    """One uploaded file: its name, declared content type and bytes."""

    name: str
    content_type: str | None
    data: bytes


class FilesService(ServiceCore):
    """Retain uploaded files: each file parsed to text, then retained as a document through ``memories``."""

    def __init__(self, state: ServiceState, *, memories: MemoriesService) -> None:
        super().__init__(state)
        self.memories = memories

    def retain_files(
        self, bank_id: str, files: Sequence[UploadedFile], *, files_metadata: Sequence[Mapping[str, Any]] | None = None,
        context: str | None = None,
    ) -> list[str]:  # fmt: skip
        """Convert each file to text and queue its retain (bank created if missing); returns one operation id per
        file. ``files_metadata[i]`` (optional; as many as files): ``context``, ``document_id``, ``tags``,
        ``metadata`` (str -> str), ``timestamp`` (ISO-8601), each under the limits of a retained item's field
        (:class:`FileMetadata`: a wrong type, an unknown key or a value over a limit is refused naming it). The
        file name and type are added to its metadata.

        Raises :class:`InvalidInputError` (no files, too many, metadata count, a file without text),
        :class:`PayloadTooLargeError` (a file over ``MINDBANK_FILE_RETAIN_MAX_BYTES``) and :class:`UnsupportedTypeError`
        (a type that needs a model to read, or a file unreadable as its type). Nothing is queued on error."""
        if not files:
            raise InvalidInputError("files", "must not be empty")
        if len(files) > MAX_FILES:
            raise InvalidInputError("files", f"at most {MAX_FILES} files per request")
        if files_metadata is not None and (isinstance(files_metadata, str | bytes | Mapping)):
            raise InvalidInputError("files_metadata", "must be a list of objects")
        metas = [_file_metadata(m, i) for i, m in enumerate(files_metadata or [{} for _ in files])]
        if context is not None:
            check_text(context, "context", self.limits.max_text_chars)
        if len(metas) != len(files):
            raise InvalidInputError("files_metadata", f"has {len(metas)} entries for {len(files)} files")
        items = []
        for i, (upload, meta) in enumerate(zip(files, metas, strict=True)):
            limit = self.settings.file_retain_max_bytes
            if len(upload.data) > limit:
                raise PayloadTooLargeError(f"files[{i}]", f"{upload.name!r} is over {limit} bytes")
            try:
                kind, text = file_to_text(upload.name, upload.content_type, upload.data)
            except UnsupportedFileType as exc:
                raise UnsupportedTypeError(exc.file_type, f"files[{i}] ({upload.name!r}): {exc}") from exc
            except UnreadableFile as exc:
                raise UnsupportedTypeError("application/pdf", f"files[{i}] ({upload.name!r}): {exc}") from exc
            if not text.strip():
                raise InvalidInputError(f"files[{i}]", f"{upload.name!r} holds no text")
            items.append(
                RetainItem(
                    content=text, timestamp=meta.timestamp, context=meta.context or context,
                    metadata={"filename": upload.name, "content_type": kind, **(meta.metadata or {})},
                    document_id=meta.document_id or upload.name or None, tags=tuple(meta.tags or ()),
                )
            )  # fmt: skip
        return [str(self.memories.retain(bank_id, [item], async_=True).operation_id) for item in items]
