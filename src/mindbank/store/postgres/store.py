"""PostgreSQL (+pgvector) implementation of the Store port: same method names and semantics as ``SQLiteStore``.

Concurrency model: any number of processes share the database. Connections come from a psycopg_pool pool in
autocommit mode; every write runs in one explicit transaction.

* Memory write stamps: a memory write locks its bank row (``SELECT ... FOR NO KEY UPDATE``) before anything else and
  stamps ``GREATEST(clock_timestamp(), last_memory_write_at + 1 µs)``. Writers of one bank are therefore serialised
  and stamp in commit order, so once a refresh has read a watermark W no row stamped at or below W can still
  commit, whichever process wrote it (a memory a refresh did not read is always newer than its watermark). Every
  write path takes the bank lock first, so lock order is always bank → rows (no deadlocks between writers).
* Vector search is pgvector's HNSW index of the query's width (approximate; ``hnsw.ef_search`` raised per query,
  iterative scans for filtered queries — every query is filtered by ``bank_id`` at least). Results are re-sorted
  by exact score.
* Keyword search is a generated ``tsvector`` column + GIN, ranked with ``ts_rank_cd``.
* The operation queue is claimed with ``FOR UPDATE SKIP LOCKED``; a partial unique index keeps at most one running
  operation per mental model.

Times are aware UTC datetimes (sessions run with ``TimeZone=UTC``); JSON documents come back with their keys
sorted, exactly as the SQLite store returns them.

The store is one class assembled from a mixin per query family, each over :class:`PostgresBase` (pool, transactions,
bank locking and stamping): :mod:`.banks`, :mod:`.memories` (writes and consolidation), :mod:`.search` (memory
reads), :mod:`.mental_models` (models, history, citations, staleness), :mod:`.operations` (the queue and LLM
tracing), :mod:`.knowledge` (the knowledge-base tree, written once in :mod:`mindbank.store.knowledge`) and
:mod:`.transfer` (bank snapshots, imports and stored files, over :mod:`mindbank.store.transfer`). Row conversion
lives in :mod:`.rows`, every SQL statement in :mod:`.queries`. The methods both backends run alike (one named
statement, rows mapped by :mod:`mindbank.store.columns`) come from :class:`~mindbank.store.shared.SharedQueries`,
the root of :class:`PostgresBase`.
"""

from __future__ import annotations

from mindbank.store.api_keys import ApiKeysQueries
from mindbank.store.postgres.banks import BanksMixin
from mindbank.store.postgres.documents import DocumentsMixin
from mindbank.store.postgres.knowledge import KnowledgeMixin
from mindbank.store.postgres.memories import MemoriesMixin
from mindbank.store.postgres.mental_models import MentalModelsMixin
from mindbank.store.postgres.observations import ObservationsMixin
from mindbank.store.postgres.operations import OperationsMixin
from mindbank.store.postgres.reembed import ReembedMixin
from mindbank.store.postgres.search import SearchMixin
from mindbank.store.postgres.transfer import TransferMixin

__all__ = ["PostgresStore"]


class PostgresStore(
    BanksMixin,
    MemoriesMixin,
    MentalModelsMixin,
    ObservationsMixin,
    SearchMixin,
    OperationsMixin,
    DocumentsMixin,
    ApiKeysQueries,
    KnowledgeMixin,
    TransferMixin,
    ReembedMixin,
):
    """The scale-out store over one PostgreSQL database with the ``vector`` extension.

    ``url`` is a libpq URL (``postgresql://user@host:port/db``); ``dimension`` is the configured model's embedding
    width. The database holds vectors of any width, one per bank (its recorded model's), each width with its own
    HNSW index; opening migrates the schema (forward-only, safe when several processes open at once) and indexes
    ``dimension`` and every bank's width. Raises ``psycopg.OperationalError`` if the database is unreachable.
    """
