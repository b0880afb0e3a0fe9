"""A worker that claims queued operations with a lease and runs them, in one or more slots (threads).

Handlers are plain callables ``(Operation) -> dict`` registered per ``operation_type``. A handler raising
:class:`PermanentFailure` fails the operation at once; any other exception is retried with exponential backoff
up to ``max_retries`` and then marked failed, after the optional ``on_exhausted`` hook has recorded what that means
for the operation (the service records a refresh failure) and returned its result. A worker that dies
mid-operation leaves a ``processing`` row whose lease expires, after which any worker reclaims and reruns it.

Exactly once (an operation's effect happens once, however often it is claimed): each claim carries a fresh token;
while the handler runs, a heartbeat renews the lease every third of it, and the handler runs inside the claim's
fence (:mod:`mindbank.store.fence`), so each of its write transactions, and the operation's end, commits only while
the claim still holds. A worker that lost its lease (it stalled past it and another worker reclaimed the operation)
gets ``LeaseLost`` and leaves the operation to the new owner. Long handlers commit progress as they go and may step
aside (:class:`Requeue`) so other work runs; claims are fair by bank and by operation type (the store's claim
order). A refresh of a mental model is not claimed while its bank's consolidation queued before it is pending or
running, for at most :attr:`WorkerSettings.consolidation_wait_seconds` (the store's claim rule).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from mindbank.domain.records import Operation
from mindbank.domain.timeutil import utcnow
from mindbank.store.base import CONSOLIDATION_WAIT_SECONDS, Lane, Store
from mindbank.store.fence import Fence, LeaseLost, fenced

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


class Requeue(Exception):
    """Raised by a handler that committed part of its work (its progress checkpointed through the fence) and steps
    aside: the operation goes back to pending, runnable at once, behind the work that was already waiting."""


class PermanentFailure(Exception):
    """Raised by a handler when retrying cannot help; ``details`` lands in the operation's result."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """Polling interval and lease (seconds), retry bound and first backoff (seconds, doubled per retry), and how
    many operations :meth:`Worker.start` runs at once (``slots``, one thread each) besides webhook deliveries, which
    run in threads of their own (``delivery_slots``; 0: in the slots with everything else), so a receiver that
    answers slowly never holds a retain, refresh or consolidation behind it. ``consolidation_wait_seconds``: how
    long a queued refresh may wait for its bank's earlier consolidation (seconds; 0: it never waits)."""

    poll_seconds: float = 0.2
    lease_seconds: float = 300.0
    max_retries: int = 3
    retry_backoff_seconds: float = 5.0
    slots: int = 1
    delivery_slots: int = 1
    consolidation_wait_seconds: float = CONSOLIDATION_WAIT_SECONDS

    @property
    def heartbeat_seconds(self) -> float:
        """How often a running operation's lease is renewed: a third of the lease, so two renewals may fail (a
        stalled database, a long transaction ahead in the queue) before another worker may take it."""
        return max(self.lease_seconds / 3.0, 0.01)


class Worker:
    """Runs operations from ``store`` with ``handlers``; use :meth:`run_once` directly or :meth:`start` the slots."""

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
        self._threads: list[threading.Thread] = []

    def run_once(self, slot: int | str = 0, lane: Lane | None = None) -> bool:
        """Claim and run one operation (of ``lane``: see :data:`~mindbank.store.base.Lane`; None: any); False when
        nothing was runnable."""
        op = self.store.claim_operation(
            f"{self.worker_id}/{slot}",
            self.settings.lease_seconds,
            now=self.clock(),
            lane=lane,
            consolidation_wait_seconds=self.settings.consolidation_wait_seconds,
        )
        if op is None:
            return False
        fence = Fence(op.id, op.claim_token or "")
        handler = self.handlers.get(op.operation_type)
        if handler is None:
            self.store.finish_operation(
                op.id, status="failed", result=None, error=f"no handler for {op.operation_type!r}", token=fence.token
            )
            return True
        try:
            with self._heartbeat(fence), fenced(fence):
                result = handler(op)
        except LeaseLost:
            log.warning("operation %s (%s): lease lost, left to the worker that holds it", op.id, op.operation_type)
        except Requeue:
            self._settle(fence, self.store.defer_operation(op.id, next_retry_at=self.clock(), token=fence.token))
        except Deferred as exc:
            self._settle(fence, self.store.defer_operation(op.id, next_retry_at=exc.due_at, token=fence.token))
        except PermanentFailure as exc:
            self._settle(
                fence,
                self.store.finish_operation(
                    op.id, status="failed", result=exc.details or None, error=str(exc), token=fence.token
                ),
            )
        except Exception as exc:
            log.exception("operation %s (%s) failed", op.id, op.operation_type)
            if op.retry_count < self.settings.max_retries:
                delay = self.settings.retry_backoff_seconds * (2**op.retry_count)
                due = self.clock() + timedelta(seconds=delay)
                self._settle(
                    fence, self.store.retry_operation(op.id, next_retry_at=due, error=str(exc), token=fence.token)
                )
            else:
                with fenced(fence):  # the hook writes only while this worker still holds the claim
                    failure = self._exhausted(op, exc)
                self._settle(
                    fence,
                    self.store.finish_operation(
                        op.id, status="failed", result=failure, error=str(exc), token=fence.token
                    ),
                )
        else:
            self._settle(
                fence,
                self.store.finish_operation(op.id, status="completed", result=result, error=None, token=fence.token),
            )
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

    @staticmethod
    def _settle(fence: Fence, applied: bool) -> None:
        if not applied:  # the claim was gone by the time the handler ended: the new owner settles the operation
            log.warning("operation %s: lease lost before it could be settled; left to the worker that holds it",
                        fence.operation_id)  # fmt: skip

    @contextmanager
    def _heartbeat(self, fence: Fence) -> Iterator[None]:
        """Renew the claim's lease every :attr:`WorkerSettings.heartbeat_seconds` while the block runs; a renewal
        that finds the token gone sets ``fence.lost``."""
        done = threading.Event()

        def beat() -> None:
            while not done.wait(self.settings.heartbeat_seconds):
                try:
                    renewed = self.store.renew_lease(
                        fence.operation_id, fence.token, self.settings.lease_seconds, now=self.clock()
                    )
                except Exception:  # a failed renewal is retried at the next beat; the lease has slack for two
                    log.exception("lease renewal of operation %s failed", fence.operation_id)
                    continue
                if not renewed:
                    fence.lost.set()
                    return

        thread = threading.Thread(target=beat, name=f"heartbeat-{fence.operation_id[:8]}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

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
        """Run ``settings.slots`` daemon threads, and ``settings.delivery_slots`` for webhook deliveries, until
        :meth:`stop`."""
        if self._threads:
            return
        self._stop.clear()
        apart = self.settings.delivery_slots > 0
        lanes: list[tuple[int | str, Lane | None]] = [
            (s, "work" if apart else None) for s in range(max(1, self.settings.slots))
        ]
        lanes += [(f"d{s}", "deliveries") for s in range(self.settings.delivery_slots)]
        for slot, lane in lanes or [(0, None)]:
            name = f"{self.worker_id}/{slot}"
            thread = threading.Thread(target=self._loop, args=(slot, lane), name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the slots to finish their current operation and exit."""
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []

    def _loop(self, slot: int | str, lane: Lane | None) -> None:
        while not self._stop.is_set():
            try:
                busy = self.run_once(slot, lane)
            except Exception:
                log.exception("worker loop error")
                busy = False
            if not busy:
                self._wake.wait(self.settings.poll_seconds)
                self._wake.clear()
