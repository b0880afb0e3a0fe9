"""What every service component shares (:class:`ServiceState`) and the helpers over it (:class:`ServiceCore`):
operation submission, bank checks, setting resolution (model trigger > bank override > environment).

The state is one mutable object that :class:`~mindbank.service.MindBank` builds and every component holds:
replacing ``settings`` on ``MindBank`` (an operator reloading configuration, a test) is seen by every component at
its next read.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from mindbank.config import TRIGGER_KEYS, Settings
from mindbank.domain.limits import Limits, check_bank_id
from mindbank.domain.records import MemoryUnit, Operation
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.engine.refresh.plan import RefreshSettings
from mindbank.errors import EmbeddingModelMismatchError, NotFoundError
from mindbank.providers.embeddings.base import Embedder
from mindbank.providers.embeddings.factory import build_previous_embedder
from mindbank.providers.llm.base import LLM
from mindbank.providers.llm.context import context_budget
from mindbank.service.events import EventHub
from mindbank.store.base import Store


def _no_worker() -> None:
    """The wake-up of a service without a worker yet (``MindBank`` wires the real one once it is built)."""


@dataclass(slots=True)
class ServiceState:
    """The shared state of one service tree: settings and the request limits derived from them, the store, the
    embedder, the clock, the LLM per operation (None: the extractive engine), the fact extractor of retains (None:
    the extractive split), the event hub, and ``wake`` (tells the worker new work is queued)."""

    settings: Settings
    limits: Limits
    store: Store
    embedder: Embedder
    clock: Callable[[], datetime]
    llms: dict[str, LLM | None]
    extract_facts: Callable[..., Any] | None
    # service events (retains, consolidations, refreshes) told to the webhook dispatcher and the metrics
    events: EventHub = field(default_factory=EventHub)
    wake: Callable[[], None] = _no_worker
    # embedders of banks' earlier models (being re-embedded to ``embedder``'s), built once when first needed
    previous_embedders: dict[tuple[str, int], Embedder | None] = field(default_factory=dict)


class ServiceCore:
    """The base of every service component: reads of the shared :class:`ServiceState` (always current) and the
    helpers they share: submitting operations, requiring a bank, checking the embedding model, resolving a
    bank-overridable setting."""

    def __init__(self, state: ServiceState) -> None:
        self.state = state

    @property
    def settings(self) -> Settings:
        return self.state.settings

    @property
    def limits(self) -> Limits:
        return self.state.limits

    @property
    def store(self) -> Store:
        return self.state.store

    @property
    def embedder(self) -> Embedder:
        return self.state.embedder

    @property
    def llms(self) -> dict[str, LLM | None]:
        return self.state.llms

    @property
    def events(self) -> EventHub:
        return self.state.events

    @property
    def _extract_facts(self) -> Callable[..., Any] | None:
        return self.state.extract_facts

    def clock(self) -> datetime:
        """Now, by the service's clock (a test's settable clock or :func:`utcnow`)."""
        return self.state.clock()

    def wake(self) -> None:
        """Tell the worker that an operation was queued."""
        self.state.wake()

    def _submit(self, bank_id: str, operation_type: str, payload: dict[str, Any], model_id: str | None = None) -> str:
        op = self._new_operation(bank_id, operation_type, payload, model_id)
        self.store.submit_operation(op)
        self.wake()
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

    def queue_refresh(self, bank_id: str, model_id: str, *, full: bool = False, automatic: bool = False) -> str:
        """Queue a refresh of an existing model, coalesced with one still queued (``full`` upgrades it to full for
        that run; a manual request also releases a parked automatic one); returns its operation id. Raises
        :class:`NotFoundError` for a model that does not exist."""
        if self.store.get_mental_model(bank_id, model_id) is None:
            raise NotFoundError(f"Mental model '{model_id}' not found in bank '{bank_id}'")
        payload: dict[str, Any] = {"mental_model_id": model_id}
        if full:
            payload["mode"] = "full"
        if automatic:
            payload["automatic"] = True
        op, _ = self.store.submit_coalesced(
            self._new_operation(bank_id, "refresh_mental_model", payload, model_id), full=full
        )
        self.wake()
        return op.id

    def queue_consolidation(
        self, bank_id: str, observation_scopes: Any = None, *, queued_at: datetime | None = None
    ) -> tuple[str, bool]:
        """Queue a consolidation of the bank's pending facts (at most one pending per bank: a second request
        returns the queued one). ``queued_at``: when the work it finishes was queued (the operation whose backlog it
        carries on, or the queued retain whose facts it consolidates): a refresh asked for after that moment waits
        for it (the claim rule). Returns ``(operation_id, deduplicated)``."""
        payload: dict[str, Any] = {"observation_scopes": observation_scopes or self.settings.observation_scopes}
        if queued_at is not None:
            payload["queued_at"] = to_iso(queued_at)
        op, deduplicated = self.store.submit_coalesced(self._new_operation(bank_id, "consolidation", payload))
        self.wake()
        return op.id, deduplicated

    def _check_bank_id(self, bank_id: str) -> None:
        """Raises :class:`InvalidInputError` for a bank id the limits refuse (before any store call sees it)."""
        check_bank_id(bank_id, self.limits)

    def _require_bank(self, bank_id: str) -> None:
        self._check_bank_id(bank_id)
        if not self.store.bank_exists(bank_id):
            raise NotFoundError(f"Bank '{bank_id}' not found")

    def _one_memory(self, bank_id: str, memory_id: str) -> MemoryUnit:
        """The bank's memory ``memory_id``. Raises :class:`NotFoundError` when the bank lacks it."""
        found = self.store.get_memories(bank_id, [memory_id])
        return found_in_bank(found[0] if found else None, "Memory", memory_id, bank_id)

    def _check_embedding_model(self, bank_id: str, *, record: bool = False) -> None:
        """Refuse to search or add vectors in a bank whose vectors another embedding model made: raises
        :class:`EmbeddingModelMismatchError` (HTTP 409) naming both models. ``record``: after a write, record the
        configured model as the bank's when the bank has none yet (its first vectors)."""
        if record:
            found = self.store.record_bank_embedding_model(bank_id, self.embedder.name, self.embedder.dimension)
        else:
            found = self.store.bank_embedding_model(bank_id)
        if found is not None and found != (self.embedder.name, self.embedder.dimension):
            raise EmbeddingModelMismatchError(bank_id, found[0], found[1], self.embedder.name, self.embedder.dimension)

    def bank_embedder(self, bank_id: str) -> Embedder:
        """The embedder whose vectors the bank holds: the configured one (also for a bank without vectors yet), or
        the model the bank is being re-embedded away from when this server can still make its vectors (the bundled
        MiniLM, ``MINDBANK_EMBEDDING_PREVIOUS_MODEL``): recalls and retains go on with it until the switch commits.
        Raises :class:`EmbeddingModelMismatchError` (HTTP 409) naming both models otherwise."""
        found = self.store.bank_embedding_model(bank_id)
        configured = self.embedder
        if found is None or found == (configured.name, configured.dimension):
            return configured
        cache = self.state.previous_embedders
        if found not in cache:
            cache[found] = build_previous_embedder(self.settings, found[0], found[1])
        previous = cache[found]
        if previous is None or previous.dimension != found[1]:
            raise EmbeddingModelMismatchError(bank_id, found[0], found[1], configured.name, configured.dimension)
        return previous

    @staticmethod
    def model_of(embedder: Embedder) -> tuple[str, int]:
        """``(name, dimension)``: the identity a bank records for the vectors ``embedder`` makes."""
        return embedder.name, embedder.dimension

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
        trigger_key = TRIGGER_KEYS.get(key, key)
        if trigger is not None and trigger.get(trigger_key) is not None:
            return trigger[trigger_key]
        if bank_config is None:
            bank = self.store.get_bank(bank_id)
            bank_config = {} if bank is None else bank.config
        if bank_config.get(key) is not None:
            return bank_config[key]
        return getattr(self.settings, key)

    def refresh_settings(self, bank_id: str) -> RefreshSettings:
        """What a refresh of a model in ``bank_id`` reads and keeps (trigger-independent settings resolved bank >
        environment; the caps the LLM's context window allows)."""
        bank = self.store.get_bank(bank_id)
        config = {} if bank is None else bank.config

        def setting(key: str) -> Any:
            return self.resolved_setting(bank_id, key, bank_config=config)

        fit = context_budget(self.settings.llm_context_window)
        return RefreshSettings(
            facts_cap=None if fit is None else fit.facts,
            chunks_cap=None if fit is None else fit.chunks,
            observations_cap=None if fit is None else fit.observations,
            recall_max_tokens=setting("recall_max_tokens"),
            recall_candidates=self.settings.recall_candidates,
            include_chunks=setting("recall_include_chunks"),
            recall_chunks_max_tokens=setting("recall_chunks_max_tokens"),
            history_enabled=self.settings.enable_mental_model_history,
            history_cap=self.settings.mental_model_history_max_entries,
            relevance_threshold=setting("refresh_relevance_threshold"),
        )


_T = TypeVar("_T")


def found_in_bank(value: _T | None, kind: str, key: str, bank_id: str) -> _T:
    """``value``, or :class:`NotFoundError` ``"<kind> '<key>' not found in bank '<bank_id>'"`` when it is None (a
    store's getter answers None for a record the bank lacks)."""
    if value is None:
        raise not_found_in_bank(kind, key, bank_id)
    return value


def changed_in_bank(changed: bool, kind: str, key: str, bank_id: str) -> None:
    """Raise :class:`NotFoundError` (as :func:`found_in_bank`) when a store's update or delete answered that it
    changed nothing: the bank lacks the record."""
    if not changed:
        raise not_found_in_bank(kind, key, bank_id)


def not_found_in_bank(kind: str, key: str, bank_id: str) -> NotFoundError:
    """The :class:`NotFoundError` for a ``kind`` record ``key`` the bank lacks."""
    return NotFoundError(f"{kind} '{key}' not found in bank '{bank_id}'")
