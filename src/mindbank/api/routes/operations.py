"""Operations: ``GET /operations/{id}``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import Field

from mindbank.api.deps import Bank
from mindbank.api.openapi import errors
from mindbank.domain.fields import Offset
from mindbank.domain.limits import NO_CONTROL_PATTERN
from mindbank.wire.shapes import operation_response, operation_summary

router = APIRouter(prefix="/v1/default/banks/{bank_id}/operations", tags=["operations"])


@router.get("/{operation_id}", responses=errors(404))
def get_operation(bank_id: str, operation_id: str, mb: Bank) -> dict[str, Any]:
    """Status, result and error of one queued operation."""
    return operation_response(mb.get_operation(bank_id, operation_id))


@router.get("")
def list_operations(
    bank_id: str,
    mb: Bank,
    status: Literal["pending", "processing", "completed", "failed", "cancelled"] | None = None,
    type: Annotated[str, Field(max_length=100, pattern=NO_CONTROL_PATTERN)] | None = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    offset: Annotated[Offset, Query()] = 0,
) -> dict[str, Any]:
    """A page of operations, newest first, filtered by status and type."""
    ops, total = mb.list_operations(bank_id, status=status, operation_type=type, limit=limit, offset=offset)
    return {
        "bank_id": bank_id,
        "total": total,
        "limit": limit,
        "offset": offset,
        "operations": [operation_summary(o) for o in ops],
    }


@router.delete("/{operation_id}", responses=errors(404, 409))
def cancel_operation(bank_id: str, operation_id: str, mb: Bank) -> dict[str, Any]:
    """Cancel a pending operation (409 when it is already running or finished)."""
    mb.cancel_operation(bank_id, operation_id)
    return {"success": True, "message": f"Operation '{operation_id}' cancelled", "operation_id": operation_id}
