"""LLM request tracing: every LLM attempt stored with the operation it served, for a retention period.

Off by default (``MINDBANK_LLM_TRACE_ENABLED``). The service opens an :func:`llm_call_context` around each piece of
work (a queued operation, a reflect request); :class:`LLMTracer`, registered as an observer of every
:class:`~mindbank.providers.llm.base.ManagedLLM`, stores each attempt under that context. Rows older than
``MINDBANK_LLM_TRACE_RETENTION_HOURS`` are purged as new ones arrive (at most once per ``PURGE_EVERY_S``). What is
stored is the request as the engine built it (messages, tool names, schema) and the reply or error: credentials
live in the provider clients and never reach a trace.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta

from mindbank.domain.records import LLMRequestRecord
from mindbank.domain.timeutil import utcnow
from mindbank.providers.llm.base import CallRecord
from mindbank.store.base import Store

log = logging.getLogger(__name__)
PURGE_EVERY_S = 600.0


@dataclass(frozen=True, slots=True)
class CallContext:
    """Whom the LLM calls made now are for: a bank and an operation (or reflect request) id."""

    bank_id: str
    operation_id: str | None


_CONTEXT: ContextVar[CallContext | None] = ContextVar("mindbank_llm_call_context", default=None)


@contextmanager
def llm_call_context(bank_id: str, operation_id: str | None) -> Iterator[None]:
    """Attribute the LLM calls made inside the block (in this thread / task) to ``bank_id`` / ``operation_id``."""
    token = _CONTEXT.set(CallContext(bank_id, operation_id))
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def current_operation_id() -> str | None:
    """The operation (or reflect request) the work running now in this thread / task is attributed to, if any."""
    context = _CONTEXT.get()
    return None if context is None else context.operation_id


class LLMTracer:
    """An LLM observer writing :class:`LLMRequestRecord` rows when ``enabled`` (calls outside any context are not
    stored: there is nothing to attach them to)."""

    def __init__(self, store: Store, *, enabled: bool, retention_hours: float) -> None:
        self.store = store
        self.enabled = enabled
        self.retention = timedelta(hours=max(0.0, retention_hours))
        # -inf, not 0: monotonic() starts near zero after boot, which would skip the first purge for 10 minutes
        self._last_purge = float("-inf")
        self._lock = threading.Lock()

    def __call__(self, call: CallRecord) -> None:
        context = _CONTEXT.get()
        if not self.enabled or context is None:
            return
        result = call.result
        self.store.record_llm_request(
            LLMRequestRecord(
                id=str(uuid.uuid4()),
                bank_id=context.bank_id,
                operation_id=context.operation_id,
                scope=call.scope,
                provider=call.provider,
                model=call.model,
                attempt=call.attempt,
                request=call.request.to_trace(),
                response=None if result is None else result.to_trace(),
                error=call.error,
                input_tokens=0 if result is None else result.usage.input_tokens,
                output_tokens=0 if result is None else result.usage.output_tokens,
                duration_ms=call.duration_ms,
                created_at=utcnow(),
            )
        )
        self._maybe_purge()

    def _maybe_purge(self) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._last_purge < PURGE_EVERY_S:
                return
            self._last_purge = now
        removed = self.store.purge_llm_requests(utcnow() - self.retention)
        if removed:
            log.info("purged %d traced LLM requests older than %s", removed, self.retention)
