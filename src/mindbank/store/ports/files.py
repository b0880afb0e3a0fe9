"""Stored files: export archives and uploads awaiting import, kept in the database in chunks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import BinaryIO, Protocol


@dataclass(frozen=True, slots=True)
class StoredFile:
    """A stored file's description (export archives, uploads awaiting import); ``byte_size`` in bytes."""

    key: str
    bank_id: str
    filename: str
    content_type: str
    byte_size: int
    chunk_count: int
    created_at: datetime


class FileStore(Protocol):
    """Files by key; ``read_file`` streams the content in chunks; ``purge_files`` removes those older than
    ``before`` whose key starts with ``prefix`` and returns how many."""

    def put_file(self, key: str, *, bank_id: str, filename: str, content_type: str, source: BinaryIO) -> StoredFile: ...
    def get_file(self, key: str) -> StoredFile | None: ...
    def read_file(self, key: str) -> Iterator[bytes]: ...
    def delete_file(self, key: str) -> bool: ...
    def purge_files(self, before: datetime, *, prefix: str) -> int: ...
