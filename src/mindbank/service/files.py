"""``POST /files/retain``: files converted to text (``engine/retain/convert.py``) and retained, one queued retain
operation per file (the reference's response: ``operation_ids``).

Every file is read and converted before anything is queued, so a request with one unreadable file queues nothing.
A file's document id defaults to its name, so uploading a changed file again replaces what it said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mindbank.domain.records import RetainItem
from mindbank.domain.timeutil import parse_timestamp
from mindbank.engine.retain.convert import UnreadableFile, UnsupportedFileType, file_to_text
from mindbank.errors import InvalidInputError, PayloadTooLargeError, UnsupportedTypeError
from mindbank.service.memories import MemoriesService

MAX_FILES = 100  # per request


@dataclass(frozen=True, slots=True)
class UploadedFile:
    """One uploaded file: its name, declared content type and bytes."""

    name: str
    content_type: str | None
    data: bytes


class FilesService(MemoriesService):
    """``retain_files``: a method of :class:`~mindbank.service.facade.MindBank`."""

    def retain_files(
        self, bank_id: str, files: Sequence[UploadedFile], *, files_metadata: Sequence[Mapping[str, Any]] | None = None,
        context: str | None = None,
    ) -> list[str]:  # fmt: skip
        """Convert each file to text and queue its retain (bank created if missing); returns one operation id per
        file. ``files_metadata[i]`` (optional; as many as files): ``context``, ``document_id``, ``tags``,
        ``metadata`` (str -> str), ``timestamp``. The file name and type are added to its metadata.

        Raises :class:`InvalidInputError` (no files, too many, metadata count, a file without text),
        :class:`PayloadTooLargeError` (a file over ``MINDBANK_FILE_RETAIN_MAX_BYTES``) and :class:`UnsupportedTypeError`
        (a type that needs a model to read, or a file unreadable as its type). Nothing is queued on error."""
        if not files:
            raise InvalidInputError("files", "must not be empty")
        if len(files) > MAX_FILES:
            raise InvalidInputError("files", f"at most {MAX_FILES} files per request")
        metas = list(files_metadata or [{} for _ in files])
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
            try:
                when = parse_timestamp(meta.get("timestamp")) if meta.get("timestamp") else None
            except ValueError as exc:
                raise InvalidInputError(f"files_metadata[{i}].timestamp", str(exc)) from exc
            extra = {str(k): str(v) for k, v in (meta.get("metadata") or {}).items()}
            items.append(
                RetainItem(
                    content=text, timestamp=when, context=meta.get("context") or context,
                    metadata={"filename": upload.name, "content_type": kind, **extra},
                    document_id=meta.get("document_id") or upload.name or None, tags=tuple(meta.get("tags") or ()),
                )
            )  # fmt: skip
        return [str(self.retain(bank_id, [item], async_=True).operation_id) for item in items]
