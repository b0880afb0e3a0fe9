"""A worker that claims queued operations with a lease and runs them.

Handlers are plain callables ``(Operation) -> dict`` registered per ``operation_type``. A handler raising
:class:`PermanentFailure` fails the operation at once; any other exception is retried with exponential backoff
up to ``max_retries`` and then marked failed, after the optional ``on_exhausted`` hook has recorded what that means
for the operation (the service records a refresh failure) and returned its result. A worker that dies
mid-operation leaves a ``processing`` row whose lease expires, after which any worker reclaims and reruns it.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from mindbank.domain.records import Operation
from mindbank.domain.timeutil import utcnow
from mindbank.store.base import Store

log = logging.getLogger(__name__)

Handler = Callable[[Operation], dict[str, Any]]
ExhaustedHook = Callable[[Operation, Exception], dict[str, Any] | None]


class Deferred(Exception):
    """Raised by a handler to park its operation until ``due_at`` (pending, no retry counted, no error).

    Used by rate-limited automatic refreshes: later triggers fold into the parked operation.
    """

    def __init__(self, due_at: datetime, reason: str = "") -> None:
        super().__init__(reason or f"deferred until {due_at.isoformat()}")
        self.due_at = due_at


class PermanentFailure(Exception):
    """Raised by a handler when retrying cannot help; ``details`` lands in the operation's result."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """Polling interval and lease (seconds), retry bound and first backoff (seconds, doubled per retry)."""

    poll_seconds: float = 0.2
    lease_seconds: float = 300.0
    max_retries: int = 3
    retry_backoff_seconds: float = 5.0


class Worker:
    """Runs operations from ``store`` with ``handlers``; use :meth:`run_once` directly or :meth:`start` a thread."""

    def __init__(
        self,
        store: Store,
        handlers: dict[str, Handler],
        settings: WorkerSettings,
        *,
        clock: Callable[[], datetime] = utcnow,
        on_exhausted: ExhaustedHook | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.on_exhausted = on_exhausted
        self.handlers = handlers
        self.settings = settings
        self.worker_id = f"worker-{uuid.uuid4().hex[:8]}"
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> bool:
        """Claim and run one operation; False when nothing was runnable."""
        op = self.store.claim_operation(self.worker_id, self.settings.lease_seconds, now=self.clock())
        if op is None:
            return False
        handler = self.handlers.get(op.operation_type)
        if handler is None:
            self.store.finish_operation(
                op.id, status="failed", result=None, error=f"no handler for {op.operation_type!r}"
            )
            return True
        try:
            result = handler(op)
        except Deferred as exc:
            self.store.defer_operation(op.id, next_retry_at=exc.due_at)
        except PermanentFailure as exc:
            self.store.finish_operation(op.id, status="failed", result=exc.details or None, error=str(exc))
        except Exception as exc:
            log.exception("operation %s (%s) failed", op.id, op.operation_type)
            if op.retry_count < self.settings.max_retries:
                delay = self.settings.retry_backoff_seconds * (2**op.retry_count)
                self.store.retry_operation(op.id, next_retry_at=self.clock() + timedelta(seconds=delay), error=str(exc))
            else:
                self.store.finish_operation(op.id, status="failed", result=self._exhausted(op, exc), error=str(exc))
        else:
            self.store.finish_operation(op.id, status="completed", result=result, error=None)
        return True

    def _exhausted(self, op: Operation, exc: Exception) -> dict[str, Any] | None:
        """The ``on_exhausted`` hook's result; a failing hook is logged and the operation still fails."""
        if self.on_exhausted is None:
            return None
        try:
            return self.on_exhausted(op, exc)
        except Exception:
            log.exception("recording the exhausted retries of operation %s failed", op.id)
            return None

    def drain(self, *, max_operations: int = 10_000) -> int:
        """Run operations until none is runnable now; returns how many ran."""
        ran = 0
        while ran < max_operations and self.run_once():
            ran += 1
        return ran

    def wake(self) -> None:
        """Cut the idle wait short (called after a submit)."""
        self._wake.set()

    def start(self) -> None:
        """Run in a daemon thread until :meth:`stop`."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=self.worker_id, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the thread to finish its current operation and exit."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                busy = self.run_once()
            except Exception:
                log.exception("worker loop error")
                busy = False
            if not busy:
                self._wake.wait(self.settings.poll_seconds)
                self._wake.clear()
