"""Store failures that callers may map to user-facing errors."""

from __future__ import annotations


class StoreError(Exception):
    """Base class for store failures that callers may map to user-facing errors."""


class FileGone(StoreError):
    """A file an operation was to consume (an uploaded archive) is no longer stored: another run consumed it."""


class DocumentChanged(StoreError):
    """A restatement found the stored document's content changed since the caller read it (another retain wrote it
    meanwhile); the transaction wrote nothing and the retain should be prepared again."""


class AlreadyExists(StoreError):
    """An insert hit an existing primary key (e.g. a mental model id)."""
