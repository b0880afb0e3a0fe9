"""Opening a store by URL: the one place that knows both backends (they import the port, never the reverse)."""

from __future__ import annotations

from mindbank.store.base import Store


def open_store(url: str, *, dimension: int) -> Store:
    """Open the store named by ``url``: ``postgresql://...`` / ``postgres://...`` (PostgreSQL + pgvector),
    ``sqlite:///path``, a bare path, or ``:memory:``.

    Raises ``ValueError`` for an unsupported scheme and ``ImportError`` (naming the extra to install) when a
    PostgreSQL URL is given without the ``postgres`` extra.
    """
    if url.startswith(("postgres://", "postgresql://")):
        try:
            from mindbank.store.postgres.store import PostgresStore
        except ImportError as exc:  # psycopg / psycopg-pool are optional
            raise ImportError(f"PostgreSQL needs the postgres extra: pip install 'mindbank[postgres]' ({exc})") from exc
        return PostgresStore(url, dimension=dimension)
    from mindbank.store.sqlite.store import SQLiteStore

    path = url.removeprefix("sqlite:///").removeprefix("sqlite://")
    return SQLiteStore(path, dimension=dimension)
