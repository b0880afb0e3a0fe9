"""Operations: ``GET /operations/{id}``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from mindbank.api.deps import Bank
from mindbank.api.schemas import operation_response

router = APIRouter(prefix="/v1/default/banks/{bank_id}/operations", tags=["operations"])


@router.get("/{operation_id}")
def get_operation(bank_id: str, operation_id: str, mb: Bank) -> dict[str, Any]:
    """Status, result and error of one queued operation."""
    return operation_response(mb.get_operation(bank_id, operation_id))
