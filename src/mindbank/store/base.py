"""The Store port: everything the engine asks of a database, as one protocol combining the per-feature ones.

Each feature's protocol and records live in :mod:`mindbank.store.ports` (``ports/memories.py``,
``ports/mental_models.py``, ...); :class:`Store` is all of them together, and this module re-exports their names so
callers import from one place. Each backend implements the same method names with the same semantics; the contract
suite under ``tests/contract`` runs against every backend. Times are aware UTC datetimes; ids are strings.
"""

from __future__ import annotations

from typing import Protocol

from mindbank.domain.scope import MemoryFilter
from mindbank.store.ports.api_keys import ApiKeyStore
from mindbank.store.ports.banks import BankStore
from mindbank.store.ports.consolidation import ConsolidationStore
from mindbank.store.ports.directives import DirectiveStore
from mindbank.store.ports.documents import DocumentStore
from mindbank.store.ports.errors import AlreadyExists, DocumentChanged, FileGone, StoreError
from mindbank.store.ports.files import FileStore, StoredFile
from mindbank.store.ports.governance import RefreshSpendStore, Spend, SpendRecord, SpendTotals
from mindbank.store.ports.health import HealthStore
from mindbank.store.ports.knowledge import KnowledgeStore
from mindbank.store.ports.llm_requests import LLMRequestStore
from mindbank.store.ports.memories import DocumentWrite, MemoryStore
from mindbank.store.ports.mental_models import MentalModelStore, StalenessProbe, StalenessReads, cited_ids
from mindbank.store.ports.observations import ObservationChange, ObservationScope, ObservationStore
from mindbank.store.ports.operations import CONSOLIDATION_WAIT_SECONDS, Lane, OperationStore, fold_into_pending
from mindbank.store.ports.recall import RecallStore
from mindbank.store.ports.reembed import ReembedCounts, ReembedStore
from mindbank.store.ports.transfer import (
    BankSnapshot,
    DocumentReplace,
    IdKind,
    ImportRow,
    ImportTarget,
    KnowledgeTreeImport,
    StoredDocument,
    StoredDocumentEvent,
    StoredHistory,
    StoredMemory,
    StoredOperation,
    TransferStore,
)
from mindbank.store.ports.webhooks import WebhookStore

__all__ = [
    "CONSOLIDATION_WAIT_SECONDS",
    "AlreadyExists",
    "ApiKeyStore",
    "BankSnapshot",
    "BankStore",
    "ConsolidationStore",
    "DirectiveStore",
    "DocumentChanged",
    "DocumentReplace",
    "DocumentStore",
    "DocumentWrite",
    "FileGone",
    "FileStore",
    "HealthStore",
    "IdKind",
    "ImportRow",
    "ImportTarget",
    "KnowledgeStore",
    "KnowledgeTreeImport",
    "LLMRequestStore",
    "Lane",
    "MemoryFilter",
    "MemoryStore",
    "MentalModelStore",
    "ObservationChange",
    "ObservationScope",
    "ObservationStore",
    "OperationStore",
    "RecallStore",
    "ReembedCounts",
    "ReembedStore",
    "RefreshSpendStore",
    "Spend",
    "SpendRecord",
    "SpendTotals",
    "StalenessProbe",
    "StalenessReads",
    "Store",
    "StoreError",
    "StoredDocument",
    "StoredDocumentEvent",
    "StoredFile",
    "StoredHistory",
    "StoredMemory",
    "StoredOperation",
    "TransferStore",
    "WebhookStore",
    "cited_ids",
    "fold_into_pending",
]


class Store(
    BankStore,
    MemoryStore,
    RecallStore,
    MentalModelStore,
    RefreshSpendStore,
    KnowledgeStore,
    OperationStore,
    ConsolidationStore,
    ObservationStore,
    LLMRequestStore,
    DocumentStore,
    DirectiveStore,
    WebhookStore,
    HealthStore,
    ApiKeyStore,
    TransferStore,
    FileStore,
    ReembedStore,
    Protocol,
):
    """Persistence for banks, memories, documents, mental models, history and operations: every feature's port."""

    def close(self) -> None: ...
