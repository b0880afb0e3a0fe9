"""Client methods over background operations: ``list_operations``, ``get_operation``, ``cancel_operation``,
``retry_operation``, ``delete_operation``.

``wait`` (polling ``get_operation``) sleeps differently in each client, so ``Client`` and ``AsyncClient`` define it.
"""

from __future__ import annotations

from mindbank.client._wire import Request, bank_path, child_path, clean, endpoint
from mindbank.client.models import CancelResponse, Operation, OperationList


class OperationMethods:
    """``list_operations``, ``get_operation``, ``cancel_operation``, ``retry_operation``, ``delete_operation``."""

    @endpoint
    def list_operations(
        self,
        bank_id: str,
        *,
        status: str | None = None,
        operation_type: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> Request[OperationList]:
        """A page of background operations, newest first."""
        params = clean({"status": status, "type": operation_type, "limit": limit, "offset": offset})
        return Request("GET", f"{bank_path(bank_id)}/operations", OperationList.model_validate, params=params)

    @endpoint
    def get_operation(self, bank_id: str, operation_id: str) -> Request[Operation]:
        """One operation's status and result."""
        return Request("GET", child_path(bank_id, "operations", operation_id), Operation.model_validate)

    @endpoint
    def cancel_operation(self, bank_id: str, operation_id: str) -> Request[CancelResponse]:
        """Cancel a pending operation (409 once it runs or has finished)."""
        return Request("DELETE", child_path(bank_id, "operations", operation_id), CancelResponse.model_validate)

    @endpoint
    def retry_operation(self, bank_id: str, operation_id: str) -> Request[CancelResponse]:
        """Queue a failed operation again (409 unless it failed)."""
        path = child_path(bank_id, "operations", operation_id) + "/retry"
        return Request("POST", path, CancelResponse.model_validate)

    @endpoint
    def delete_operation(self, bank_id: str, operation_id: str) -> Request[CancelResponse]:
        """Delete an operation record (409 while a worker runs it)."""
        path = child_path(bank_id, "operations", operation_id) + "/delete"
        return Request("DELETE", path, CancelResponse.model_validate)
