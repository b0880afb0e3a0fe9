"""Operation administration at the reference's paths: ``POST /operations/{id}/retry`` (failed ones; 409 otherwise)
and ``DELETE /operations/{id}/delete`` (409 while a worker runs it)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from mindbank.api.deps import Bank
from mindbank.api.openapi import errors

router = APIRouter(prefix="/v1/default/banks/{bank_id}/operations", tags=["operations"])


@router.post("/{operation_id}/retry", responses=errors(404, 409))
def retry_operation(bank_id: str, operation_id: str, mb: Bank) -> dict[str, Any]:
    """Queue a failed operation again (``RetryOperationResponse``)."""
    mb.retry_operation(bank_id, operation_id)
    return {"success": True, "message": f"Operation {operation_id} queued for retry", "operation_id": operation_id}


@router.delete("/{operation_id}/delete", responses=errors(404, 409))
def delete_operation(bank_id: str, operation_id: str, mb: Bank) -> dict[str, Any]:
    """Delete an operation record (``DeleteOperationResponse``)."""
    mb.delete_operation(bank_id, operation_id)
    return {"success": True, "message": f"Operation {operation_id} deleted", "operation_id": operation_id}
