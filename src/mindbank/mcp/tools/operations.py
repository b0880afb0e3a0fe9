"""Operation tools: list, read and cancel background operations."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mindbank.mcp.tools.common import BankId, Offset, ToolFamily
from mindbank.wire.shapes import operation_response, operation_summary


class OperationTools(ToolFamily):
    """Operation tools: list, read and cancel background operations."""

    TOOLS = ("list_operations", "get_operation", "cancel_operation")
    READS = frozenset({"list_operations", "get_operation"})

    def list_operations(
        self,
        status: Literal["pending", "processing", "completed", "failed", "cancelled"] | None = None,
        operation_type: Annotated[str | None, Field(description="e.g. refresh_mental_model, batch_retain.")] = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
        offset: Offset = 0,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """List the bank's background operations (refreshes, async retains), newest first.

        Returns {bank_id, total, limit, offset, operations: [{id, operation_type, status, mental_model_id, ...}]}.
        """
        ops, total = self.mb.list_operations(
            bank_id, status=status, operation_type=operation_type, limit=limit, offset=offset
        )
        return {
            "bank_id": bank_id,
            "total": total,
            "limit": limit,
            "offset": offset,
            "operations": [operation_summary(o) for o in ops],
        }

    def get_operation(self, operation_id: str, *, bank_id: BankId) -> dict[str, Any]:
        """Status of one background operation: pending, processing, completed, failed or cancelled.

        Returns {operation_id, status, operation_type, result_metadata, error_message, details, ...}.
        """
        return operation_response(self.mb.get_operation(bank_id, operation_id))

    def cancel_operation(self, operation_id: str, *, bank_id: BankId) -> dict[str, Any]:
        """Cancel a pending operation (running or finished ones cannot be cancelled).

        Returns {success, message, operation_id}.
        """
        self.mb.cancel_operation(bank_id, operation_id)
        return {"success": True, "message": f"Operation '{operation_id}' cancelled", "operation_id": operation_id}
