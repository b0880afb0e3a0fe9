"""The claim fence: a worker's writes commit only while it still holds the operation it runs (exactly once).

Every claim stamps the operation row with a fresh ``claim_token``. While a handler runs, the worker makes the
operation's :class:`Fence` current (:func:`fenced`, a context variable of the handler's thread); every write
transaction the store runs on that thread then ends, in the same transaction and just before it commits, with a
statement that matches the row only if it is still ``processing`` under that token (``fence_operation``). A worker
whose lease expired and whose operation another worker reclaimed (new token) gets :class:`LeaseLost` and its
transaction rolls back: two workers never both commit the effect of one operation.

The fence also carries a checkpoint: :meth:`Fence.stage` hands the next fenced transaction a ``progress`` value to
store on the operation row in that transaction, so a resumed operation continues exactly where its last committed
work ended (a large retain's sub-batches use it).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from mindbank.store.base import StoreError


class LeaseLost(StoreError):
    """The operation is no longer held under this worker's claim token (its lease expired and another worker took
    it, or it was finished elsewhere): nothing of the transaction that found out was committed."""


@dataclass(eq=False)
class Fence:
    """One claim of one operation: the row's id and the token the claim set.

    ``lost`` is set by the worker's heartbeat when renewing the lease finds the token gone, so long work can stop
    early (the next fenced write would fail anyway).
    """

    operation_id: str
    token: str
    lost: threading.Event = field(default_factory=threading.Event)
    _staged: dict[str, Any] | None = None

    def stage(self, progress: dict[str, Any]) -> None:
        """Store ``progress`` on the operation row in the next fenced write transaction of this thread."""
        self._staged = progress

    def take_staged(self) -> dict[str, Any] | None:
        """The staged progress, cleared (the store calls this inside the transaction that writes it)."""
        staged, self._staged = self._staged, None
        return staged

    def check(self) -> None:
        """Raise :class:`LeaseLost` if the heartbeat found the claim gone."""
        if self.lost.is_set():
            raise LeaseLost(f"operation {self.operation_id}: lease lost")


_CURRENT: ContextVar[Fence | None] = ContextVar("mindbank_fence", default=None)


@contextmanager
def fenced(fence: Fence) -> Iterator[Fence]:
    """Make ``fence`` current for the block: every store write transaction in it is fenced by the claim."""
    reset = _CURRENT.set(fence)
    try:
        yield fence
    finally:
        _CURRENT.reset(reset)


def current_fence() -> Fence | None:
    """The fence of the operation this thread is running, or None (API requests, sync retains, tests)."""
    return _CURRENT.get()
