"""Operations: the queue of background work, claims with leases, retries, coalescing and administration."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any, Literal, Protocol

from mindbank.domain.records import Operation
from mindbank.domain.timeutil import to_iso

Lane = Literal["work", "deliveries"]
"""Which operations a claim takes: ``deliveries`` webhook deliveries only (their own worker threads, so a slow
receiver never holds a retain or refresh slot), ``work`` every other type."""

CONSOLIDATION_WAIT_SECONDS = 300.0
"""How long a queued refresh of a mental model may wait for its bank's earlier consolidation (seconds, counted from
the moment it was asked for or became due): the bound that keeps a failing or stuck consolidation from holding a
refresh forever (``MINDBANK_WORKER_CONSOLIDATION_WAIT_SECONDS``)."""


def fold_into_pending(pending: Operation, incoming: Operation, *, full: bool) -> Operation:
    """The coalescing rule for a request folding into a still-pending operation of the same kind (spec "Refresh a
    Mental Model", "Rate-limiting automatic refreshes"): ``full`` upgrades it to full mode for that run; a
    non-automatic (manual) request releases a park — no ``next_retry_at``, no ``automatic`` flag — because "refresh
    now" means now. A manual refresh folding in also records when it was asked for (``requested_at``): the refresh
    waits for the consolidations of its bank queued before that moment, like a fresh request would. A consolidation
    doing an earlier operation's work (``queued_at``: when that work was queued — the rest of a long backlog, the
    facts of a queued retain) moves the pending one it folds into back to that moment if it is earlier. Returns the
    pending operation as it should be stored."""
    payload = dict(pending.payload)
    if full:
        payload["mode"] = "full"
    next_retry = pending.next_retry_at
    if not incoming.payload.get("automatic"):
        payload.pop("automatic", None)
        next_retry = None
        if incoming.operation_type == "refresh_mental_model":
            payload["requested_at"] = to_iso(incoming.created_at)
    if incoming.payload.get("queued_at"):
        # fixed-width ISO strings: the smaller is the earlier
        payload["queued_at"] = min(str(payload.get("queued_at") or to_iso(pending.created_at)),
                                   str(incoming.payload["queued_at"]))  # fmt: skip
    return replace(pending, payload=dict(sorted(payload.items())), next_retry_at=next_retry)


class OperationStore(Protocol):
    """Operation rows. A claim takes one due operation of a ``lane`` with a lease; ``token`` (the claim's) fences
    a finish, renewal, deferral or retry against a claim that expired and was taken again."""

    def submit_operation(self, op: Operation, *, ensure_bank: bool = True) -> None: ...
    def submit_operation_once(self, op: Operation) -> tuple[Operation, bool]: ...
    def submit_coalesced(self, op: Operation, *, full: bool = False) -> tuple[Operation, bool]: ...
    def get_operation(self, bank_id: str, operation_id: str) -> Operation | None: ...
    def claim_operation(
        self,
        worker_id: str,
        lease_seconds: float,
        *,
        now: datetime | None = None,
        lane: Lane | None = None,
        consolidation_wait_seconds: float = CONSOLIDATION_WAIT_SECONDS,
    ) -> Operation | None: ...
    def finish_operation(
        self,
        operation_id: str,
        *,
        status: str,
        result: dict[str, Any] | None,
        error: str | None,
        token: str | None = None,
    ) -> bool: ...
    def renew_lease(
        self, operation_id: str, token: str, lease_seconds: float, *, now: datetime | None = None
    ) -> bool: ...
    def defer_operation(self, operation_id: str, *, next_retry_at: datetime, token: str | None = None) -> bool: ...
    def retry_operation(
        self, operation_id: str, *, next_retry_at: datetime, error: str, token: str | None = None
    ) -> bool: ...
    def list_operations(
        self, bank_id: str, *, status: str | None, operation_type: str | None, limit: int, offset: int
    ) -> tuple[list[Operation], int]: ...
    def cancel_operation(self, bank_id: str, operation_id: str) -> Operation | None: ...
    # administration and metrics
    def requeue_operation(self, bank_id: str, operation_id: str) -> bool: ...
    def delete_operation(self, bank_id: str, operation_id: str) -> bool: ...
    def operation_counts(self) -> list[tuple[str, str, int]]: ...
    def oldest_due_pending(self, now: datetime) -> datetime | None: ...
