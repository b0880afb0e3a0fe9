"""The facade's shared state and helpers (:class:`ServiceCore`): operation submission, bank checks, setting
resolution (model trigger > bank override > environment).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mindbank.config import TRIGGER_KEYS, Settings
from mindbank.domain.limits import Limits, check_bank_id
from mindbank.domain.records import Operation
from mindbank.domain.timeutil import utcnow
from mindbank.errors import EmbeddingModelMismatchError, NotFoundError
from mindbank.providers.embeddings.base import Embedder
from mindbank.providers.llm.base import LLM
from mindbank.store.base import Store
from mindbank.worker.runner import Worker

if TYPE_CHECKING:
    from mindbank.service.events import EventHub
    from mindbank.service.governance import Governance
    from mindbank.service.jobs import Jobs


class ServiceCore:
    """State and helpers every resource module of the facade shares: the store, the embedder, settings, the clock,
    the LLMs per operation, the worker; submitting operations, requiring a bank, resolving a bank-overridable
    setting. Not used on its own: :class:`~mindbank.service.facade.MindBank` builds it."""

    settings: Settings
    limits: Limits
    store: Store
    embedder: Embedder
    clock: Callable[[], datetime]
    llms: dict[str, LLM | None]
    worker: Worker
    jobs: Jobs
    events: EventHub
    governance: Governance

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

    def _check_bank_id(self, bank_id: str) -> None:
        """Raises :class:`InvalidInputError` for a bank id the limits refuse (before any store call sees it)."""
        check_bank_id(bank_id, self.limits)

    def _require_bank(self, bank_id: str) -> None:
        self._check_bank_id(bank_id)
        if not self.store.bank_exists(bank_id):
            raise NotFoundError(f"Bank '{bank_id}' not found")

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
