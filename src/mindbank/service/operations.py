"""Operations: read, list, cancel, wait; the traced LLM requests of one operation."""

from __future__ import annotations

import time

from mindbank.domain.limits import check_offset
from mindbank.domain.records import LLMRequestRecord, Operation
from mindbank.errors import ConflictError, NotFoundError
from mindbank.service.core import ServiceCore, found_in_bank


class OperationsService(ServiceCore):
    """Operation methods of the service."""

    def get_operation(self, bank_id: str, operation_id: str) -> Operation:
        """One operation. Raises :class:`NotFoundError`."""
        return found_in_bank(self.store.get_operation(bank_id, operation_id), "Operation", operation_id, bank_id)

    def list_operations(
        self, bank_id: str, *, status: str | None = None, operation_type: str | None = None, limit: int = 20,
        offset: int = 0,
    ) -> tuple[list[Operation], int]:  # fmt: skip
        """A page of the bank's operations, newest first, and the total. Raises :class:`InvalidInputError` for an
        offset past ``max_offset``."""
        self._check_bank_id(bank_id)
        check_offset(offset, limits=self.limits)
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
        deadline = time.monotonic() + timeout
        while True:
            op = self.get_operation(bank_id, operation_id)
            if op.status in ("completed", "failed", "cancelled"):
                return op
            if time.monotonic() > deadline:
                raise TimeoutError(f"operation {operation_id} still {op.status} after {timeout} s")
            time.sleep(0.05)

    def wait(self, bank_id: str, operation_id: str, *, timeout: float = 120.0) -> Operation:
        """Alias of :meth:`wait_for` (the client's name): block until the operation is terminal."""
        return self.wait_for(bank_id, operation_id, timeout=timeout)

    def llm_requests(self, bank_id: str, operation_id: str, *, limit: int = 500) -> list[LLMRequestRecord]:
        """The traced LLM attempts of one operation, oldest first (empty unless ``MINDBANK_LLM_TRACE_ENABLED``)."""
        return self.store.list_llm_requests(bank_id, operation_id, limit=limit)
