"""SQLite implementation of the Store port.

Concurrency model (datasette-style): every write goes through one writer connection under a process-wide lock, so
memory ``updated_at`` stamps are strictly increasing per bank and a row with a stamp at or below a bank's
``last_memory_write_at`` is always committed. Reads use one connection per thread (WAL lets them run beside the
writer). Vector search runs on an in-process :class:`VectorIndex` per bank, kept in step with this process's writes
and rebuilt when ``banks.memory_version`` shows another process wrote.

The store is one class assembled from a mixin per query family, each over :class:`SQLiteBase` (connections,
transactions, bank stamping, the vector-index cache): :mod:`.banks`, :mod:`.memories` (writes and consolidation),
:mod:`.search` (memory reads), :mod:`.mental_models` (models, history, citations, staleness), :mod:`.operations`
(the queue and LLM tracing), :mod:`.knowledge` (the knowledge-base tree, written once in
:mod:`mindbank.store.knowledge`) and :mod:`.transfer` (bank snapshots, imports and stored files, over
:mod:`mindbank.store.transfer`). Row conversion lives in :mod:`.rows`, every SQL statement in :mod:`.queries`. The
methods both backends run alike (one named statement, rows mapped by :mod:`mindbank.store.columns`) come from
:class:`~mindbank.store.shared.SharedQueries`, the root of :class:`SQLiteBase`.
"""

from __future__ import annotations

from mindbank.store.api_keys import ApiKeysQueries
from mindbank.store.sqlite.banks import BanksMixin
from mindbank.store.sqlite.documents import DocumentsMixin
from mindbank.store.sqlite.knowledge import KnowledgeMixin
from mindbank.store.sqlite.memories import MemoriesMixin
from mindbank.store.sqlite.mental_models import MentalModelsMixin
from mindbank.store.sqlite.observations import ObservationsMixin
from mindbank.store.sqlite.operations import OperationsMixin
from mindbank.store.sqlite.reembed import ReembedMixin
from mindbank.store.sqlite.search import SearchMixin
from mindbank.store.sqlite.transfer import TransferMixin

__all__ = ["SQLiteStore"]


class SQLiteStore(
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
    """The embedded store. ``path`` is a file path or ``":memory:"`` (one shared connection)."""
