"""Client methods over a bank's documents: list, read, retag, delete, reprocess, chunks, history, and
``retain_files`` (each file becomes a document)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from mindbank.client._wire import Request, bank_path, child_path, clean, endpoint, iso_time, listed
from mindbank.client.resource_models import (
    Chunk,
    ChunkList,
    DeleteDocumentResponse,
    Document,
    DocumentHistory,
    DocumentList,
    FileRetainResponse,
    ReprocessResponse,
    SuccessResponse,
)

FileInput = str | Path | tuple[str, bytes]


class DocumentMethods:
    """Documents, their chunks and history, and file uploads."""

    @endpoint
    def list_documents(
        self,
        bank_id: str,
        *,
        q: str | None = None,
        tags: Sequence[str] | None = None,
        tags_match: str | None = None,
        time_field: str | None = None,
        start_date: str | datetime | None = None,
        end_date: str | datetime | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Request[DocumentList]:
        """A page of the bank's documents (no text), newest first; ``q`` matches the id or the text."""
        params = clean({"q": q, "tags": listed(tags), "tags_match": tags_match, "time_field": time_field,
                        "start_date": iso_time(start_date), "end_date": iso_time(end_date), "limit": limit,
                        "offset": offset})  # fmt: skip
        return Request("GET", f"{bank_path(bank_id)}/documents", DocumentList.model_validate, params=params)

    @endpoint
    def get_document(self, bank_id: str, document_id: str) -> Request[Document]:
        """One document with its text and memory counts by fact type."""
        return Request("GET", child_path(bank_id, "documents", document_id), Document.model_validate)

    @endpoint
    def update_document(self, bank_id: str, document_id: str, *, tags: Sequence[str]) -> Request[SuccessResponse]:
        """Replace the tags of a document and of every memory drawn from it."""
        path = child_path(bank_id, "documents", document_id)
        return Request("PATCH", path, SuccessResponse.model_validate, json={"tags": list(tags)})

    @endpoint
    def delete_document(self, bank_id: str, document_id: str) -> Request[DeleteDocumentResponse]:
        """Delete a document and the memories drawn from it (models citing them go stale)."""
        return Request("DELETE", child_path(bank_id, "documents", document_id), DeleteDocumentResponse.model_validate)

    @endpoint
    def reprocess_document(self, bank_id: str, document_id: str) -> Request[ReprocessResponse]:
        """Queue a re-extraction of the document's stored text; returns the operation."""
        path = child_path(bank_id, "documents", document_id) + "/reprocess"
        return Request("POST", path, ReprocessResponse.model_validate)

    @endpoint
    def list_document_chunks(
        self, bank_id: str, document_id: str, *, limit: int = 100, offset: int = 0
    ) -> Request[ChunkList]:
        """A page of a document's chunks, in document order."""
        path = child_path(bank_id, "documents", document_id) + "/chunks"
        return Request("GET", path, ChunkList.model_validate, params={"limit": limit, "offset": offset})

    @endpoint
    def get_document_history(
        self, bank_id: str, document_id: str, *, limit: int = 100, offset: int = 0
    ) -> Request[DocumentHistory]:
        """A document's changes, newest first."""
        path = child_path(bank_id, "documents", document_id) + "/history"
        return Request("GET", path, DocumentHistory.model_validate, params={"limit": limit, "offset": offset})

    @endpoint
    def get_chunk(self, chunk_id: str) -> Request[Chunk]:
        """One chunk by id."""
        return Request("GET", f"/v1/default/chunks/{chunk_id}", Chunk.model_validate)

    @endpoint
    def retain_files(
        self,
        bank_id: str,
        files: Sequence[FileInput],
        *,
        files_metadata: Sequence[Mapping[str, Any]] | None = None,
        context: str | None = None,
    ) -> Request[FileRetainResponse]:
        """Upload files (paths, or ``(name, bytes)`` pairs) to be read as text and retained, one queued operation
        each: plain text, Markdown, HTML and PDF (others answer 415). ``files_metadata[i]``: ``context``,
        ``document_id`` (default: the file name), ``tags``, ``metadata``, ``timestamp``."""
        parts = []
        for f in files:
            name, content = f if isinstance(f, tuple) else (Path(f).name, Path(f).read_bytes())
            parts.append(("files", (name, content)))
        body = clean({"files_metadata": list(files_metadata) if files_metadata is not None else None,
                      "context": context})  # fmt: skip
        return Request("POST", f"{bank_path(bank_id)}/files/retain", FileRetainResponse.model_validate, files=parts,
                       data={"request": json.dumps(body)})  # fmt: skip
