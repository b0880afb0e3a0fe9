"""``MindBank``: the one facade every surface (HTTP API, CLI, demo, in-process users) calls.

It owns a Store, an Embedder and a Worker, and turns requests into engine calls and queued operations. Errors are
the domain errors of :mod:`mindbank.errors`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from mindbank.config import Settings
from mindbank.domain.records import FactType, MentalModel, Operation, RetainItem, ScoredMemory
from mindbank.domain.tags import TagsMatch, normalize_tags
from mindbank.domain.timeutil import parse_timestamp, to_iso, utcnow
from mindbank.domain.trigger import MentalModelTrigger
from mindbank.engine.recall import RecallRequest, Retriever, recall
from mindbank.engine.refresh import RefreshFailed, RefreshSettings, run_refresh
from mindbank.engine.retain import prepare_documents
from mindbank.engine.staleness import mark_stale
from mindbank.errors import ConflictError, InvalidInputError, NotFoundError
from mindbank.providers.embeddings.base import Embedder
from mindbank.store.base import AlreadyExists, MemoryFilter, Store, open_store
from mindbank.worker.runner import PermanentFailure, Worker, WorkerSettings

MODEL_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*$")
MIN_MAX_TOKENS, MAX_MAX_TOKENS, DEFAULT_MAX_TOKENS = 256, 8192, 2048


@dataclass(frozen=True, slots=True)
class RetainResult:
    """Outcome of a retain: item count, and either the new memory ids (sync) or the queued operation id (async)."""

    bank_id: str
    items_count: int
    operation_id: str | None
    memory_ids: list[str]


def _item_to_json(item: RetainItem) -> dict[str, Any]:
    return {
        "content": item.content,
        "timestamp": to_iso(item.timestamp),
        "context": item.context,
        "metadata": item.metadata,
        "document_id": item.document_id,
        "tags": list(item.tags),
        "update_mode": item.update_mode,
    }


def _item_from_json(data: dict[str, Any]) -> RetainItem:
    return RetainItem(
        content=data["content"],
        timestamp=parse_timestamp(data.get("timestamp")),
        context=data.get("context"),
        metadata=data.get("metadata") or {},
        document_id=data.get("document_id"),
        tags=tuple(data.get("tags") or ()),
        update_mode=data.get("update_mode") or "replace",
    )


class MindBank:
    """The memory server's engine room, usable in-process: ``MindBank.open()``.

    Thread-safe. Asynchronous work (async retains, mental-model refreshes) is queued in the store and run by the
    worker: started with :meth:`start_worker`, or drained synchronously with :meth:`run_pending`.
    """

    def __init__(self, *, store: Store, embedder: Embedder, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.store = store
        self.embedder = embedder
        self.worker = Worker(
            store,
            {"batch_retain": self._run_retain, "refresh_mental_model": self._run_refresh},
            WorkerSettings(
                poll_seconds=self.settings.worker_poll_seconds,
                lease_seconds=self.settings.worker_lease_seconds,
                max_retries=self.settings.worker_max_retries,
                retry_backoff_seconds=self.settings.worker_retry_backoff_seconds,
            ),
        )

    @classmethod
    def open(cls, settings: Settings | None = None, *, embedder: Embedder | None = None) -> MindBank:
        """Open the configured database (created and migrated if new) with the local MiniLM embedder."""
        settings = settings or Settings.from_env()
        if embedder is None:
            from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder

            embedder = MiniLMEmbedder()
        store = open_store(settings.resolved_database_url, dimension=embedder.dimension)
        return cls(store=store, embedder=embedder, settings=settings)

    def close(self) -> None:
        """Stop the worker and close the store."""
        self.worker.stop()
        self.store.close()

    # ------------------------------------------------------------------ worker
    def start_worker(self) -> None:
        """Run queued operations in a background thread."""
        self.worker.start()

    def run_pending(self) -> int:
        """Run every operation that is due now, in this thread; returns how many ran."""
        return self.worker.drain()

    def _submit(self, bank_id: str, operation_type: str, payload: dict[str, Any], model_id: str | None = None) -> str:
        now = utcnow()
        op = Operation(
            id=str(uuid.uuid4()),
            bank_id=bank_id,
            operation_type=operation_type,
            status="pending",
            payload=payload,
            result=None,
            error=None,
            retry_count=0,
            next_retry_at=None,
            mental_model_id=model_id,
            created_at=now,
            updated_at=now,
            completed_at=None,
        )
        self.store.submit_operation(op)
        self.worker.wake()
        return op.id

    # ------------------------------------------------------------------ memories
    def retain(self, bank_id: str, items: Sequence[RetainItem], *, async_: bool = False) -> RetainResult:
        """Store ``items`` in the bank (created if missing).

        Synchronous retains extract, embed and commit all items in one transaction before returning; ``async_``
        queues a ``batch_retain`` operation and returns its id at once.
        """
        if async_:
            op_id = self._submit(bank_id, "batch_retain", {"items": [_item_to_json(i) for i in items]})
            return RetainResult(bank_id, len(items), op_id, [])
        documents = prepare_documents(items, self.embedder, now=utcnow())
        ids = self.store.write_documents(bank_id, documents)
        return RetainResult(bank_id, len(items), None, [i for doc in ids for i in doc])

    def _run_retain(self, op: Operation) -> dict[str, Any]:
        items = [_item_from_json(d) for d in op.payload["items"]]
        result = self.retain(op.bank_id, items)
        return {"items_count": len(items), "unit_ids_count": len(result.memory_ids)}

    def recall(
        self,
        bank_id: str,
        query: str,
        *,
        types: Sequence[FactType] | None = None,
        tags: Sequence[str] = (),
        tags_match: TagsMatch = "any",
        max_tokens: int = 4096,
        limit: int | None = None,
        retriever: Retriever = "hybrid",
    ) -> list[ScoredMemory]:
        """Hybrid recall over the bank. Raises :class:`NotFoundError` if the bank does not exist."""
        self._require_bank(bank_id)
        flt = MemoryFilter(fact_types=tuple(types) if types else None, tags=normalize_tags(tags), tags_match=tags_match)
        return recall(
            self.store,
            self.embedder,
            bank_id,
            RecallRequest(query=query, filter=flt, max_tokens=max_tokens, limit=limit, retriever=retriever),
            candidates=self.settings.recall_candidates,
        )

    def _require_bank(self, bank_id: str) -> None:
        if not self.store.bank_exists(bank_id):
            raise NotFoundError(f"Bank '{bank_id}' not found")

    # ------------------------------------------------------------------ mental models
    def create_mental_model(
        self,
        bank_id: str,
        *,
        name: str,
        source_query: str,
        id: str | None = None,
        tags: Sequence[str] = (),
        max_tokens: int = DEFAULT_MAX_TOKENS,
        trigger: MentalModelTrigger | dict[str, Any] | None = None,
    ) -> tuple[str, str]:
        """Create a model (bank auto-created) and queue its first refresh; returns ``(model_id, operation_id)``.

        Raises :class:`InvalidInputError` (blank name/query, bad id, max_tokens outside 256–8192) and
        :class:`ConflictError` when ``id`` is taken.
        """
        if not name.strip():
            raise InvalidInputError("name", "must not be blank")
        if not source_query.strip():
            raise InvalidInputError("source_query", "must not be blank")
        if id is not None and not MODEL_ID_PATTERN.match(id):
            raise InvalidInputError("id", "must match ^[a-z0-9][a-z0-9-]*$ (lowercase letters, digits, hyphens)")
        if not MIN_MAX_TOKENS <= max_tokens <= MAX_MAX_TOKENS:
            raise InvalidInputError("max_tokens", f"must be between {MIN_MAX_TOKENS} and {MAX_MAX_TOKENS}")
        trig = trigger if isinstance(trigger, MentalModelTrigger) else MentalModelTrigger.model_validate(trigger or {})
        now = utcnow()
        model = MentalModel(
            id=id or f"mm-{uuid.uuid4().hex}",
            bank_id=bank_id,
            name=name.strip(),
            source_query=source_query.strip(),
            content="",
            tags=normalize_tags(tags),
            max_tokens=max_tokens,
            trigger=trig.model_dump(),
            structured_document=None,
            reflect_response=None,
            last_refreshed_at=now,
            last_memory_seen_at=None,
            last_refreshed_source_query=None,
            last_refresh_failed_at=None,
            last_full_refreshed_at=None,
            created_at=now,
        )
        try:
            self.store.insert_mental_model(model)
        except AlreadyExists as exc:
            raise ConflictError(f"mental model '{model.id}' already exists in bank '{bank_id}'") from exc
        op_id = self._submit(bank_id, "refresh_mental_model", {"mental_model_id": model.id}, model.id)
        return model.id, op_id

    def get_mental_model(self, bank_id: str, model_id: str, *, with_staleness: bool = True) -> MentalModel:
        """One model, with ``is_stale`` computed when asked. Raises :class:`NotFoundError`."""
        model = self.store.get_mental_model(bank_id, model_id)
        if model is None:
            raise NotFoundError(f"Mental model '{model_id}' not found in bank '{bank_id}'")
        if with_staleness:
            mark_stale(self.store, bank_id, [model])
        return model

    def list_mental_models(
        self,
        bank_id: str,
        *,
        tags: Sequence[str] = (),
        tags_match: Literal["any", "all", "exact"] = "any",
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[MentalModel], int]:
        """A page of models (``last_refreshed_at DESC, id DESC``) with ``is_stale`` set, and the total."""
        models, total = self.store.list_mental_models(
            bank_id, tags=normalize_tags(tags), tags_match=tags_match, limit=limit, offset=offset
        )
        mark_stale(self.store, bank_id, models)
        return models, total

    def refresh_mental_model(self, bank_id: str, model_id: str) -> str:
        """Queue a refresh, or return the one already queued (coalescing); returns the operation id."""
        self.get_mental_model(bank_id, model_id, with_staleness=False)
        pending = self.store.find_pending_refresh(bank_id, model_id)
        if pending is not None:
            return pending.id
        return self._submit(bank_id, "refresh_mental_model", {"mental_model_id": model_id}, model_id)

    def mental_model_history(self, bank_id: str, model_id: str) -> list[dict[str, Any]]:
        """History entries, most recent first: ``{id, changed_at, previous_content, ...}`` or failure records."""
        self.get_mental_model(bank_id, model_id, with_staleness=False)
        return [
            {"id": e.id, **e.content, "changed_at": to_iso(e.changed_at)}
            for e in self.store.list_history(bank_id, model_id)
        ]

    def _run_refresh(self, op: Operation) -> dict[str, Any]:
        model_id = op.payload["mental_model_id"]
        model = self.store.get_mental_model(op.bank_id, model_id)
        if model is None:
            raise PermanentFailure(f"mental model '{model_id}' no longer exists")
        try:
            outcome = run_refresh(
                self.store,
                self.embedder,
                model,
                RefreshSettings(
                    recall_max_tokens=self.settings.recall_max_tokens,
                    recall_candidates=self.settings.recall_candidates,
                    history_enabled=self.settings.enable_mental_model_history,
                    history_cap=self.settings.mental_model_history_max_entries,
                ),
            )
        except RefreshFailed as exc:
            raise PermanentFailure(
                str(exc), {"mental_model_id": model_id, "outcome": exc.outcome, "failure_reason": exc.reason}
            ) from exc
        return {"name": model.name, **outcome.as_result()}

    # ------------------------------------------------------------------ operations
    def get_operation(self, bank_id: str, operation_id: str) -> Operation:
        """One operation. Raises :class:`NotFoundError`."""
        op = self.store.get_operation(bank_id, operation_id)
        if op is None:
            raise NotFoundError(f"Operation '{operation_id}' not found in bank '{bank_id}'")
        return op

    def wait_for(self, bank_id: str, operation_id: str, *, timeout: float = 60.0) -> Operation:
        """Block until the operation is terminal (polling); raises ``TimeoutError``."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            op = self.get_operation(bank_id, operation_id)
            if op.status in ("completed", "failed", "cancelled"):
                return op
            if time.monotonic() > deadline:
                raise TimeoutError(f"operation {operation_id} still {op.status} after {timeout} s")
            time.sleep(0.05)

    def last_memory_write_at(self, bank_id: str) -> datetime | None:
        """The bank's newest memory write stamp (stats' ``last_memory_write_at``)."""
        return self.store.bank_last_memory_write_at(bank_id)
