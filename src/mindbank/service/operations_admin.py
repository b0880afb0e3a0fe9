"""Operation administration and the bank's LLM request log, at the reference's paths: retry a failed operation,
delete an operation record, page and summarise the traced LLM calls of a bank (``/llm-requests``,
``/llm-requests/stats``; the per-operation view stays in :mod:`mindbank.service.operations`)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from mindbank.domain.records import LLMRequestRecord
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.errors import ConflictError, InvalidInputError
from mindbank.service.core import ServiceCore, ServiceState
from mindbank.service.operations import OperationsService

PERIODS: dict[str, tuple[timedelta, str]] = {
    "1d": (timedelta(days=1), "hour"),
    "7d": (timedelta(days=7), "day"),
    "30d": (timedelta(days=30), "day"),
}
OPERATIONS = ("reflect", "retain", "consolidation", "refresh")


class OperationsAdminService(ServiceCore):
    """Retry, delete (over the reads of ``operations``) and the bank's LLM request log."""

    def __init__(self, state: ServiceState, *, operations: OperationsService) -> None:
        super().__init__(state)
        self.operations = operations

    def retry_operation(self, bank_id: str, operation_id: str) -> None:
        """Queue a failed operation again, as new (retries and error cleared). Raises :class:`NotFoundError`, and
        :class:`ConflictError` unless it failed."""
        current = self.operations.get_operation(bank_id, operation_id)
        if current.status != "failed" or not self.store.requeue_operation(bank_id, operation_id):
            raise ConflictError(f"Operation '{operation_id}' is {current.status}; only a failed one can be retried")
        self.wake()

    def delete_operation(self, bank_id: str, operation_id: str) -> None:
        """Delete an operation record (a pending one is thereby dropped). Raises :class:`NotFoundError`, and
        :class:`ConflictError` while a worker runs it."""
        self.operations.get_operation(bank_id, operation_id)
        if not self.store.delete_operation(bank_id, operation_id):  # a worker claimed it (the statement's guard)
            raise ConflictError(f"Operation '{operation_id}' is processing; a running operation cannot be deleted")

    def list_llm_requests(
        self, bank_id: str, *, status: str | None = None, operation: str | None = None, scope: str | None = None,
        call_type: str | None = None, provider: str | None = None, trace_id: str | None = None,
        start: datetime | None = None, end: datetime | None = None, limit: int = 50, offset: int = 0,
    ) -> tuple[list[LLMRequestRecord], int]:  # fmt: skip
        """A page of the bank's traced LLM calls, newest first, and the total (empty unless
        ``MINDBANK_LLM_TRACE_ENABLED``). ``trace_id`` is an operation id (or a reflect's ``request_id``); every call
        mindbank traces is an ``llm`` call, so another ``call_type`` matches none. Raises :class:`NotFoundError` for
        the bank, :class:`InvalidInputError` for a status or operation it does not know."""
        self._require_bank(bank_id)
        if status not in (None, "success", "error"):
            raise InvalidInputError("status", "must be success or error")
        if operation not in (None, *OPERATIONS):
            raise InvalidInputError("operation", f"must be one of {', '.join(OPERATIONS)}")
        if call_type not in (None, "llm"):
            return [], 0
        return self.store.page_llm_requests(
            bank_id, status=status, scope=scope, provider=provider, operation_id=trace_id, start=start, end=end,
            limit=limit, offset=offset, operation=operation,
        )  # fmt: skip

    def llm_request_stats(
        self, bank_id: str, *, period: str = "7d", operation: str | None = None, call_type: str | None = None
    ) -> dict[str, Any]:
        """``LLMRequestStatsResponse``: calls by status and token sums per hour (``1d``) or day (``7d``, ``30d``),
        of one ``operation`` when given. Raises :class:`NotFoundError` for the bank, :class:`InvalidInputError`
        for the period or operation."""
        self._require_bank(bank_id)
        if period not in PERIODS:
            raise InvalidInputError("period", f"must be one of {', '.join(PERIODS)}")
        if operation not in (None, *OPERATIONS):
            raise InvalidInputError("operation", f"must be one of {', '.join(OPERATIONS)}")
        span, unit = PERIODS[period]
        start = utcnow() - span
        rows = (
            []
            if call_type not in (None, "llm")
            else self.store.llm_request_buckets(bank_id, since=start, unit=unit, operation=operation)
        )
        buckets: dict[datetime, dict[str, Any]] = {}
        for at, failed, count, tokens_in, tokens_out in rows:
            b = buckets.setdefault(
                at, {"time": to_iso(at), "statuses": {}, "total": 0,
                     "tokens": {"input": 0, "output": 0, "cached": 0, "thoughts": None, "total": 0}},
            )  # fmt: skip
            key = "error" if failed else "success"
            b["statuses"][key] = b["statuses"].get(key, 0) + count
            b["total"] += count
            b["tokens"]["input"] += tokens_in
            b["tokens"]["output"] += tokens_out
            b["tokens"]["total"] += tokens_in + tokens_out
        return {"bank_id": bank_id, "period": period, "trunc": unit, "start": to_iso(start),
                "buckets": [buckets[k] for k in sorted(buckets)]}  # fmt: skip
