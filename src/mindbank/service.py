"""``MindBank``: the one facade every surface (HTTP API, CLI, demo, in-process users) calls.

It owns a Store, an Embedder and a Worker, and turns requests into engine calls and queued operations. Errors are
the domain errors of :mod:`mindbank.errors`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from pydantic import ValidationError

from mindbank.config import BANK_OVERRIDABLE, Settings
from mindbank.domain.document import parse_markdown
from mindbank.domain.history import version_entry
from mindbank.domain.records import (
    FACT_TYPES,
    Bank,
    FactType,
    LLMRequestRecord,
    MemoryUnit,
    MentalModel,
    Operation,
    RetainItem,
    ScoredMemory,
)
from mindbank.domain.scope import model_scope
from mindbank.domain.tags import TagsMatch, freeze_groups, normalize_tags, validate_tag_groups
from mindbank.domain.timeutil import parse_timestamp, to_iso, utcnow
from mindbank.domain.trigger import MentalModelTrigger, merge_trigger, validate_response_schema
from mindbank.engine.consolidate.extractive import ExtractiveConsolidator
from mindbank.engine.consolidate.llm import LLMConsolidator
from mindbank.engine.consolidate.plan import Consolidator, ObservationScopes
from mindbank.engine.consolidate.rounds import consolidate_round
from mindbank.engine.llm_trace import LLMTracer, llm_call_context
from mindbank.engine.recall import RecallRequest, Retriever, recall
from mindbank.engine.refresh.dry_run import dry_run_result
from mindbank.engine.refresh.plan import DRY_RUN_OUTCOMES, RefreshSettings
from mindbank.engine.refresh.runner import RefreshRunner
from mindbank.engine.refresh.staleness import mark_stale
from mindbank.engine.refresh.triggers import automatic_paused, cron_due, park_until
from mindbank.engine.retain.extractive import prepare_documents
from mindbank.engine.retain.llm import LLMFactExtractor
from mindbank.engine.synthesis.extractive import ExtractiveSynthesizer
from mindbank.engine.synthesis.llm import LLMSynthesizer
from mindbank.engine.synthesis.port import Synthesizer
from mindbank.errors import ConflictError, InvalidInputError, NotFoundError, RefreshPreviewError
from mindbank.providers.embeddings.base import Embedder
from mindbank.providers.llm.base import LLM
from mindbank.providers.llm.factory import build_llms
from mindbank.store.base import AlreadyExists, MemoryFilter, Store
from mindbank.store.open import open_store
from mindbank.worker.runner import Deferred, PermanentFailure, Worker, WorkerSettings
from mindbank.worker.scheduler import Scheduler

MAX_CONSOLIDATION_ROUNDS = 10
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


def _newer_of(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else max(a, b)


def _config_value_problem(kind: type, value: Any) -> str | None:
    """Why ``value`` is not acceptable for a bank override of type ``kind`` (None when it is)."""
    if kind is bool:
        return None if isinstance(value, bool) else "must be a boolean"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"must be a{'n integer' if kind is int else ' number'}"
    if kind is int and (not isinstance(value, int) or value < 0):
        return "must be an integer >= 0"
    if kind is float and not 0 <= value <= 1:
        return "must be between 0 and 1"
    return None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else err["msg"]


class MindBank:
    """The memory server's engine room, usable in-process: ``MindBank.open()``.

    Thread-safe. Asynchronous work (async retains, mental-model refreshes) is queued in the store and run by the
    worker: started with :meth:`start_worker`, or drained synchronously with :meth:`run_pending`.
    """

    def __init__(
        self,
        *,
        store: Store,
        embedder: Embedder,
        settings: Settings | None = None,
        synthesizer: Synthesizer | None = None,
        consolidator: Consolidator | None = None,
        clock: Callable[[], datetime] = utcnow,
        llms: Mapping[str, LLM | None] | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.store = store
        self.embedder = embedder
        self.clock = clock
        # one LLM per operation (None: the extractive engine); built from settings by open(), see docs/llm.md
        self.llms: dict[str, LLM | None] = dict(llms or {})
        refresh_llm, retain_llm = self.llms.get("refresh"), self.llms.get("retain")
        self.synthesizer = synthesizer or (
            LLMSynthesizer(refresh_llm, store=store, embedder=embedder) if refresh_llm else ExtractiveSynthesizer()
        )
        self._extract_facts = LLMFactExtractor(retain_llm) if retain_llm else None
        consolidation_llm = self.llms.get("consolidation")
        self.consolidator = consolidator or (
            LLMConsolidator(consolidation_llm, embedder) if consolidation_llm else ExtractiveConsolidator()
        )
        self.refresher = RefreshRunner(store, embedder, self.synthesizer, clock=clock)
        self.worker = Worker(
            store,
            {
                "batch_retain": self._run_retain,
                "refresh_mental_model": self._run_refresh,
                "consolidation": self._run_consolidation,
            },
            WorkerSettings(
                poll_seconds=self.settings.worker_poll_seconds,
                lease_seconds=self.settings.worker_lease_seconds,
                max_retries=self.settings.worker_max_retries,
                retry_backoff_seconds=self.settings.worker_retry_backoff_seconds,
            ),
            clock=clock,
        )
        self.worker.handlers = {kind: self._in_llm_context(h) for kind, h in self.worker.handlers.items()}
        self.scheduler = Scheduler(self.scheduler_tick, self.settings.scheduler_tick_seconds, clock=clock)

    @classmethod
    def open(
        cls,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        synthesizer: Synthesizer | None = None,
    ) -> MindBank:
        """Open the configured database (created and migrated if new) with the local MiniLM embedder."""
        settings = settings or Settings.from_env()
        if embedder is None:
            from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder

            embedder = MiniLMEmbedder()
        store = open_store(settings.resolved_database_url, dimension=embedder.dimension)
        tracer = LLMTracer(
            store, enabled=settings.llm_trace_enabled, retention_hours=settings.llm_trace_retention_hours
        )
        try:
            llms = build_llms(settings, observers=[tracer])  # ValueError: unknown provider, missing key
        except BaseException:
            store.close()
            raise
        return cls(store=store, embedder=embedder, settings=settings, synthesizer=synthesizer, llms=llms)

    def close(self) -> None:
        """Stop the worker and scheduler and close the store."""
        self.stop_worker()
        self.store.close()

    # ------------------------------------------------------------------ worker
    def start_worker(self) -> None:
        """Run queued operations and the cron scheduler in background threads."""
        self.worker.start()
        self.scheduler.start()

    def stop_worker(self) -> None:
        """Stop the background worker and scheduler (the current operation finishes first)."""
        self.scheduler.stop()
        self.worker.stop()

    def run_pending(self) -> int:
        """Run every operation that is due now, in this thread; returns how many ran."""
        return self.worker.drain()

    def _submit(self, bank_id: str, operation_type: str, payload: dict[str, Any], model_id: str | None = None) -> str:
        op = self._new_operation(bank_id, operation_type, payload, model_id)
        self.store.submit_operation(op)
        self.worker.wake()
        return op.id

    @staticmethod
    def _new_operation(
        bank_id: str, operation_type: str, payload: dict[str, Any], model_id: str | None = None
    ) -> Operation:
        now = utcnow()
        return Operation(
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

    # ------------------------------------------------------------------ memories
    def retain(self, bank_id: str, items: Sequence[RetainItem], *, async_: bool = False) -> RetainResult:
        """Store ``items`` in the bank (created if missing).

        Synchronous retains extract, embed and commit all items in one transaction before returning; ``async_``
        queues a ``batch_retain`` operation and returns its id at once. Raises :class:`InvalidInputError` for an
        empty list or blank content (nothing is written).
        """
        if not items:
            raise InvalidInputError("items", "must not be empty")
        for i, item in enumerate(items):
            if not item.content.strip():
                raise InvalidInputError(f"items[{i}].content", "must not be blank")
        if async_:
            op_id = self._submit(bank_id, "batch_retain", {"items": [_item_to_json(i) for i in items]})
            return RetainResult(bank_id, len(items), op_id, [])
        documents = prepare_documents(items, self.embedder, now=utcnow(), extract=self._extract_facts)
        ids = self.store.write_documents(bank_id, documents)
        if self.settings.enable_auto_consolidation:
            self.consolidate(bank_id)
        return RetainResult(bank_id, len(items), None, [i for doc in ids for i in doc])

    # ------------------------------------------------------------------ consolidation and automatic refreshes
    def consolidate(self, bank_id: str, *, observation_scopes: ObservationScopes | None = None) -> tuple[str, bool]:
        """Queue a consolidation of the bank's pending facts (at most one pending per bank: a second request
        returns the queued one). Returns ``(operation_id, deduplicated)``."""
        payload: dict[str, Any] = {"observation_scopes": observation_scopes or self.settings.observation_scopes}
        op, deduplicated = self.store.submit_coalesced(self._new_operation(bank_id, "consolidation", payload))
        self.worker.wake()
        return op.id, deduplicated

    def _run_consolidation(self, op: Operation) -> dict[str, Any]:
        scopes = op.payload.get("observation_scopes") or self.settings.observation_scopes
        totals = {"created": 0, "updated": 0, "consolidated": 0}
        for _ in range(MAX_CONSOLIDATION_ROUNDS):
            done = consolidate_round(self.store, op.bank_id, consolidator=self.consolidator, scopes=scopes)
            totals = {k: totals[k] + getattr(done, k) for k in totals}
            if not done.more:
                break
        else:
            # a long backlog: hand the rest to a fresh operation instead of holding the worker
            self.consolidate(op.bank_id, observation_scopes=scopes)
            return {**totals, "continued": True}
        totals["refreshes_submitted"] = len(self._refresh_after_consolidation(op.bank_id))
        return totals

    def _refresh_after_consolidation(self, bank_id: str) -> list[str]:
        """Submit automatic refreshes of the bank's ``refresh_after_consolidation`` models that are stale."""
        models = self.store.list_models_with_trigger("refresh_after_consolidation", bank_id=bank_id)
        mark_stale(self.store, bank_id, models)
        return [op for m in models if m.is_stale and (op := self._submit_automatic_refresh(m)) is not None]

    def _submit_automatic_refresh(self, model: MentalModel) -> str | None:
        """An automatic refresh (coalesced; parked by the worker inside the rate limit); None while paused."""
        if automatic_paused(model):
            return None
        return self.refresh_mental_model(model.bank_id, model.id, automatic=True)

    def scheduler_tick(self, now: datetime | None = None) -> list[str]:
        """Refresh every ``refresh_cron`` model whose schedule fired since its last refresh AND that is stale; a
        fresh model is skipped without any synthesis. Safe to run in several processes at once (submissions
        coalesce). Returns the operation ids submitted."""
        now = now or self.clock()
        due = [m for m in self.store.list_models_with_trigger("refresh_cron") if cron_due(m, now)]
        submitted: list[str] = []
        for bank_id in sorted({m.bank_id for m in due}):
            models = [m for m in due if m.bank_id == bank_id]
            mark_stale(self.store, bank_id, models)
            submitted += [op for m in models if m.is_stale and (op := self._submit_automatic_refresh(m)) is not None]
        return submitted

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

    def list_memories(
        self,
        bank_id: str,
        *,
        types: Sequence[FactType] | None = None,
        tags: Sequence[str] = (),
        tags_match: TagsMatch = "any",
        query: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[MemoryUnit], int]:
        """A page of memories (newest write first) and the total. Raises :class:`NotFoundError` for a bank."""
        self._require_bank(bank_id)
        flt = MemoryFilter(fact_types=tuple(types) if types else None, tags=normalize_tags(tags), tags_match=tags_match)
        return self.store.list_memories(bank_id, flt, query=query, limit=limit, offset=offset)

    def get_memory(self, bank_id: str, memory_id: str) -> MemoryUnit:
        """One memory. Raises :class:`NotFoundError`."""
        found = self.store.get_memories(bank_id, [memory_id])
        if not found:
            raise NotFoundError(f"Memory '{memory_id}' not found in bank '{bank_id}'")
        return found[0]

    def update_memory(
        self,
        bank_id: str,
        memory_id: str,
        *,
        text: str | None = None,
        context: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: dict[str, str] | None = None,
    ) -> MemoryUnit:
        """Edit a fact's text (re-embedded), context, tags or metadata. An edit is a memory write: models whose scope
        the fact is in (before or after a tag change) go stale, and the fact is consolidated again. Observations are
        derived and cannot be edited. Raises :class:`NotFoundError`, :class:`InvalidInputError`."""
        memory = self.get_memory(bank_id, memory_id)
        if memory.fact_type == "observation":
            raise InvalidInputError("memory_id", "observations are derived from facts and cannot be edited")
        if text is not None and not text.strip():
            raise InvalidInputError("text", "must not be blank")
        embedding = None if text is None else self.embedder.embed([text.strip()])[0]
        self.store.update_memory(
            bank_id, memory_id, text=None if text is None else text.strip(), embedding=embedding, context=context,
            tags=None if tags is None else normalize_tags(tags), metadata=metadata,
        )  # fmt: skip
        if self.settings.enable_auto_consolidation:
            self.consolidate(bank_id)
        return self.get_memory(bank_id, memory_id)

    def delete_memory(self, bank_id: str, memory_id: str) -> None:
        """Delete one memory from every index. A deletion is a write: models citing it become stale, and (with
        auto-consolidation) a consolidation is queued, which detaches it from the observations it supported.
        Raises :class:`NotFoundError`."""
        if not self.store.delete_memory(bank_id, memory_id):
            raise NotFoundError(f"Memory '{memory_id}' not found in bank '{bank_id}'")
        if self.settings.enable_auto_consolidation:
            self.consolidate(bank_id)

    def list_tags(
        self, bank_id: str, *, source: Literal["memories", "mental_models"] = "memories", pattern: str | None = None,
        limit: int = 100, offset: int = 0,
    ) -> tuple[list[tuple[str, int]], int]:  # fmt: skip
        """Tags in use with counts, most used first; ``pattern`` supports ``*`` wildcards."""
        return self.store.list_tags(bank_id, source=source, pattern=pattern, limit=limit, offset=offset)

    # ------------------------------------------------------------------ banks
    def list_banks(self) -> list[tuple[Bank, int]]:
        """Every bank with its memory count."""
        return self.store.list_banks()

    def get_bank(self, bank_id: str) -> Bank:
        """A bank. Raises :class:`NotFoundError`."""
        bank = self.store.get_bank(bank_id)
        if bank is None:
            raise NotFoundError(f"Bank '{bank_id}' not found")
        return bank

    def put_bank(
        self, bank_id: str, *, name: str | None = None, mission: str | None = None,
        disposition: dict[str, int] | None = None,
    ) -> Bank:  # fmt: skip
        """Create a bank or update its profile (None = keep)."""
        return self.store.upsert_bank(bank_id, name=name, mission=mission, disposition=disposition)

    def delete_bank(self, bank_id: str) -> int:
        """Delete a bank and everything in it, atomically; returns the number of memories removed.
        Raises :class:`NotFoundError`."""
        removed = self.store.delete_bank(bank_id)
        if removed < 0:
            raise NotFoundError(f"Bank '{bank_id}' not found")
        return removed

    def bank_config(self, bank_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(resolved config, overrides)`` for the bank-overridable settings. Raises :class:`NotFoundError`."""
        overrides = self.get_bank(bank_id).config
        resolved = {key: overrides.get(key, getattr(self.settings, key)) for key in BANK_OVERRIDABLE}
        return resolved, overrides

    def update_bank_config(self, bank_id: str, updates: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Validate and merge per-bank overrides (None removes one). Raises :class:`InvalidInputError` naming an
        unknown key or a wrong type, :class:`NotFoundError` for the bank. Nothing is written on error."""
        self.get_bank(bank_id)
        for key, value in updates.items():
            kind = BANK_OVERRIDABLE.get(key)
            if kind is None:
                raise InvalidInputError(f"updates.{key}", f"unknown setting; allowed: {', '.join(BANK_OVERRIDABLE)}")
            if value is None:
                continue
            problem = _config_value_problem(kind, value)
            if problem:
                raise InvalidInputError(f"updates.{key}", problem)
        self.store.update_bank_config(bank_id, updates)
        return self.bank_config(bank_id)

    def resolved_setting(
        self,
        bank_id: str,
        key: str,
        trigger: dict[str, Any] | None = None,
        *,
        bank_config: dict[str, Any] | None = None,
    ) -> Any:
        """Precedence for a bank-overridable setting: model trigger value > bank override > environment.
        ``bank_config``: the bank's overrides when the caller already read them (saves a query per key)."""
        trigger_key = "min_refresh_interval_seconds" if key == "mental_model_min_refresh_interval_seconds" else key
        if trigger is not None and trigger.get(trigger_key) is not None:
            return trigger[trigger_key]
        if bank_config is None:
            bank = self.store.get_bank(bank_id)
            bank_config = {} if bank is None else bank.config
        if bank_config.get(key) is not None:
            return bank_config[key]
        return getattr(self.settings, key)

    def bank_stats(self, bank_id: str) -> dict[str, Any]:
        """Live bank statistics (``last_memory_write_at`` read from the database, never cached).
        Raises :class:`NotFoundError`."""
        self._require_bank(bank_id)
        return self.store.bank_stats(bank_id)

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
        detail: Literal["metadata", "content", "full"] = "full",
    ) -> tuple[list[MentalModel], int]:
        """A page of models (``last_refreshed_at DESC, id DESC``) with ``is_stale`` set, and the total. Below
        ``full`` detail, fields outside the level are not loaded (``structured_document``/``reflect_response``
        None; at ``metadata`` also ``content`` empty)."""
        models, total = self.store.list_mental_models(
            bank_id, tags=normalize_tags(tags), tags_match=tags_match, limit=limit, offset=offset, detail=detail
        )
        mark_stale(self.store, bank_id, models)
        return models, total

    def refresh_mental_model(
        self, bank_id: str, model_id: str, *, mode: Literal["full"] | None = None, automatic: bool = False
    ) -> str:
        """Queue a refresh and return its operation id.

        Coalescing (spec "Refresh a Mental Model"): while a refresh of the model is still queued, the same operation
        is returned; ``mode="full"`` upgrades it to full for that run; a manual request also releases a parked
        automatic one. A refresh already running is never reused: a new one queues behind it.
        Raises :class:`NotFoundError`.
        """
        self.get_mental_model(bank_id, model_id, with_staleness=False)
        payload: dict[str, Any] = {"mental_model_id": model_id}
        if mode == "full":
            payload["mode"] = "full"
        if automatic:
            payload["automatic"] = True
        op, _ = self.store.submit_coalesced(
            self._new_operation(bank_id, "refresh_mental_model", payload, model_id), full=mode == "full"
        )
        self.worker.wake()
        return op.id

    def update_mental_model(
        self,
        bank_id: str,
        model_id: str,
        *,
        name: str | None = None,
        source_query: str | None = None,
        max_tokens: int | None = None,
        tags: Sequence[str] | None = None,
        trigger: dict[str, Any] | None = None,
    ) -> MentalModel:
        """PATCH a model: given fields replace stored ones; ``trigger`` is MERGED over the stored trigger
        (``domain.trigger.merge_trigger``). Queues no refresh and writes no history (content is unchanged).

        Raises :class:`NotFoundError`, :class:`InvalidInputError` (blank name/query, max_tokens range, a merged
        trigger that breaks a rule).
        """
        model = self.get_mental_model(bank_id, model_id, with_staleness=False)
        if name is not None and not name.strip():
            raise InvalidInputError("name", "must not be blank")
        if source_query is not None and not source_query.strip():
            raise InvalidInputError("source_query", "must not be blank")
        if max_tokens is not None and not MIN_MAX_TOKENS <= max_tokens <= MAX_MAX_TOKENS:
            raise InvalidInputError("max_tokens", f"must be between {MIN_MAX_TOKENS} and {MAX_MAX_TOKENS}")
        merged = model.trigger
        if trigger is not None:
            try:
                merged = merge_trigger(model.trigger, trigger)
            except ValidationError as exc:
                raise InvalidInputError("trigger", _first_error(exc)) from exc
        updated = replace(
            model,
            name=name.strip() if name is not None else model.name,
            source_query=source_query.strip() if source_query is not None else model.source_query,
            max_tokens=max_tokens if max_tokens is not None else model.max_tokens,
            tags=normalize_tags(tags) if tags is not None else model.tags,
            trigger=merged,
        )
        self.store.save_refresh(updated, history=None, history_cap=self.settings.mental_model_history_max_entries)
        return self.get_mental_model(bank_id, model_id)

    def delete_mental_model(self, bank_id: str, model_id: str) -> None:
        """Delete a model and its history. Raises :class:`NotFoundError`."""
        if not self.store.delete_mental_model(bank_id, model_id):
            raise NotFoundError(f"Mental model '{model_id}' not found in bank '{bank_id}'")

    def clear_mental_model(self, bank_id: str, model_id: str) -> MentalModel:
        """Spec "Clear a Mental Model": content "" and structure reset synchronously (previous version kept in
        history); configuration kept; the next refresh is necessarily full, and the model counts as stale until it
        runs. Raises :class:`NotFoundError`."""
        model = self.get_mental_model(bank_id, model_id, with_staleness=False)
        cleared = replace(
            model,
            content="",
            structured_document=None,
            reflect_response=None,
            last_refreshed_source_query=None,
            last_refresh_failed_at=None,
            cleared_at=utcnow(),
        )
        self.store.save_refresh(
            cleared, history=self._version_history(model), history_cap=self.settings.mental_model_history_max_entries
        )
        return self.get_mental_model(bank_id, model_id)

    def revert_mental_model(self, bank_id: str, model_id: str, history_id: int) -> MentalModel:
        """Restore the content (and its structure) a history version recorded, with the watermark it was written
        at, so memories written since make the model stale again; the revert is itself recorded.

        Raises :class:`NotFoundError` (model or history id) and :class:`InvalidInputError` (a failure record).
        """
        model = self.get_mental_model(bank_id, model_id, with_staleness=False)
        entry = next((e for e in self.store.list_history(bank_id, model_id) if e.id == history_id), None)
        if entry is None:
            raise NotFoundError(f"History entry {history_id} not found for mental model '{model_id}'")
        if entry.content.get("kind") == "refresh_failed" or "previous_content" not in entry.content:
            raise InvalidInputError("history_id", "is a failure record, not a version; nothing to restore")
        content = entry.content.get("previous_content") or ""
        document = parse_markdown(content)
        restored = replace(
            model,
            content=document.render(),
            structured_document=document.to_dict() if content else None,
            reflect_response={
                **(entry.content.get("previous_reflect_response") or {}),
                "outcome": "content_written",
                "reverted_from_history_id": history_id,
            },
            last_refreshed_at=utcnow(),
            # the restored content stands for the data it was written from: its watermark comes back with it (a
            # deliberate step back), so memories written since make the model stale and a delta refresh reads them
            last_memory_seen_at=parse_timestamp(entry.content.get("previous_last_memory_seen_at"))
            if "previous_last_memory_seen_at" in entry.content
            else model.last_memory_seen_at,
            cleared_at=None,
        )
        self.store.save_refresh(
            restored, history=self._version_history(model), history_cap=self.settings.mental_model_history_max_entries
        )
        return self.get_mental_model(bank_id, model_id)

    def scope_preview(
        self, bank_id: str, *, tags: Sequence[str] = (), trigger: MentalModelTrigger | dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """How many memories a model with ``tags`` and ``trigger`` would read now, by fact type, and the resolved
        match mode (beyond the reference: the strict-tag default silently matching nothing is its top pitfall)."""
        trig = trigger if isinstance(trigger, MentalModelTrigger) else MentalModelTrigger.model_validate(trigger or {})
        scope = model_scope(normalize_tags(tags), trig.model_dump())
        counts = self.store.count_in_scope(bank_id, scope) if self.store.bank_exists(bank_id) else {}
        by_type = {t: counts.get(t, 0) for t in FACT_TYPES}
        return {
            "total": sum(by_type.values()),
            "by_fact_type": by_type,
            "tags": list(scope.tags),
            "tags_match": None if scope.tag_groups else scope.tags_match,
            "tag_groups": scope.groups or None,
            "fact_types": None if scope.fact_types is None else list(scope.fact_types),
        }

    def scope_warnings(self, model: MentalModel) -> list[str]:
        """Plain-language warnings about a model's scope (empty list when all is well)."""
        preview = self.scope_preview(model.bank_id, tags=model.tags, trigger=model.trigger)
        if preview["total"] == 0:
            mode = preview["tags_match"] or "tag_groups"
            warning = f"The scope matches no memories right now (tags {list(model.tags)}, match {mode}); a refresh "
            warning += "will find nothing."
            if model.tags and mode == "all_strict":
                warning += (
                    " Tagged models default to all_strict: set trigger.tags_match to 'any' if your memories carry"
                    " only some of the tags."
                )
            return [warning]
        return []

    def _version_history(self, model: MentalModel) -> dict[str, Any] | None:
        if not self.settings.enable_mental_model_history:
            return None
        return version_entry(model)

    def mental_model_history(self, bank_id: str, model_id: str) -> list[dict[str, Any]]:
        """History entries, most recent first: ``{id, changed_at, previous_content, ...}`` or failure records."""
        self.get_mental_model(bank_id, model_id, with_staleness=False)
        return [
            {"id": e.id, **e.content, "changed_at": to_iso(e.changed_at)}
            for e in self.store.list_history(bank_id, model_id)
        ]

    def _refresh_settings(self, bank_id: str) -> RefreshSettings:
        bank = self.store.get_bank(bank_id)
        config = {} if bank is None else bank.config

        def setting(key: str) -> Any:
            return self.resolved_setting(bank_id, key, bank_config=config)

        return RefreshSettings(
            recall_max_tokens=setting("recall_max_tokens"),
            recall_candidates=self.settings.recall_candidates,
            include_chunks=setting("recall_include_chunks"),
            recall_chunks_max_tokens=setting("recall_chunks_max_tokens"),
            history_enabled=self.settings.enable_mental_model_history,
            history_cap=self.settings.mental_model_history_max_entries,
            relevance_threshold=setting("refresh_relevance_threshold"),
        )

    def _run_refresh(self, op: Operation) -> dict[str, Any]:
        model_id = op.payload["mental_model_id"]
        model = self.store.get_mental_model(op.bank_id, model_id)
        if model is None:
            raise PermanentFailure(f"mental model '{model_id}' no longer exists")
        if op.payload.get("automatic"):
            interval = self.resolved_setting(op.bank_id, "mental_model_min_refresh_interval_seconds", model.trigger)
            due = park_until(model, interval, self.clock())
            if due is not None:
                raise Deferred(due, "inside the model's minimum refresh interval")
        settings = self._refresh_settings(op.bank_id)
        plan = self.refresher.plan(
            model, settings, mode=op.payload.get("mode"), automatic=bool(op.payload.get("automatic"))
        )
        self.refresher.persist(plan, settings)
        result = {
            "mental_model_id": model_id,
            "name": model.name,
            "outcome": plan.outcome,
            "effective_mode": plan.effective_mode,
            "mode_fallback_reason": plan.mode_fallback_reason,
            "content_len": len(plan.content),
            "facts_retrieved": len(plan.retrieved),
            "facts_used": len(plan.used_ids),
            "delta_ops_applied": len(plan.applied),
            "delta_ops_skipped": len(plan.skipped),
            "last_memory_seen_at": to_iso(_newer_of(plan.watermark, model.last_memory_seen_at)),
        }
        if plan.failed:
            raise PermanentFailure(
                plan.error_message or plan.failure_reason or "refresh failed",
                {**result, "failure_reason": plan.failure_reason},
            )
        return result

    def dry_run_refresh(self, bank_id: str, model_id: str) -> dict[str, Any]:
        """Spec "Dry run": the real pipeline with every write skipped (and, as in the reference, no structured-output
        extraction); returns what a refresh would do (``MentalModelDryRunRefreshResult``). Raises
        :class:`NotFoundError`, and :class:`RefreshPreviewError` when the engine failed in a way none of the five
        dry-run outcomes names (no answer, retrieval or unexpected error)."""
        model = self.get_mental_model(bank_id, model_id, with_staleness=False)
        plan = self.refresher.plan(model, self._refresh_settings(bank_id), dry_run=True)
        if plan.outcome not in DRY_RUN_OUTCOMES:
            reason = plan.failure_reason or "unexpected_error"
            raise RefreshPreviewError(plan.error_message or reason, reason=reason, upstream=reason == "no_answer")
        return dry_run_result(plan)

    # ------------------------------------------------------------------ reflect and LLM requests
    def reflect(
        self,
        bank_id: str,
        query: str,
        *,
        budget: Literal["low", "mid", "high"] = "low",
        max_tokens: int = 4096,
        include_facts: bool = False,
        include_tool_calls: bool = False,
        tool_outputs: bool = True,
        response_schema: dict[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        tags_match: TagsMatch = "any",
        tag_groups: list[dict[str, Any]] | None = None,
        fact_types: Sequence[FactType] | None = None,
        exclude_mental_models: bool = False,
        exclude_mental_model_ids: Sequence[str] = (),
        observations_max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """Spec "Reflect": answer ``query`` through the hierarchy (mental models → observations → facts), with the
        reflect LLM's agent loop, or extractively (cited quotations) when none is configured. Returns the reference's
        ``ReflectResponse`` dict (``engine/reflect/run.py``).

        Raises :class:`InvalidInputError` (blank query, tags with tag_groups, bad tag groups / response_schema / fact
        types), :class:`NotFoundError` for the bank, ``LLMError`` / ``LLMTransientError`` from the provider."""
        from mindbank.engine.reflect import ReflectOptions, ReflectScope
        from mindbank.engine.reflect import reflect as run_reflect

        if not query.strip():
            raise InvalidInputError("query", "must not be blank")
        if tags and tag_groups:
            raise InvalidInputError("tag_groups", "tags and tag_groups are mutually exclusive")
        if fact_types is not None and not fact_types:
            raise InvalidInputError("fact_types", "must not be an empty list (use null for all types)")
        try:
            groups = None if tag_groups is None else freeze_groups(validate_tag_groups(tag_groups))
        except ValueError as exc:
            raise InvalidInputError("tag_groups", str(exc)) from exc
        try:
            if response_schema is not None:
                validate_response_schema(response_schema)
        except ValueError as exc:
            raise InvalidInputError("response_schema", str(exc)) from exc
        self._require_bank(bank_id)
        scope = ReflectScope(
            bank_id=bank_id,
            filter=MemoryFilter(tags=normalize_tags(tags), tags_match=tags_match, tag_groups=groups),
            fact_types=tuple(fact_types) if fact_types else FACT_TYPES,
            exclude_mental_models=exclude_mental_models,
            exclude_mental_model_ids=frozenset(exclude_mental_model_ids),
            recall_max_tokens=self.resolved_setting(bank_id, "recall_max_tokens"),
            observations_max_tokens=observations_max_tokens or 5000,
            recall_candidates=self.settings.recall_candidates,
        )
        options = ReflectOptions(
            query=query.strip(), budget=budget, max_tokens=max_tokens, include_facts=include_facts,
            tool_calls=include_tool_calls, tool_outputs=tool_outputs, response_schema=response_schema,
            request_id=f"reflect-{uuid.uuid4()}",
        )  # fmt: skip
        with llm_call_context(bank_id, options.request_id):
            return run_reflect(self.store, self.embedder, self.llms.get("reflect"), scope, options)

    def llm_requests(self, bank_id: str, operation_id: str, *, limit: int = 500) -> list[LLMRequestRecord]:
        """The traced LLM attempts of one operation, oldest first (empty unless ``MINDBANK_LLM_TRACE_ENABLED``)."""
        return self.store.list_llm_requests(bank_id, operation_id, limit=limit)

    def _in_llm_context(self, handler: Callable[[Operation], dict[str, Any]]) -> Callable[[Operation], dict[str, Any]]:
        """``handler`` with its LLM calls attributed to the operation it runs (LLM request tracing)."""

        def run(op: Operation) -> dict[str, Any]:
            with llm_call_context(op.bank_id, op.id):
                return handler(op)

        return run

    # ------------------------------------------------------------------ operations
    def get_operation(self, bank_id: str, operation_id: str) -> Operation:
        """One operation. Raises :class:`NotFoundError`."""
        op = self.store.get_operation(bank_id, operation_id)
        if op is None:
            raise NotFoundError(f"Operation '{operation_id}' not found in bank '{bank_id}'")
        return op

    def list_operations(
        self, bank_id: str, *, status: str | None = None, operation_type: str | None = None, limit: int = 20,
        offset: int = 0,
    ) -> tuple[list[Operation], int]:  # fmt: skip
        """A page of the bank's operations, newest first, and the total."""
        return self.store.list_operations(
            bank_id, status=status, operation_type=operation_type, limit=limit, offset=offset
        )

    def cancel_operation(self, bank_id: str, operation_id: str) -> Operation:
        """Cancel a pending operation. Raises :class:`NotFoundError`, and :class:`ConflictError` when it is no longer
        pending (running or finished operations cannot be cancelled)."""
        current = self.get_operation(bank_id, operation_id)
        op = self.store.cancel_operation(bank_id, operation_id) if current.status == "pending" else current
        if op is None:
            raise NotFoundError(f"Operation '{operation_id}' not found in bank '{bank_id}'")
        if current.status != "pending" or op.status != "cancelled":
            raise ConflictError(f"Operation '{operation_id}' is {op.status}; only pending operations can be cancelled")
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

    # ------------------------------------------------------------------ client-compatible names
    # ``mindbank.client.Client`` method names, so code moves between in-process and HTTP use by swapping the object.
    def dry_run_refresh_mental_model(self, bank_id: str, model_id: str) -> dict[str, Any]:
        """Alias of :meth:`dry_run_refresh` (the client's name)."""
        return self.dry_run_refresh(bank_id, model_id)

    def get_mental_model_history(self, bank_id: str, model_id: str) -> list[dict[str, Any]]:
        """Alias of :meth:`mental_model_history` (the client's name)."""
        return self.mental_model_history(bank_id, model_id)

    def stats(self, bank_id: str) -> dict[str, Any]:
        """Alias of :meth:`bank_stats` (the client's name)."""
        return self.bank_stats(bank_id)

    def wait(self, bank_id: str, operation_id: str, *, timeout: float = 120.0) -> Operation:
        """Alias of :meth:`wait_for` (the client's name): block until the operation is terminal."""
        return self.wait_for(bank_id, operation_id, timeout=timeout)
