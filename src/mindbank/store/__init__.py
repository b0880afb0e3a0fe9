"""Storage port and backends. ``open_store(url)`` picks the backend from a database URL."""

from mindbank.store.base import MemoryFilter, Store, open_store

__all__ = ["MemoryFilter", "Store", "open_store"]
