"""``GET /operations/{operation_id}/llm-requests``: the traced LLM requests of one operation.

Tracing is off by default (``MINDBANK_LLM_TRACE_ENABLED``); rows are kept ``MINDBANK_LLM_TRACE_RETENTION_HOURS``.
Reflect requests are not queued operations: their traces are filed under ``reflect-<uuid>`` ids. 404 when neither
an operation nor any trace has the id.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from mindbank.api.deps import Bank
from mindbank.api.openapi import errors
from mindbank.domain.records import LLMRequestRecord
from mindbank.domain.timeutil import to_iso
from mindbank.errors import NotFoundError

router = APIRouter(prefix="/v1/default/banks/{bank_id}/operations", tags=["operations"])


def llm_request_item(record: LLMRequestRecord) -> dict[str, Any]:
    """One traced attempt: request (messages, tool names, schema), response or error, tokens, timing."""
    return {
        "id": record.id,
        "operation_id": record.operation_id,
        "scope": record.scope,
        "provider": record.provider,
        "model": record.model,
        "attempt": record.attempt,
        "request": record.request,
        "response": record.response,
        "error": record.error,
        "usage": {
            "input_tokens": record.input_tokens,
            "output_tokens": record.output_tokens,
            "total_tokens": record.input_tokens + record.output_tokens,
        },
        "duration_ms": record.duration_ms,
        "created_at": to_iso(record.created_at),
    }


@router.get("/{operation_id}/llm-requests", responses=errors(404))
def list_llm_requests(
    bank_id: str, operation_id: str, mb: Bank, limit: Annotated[int, Query(ge=1, le=1000)] = 500
) -> dict[str, Any]:
    """``{operation_id, tracing_enabled, items}``, oldest attempt first."""
    items = mb.llm_requests(bank_id, operation_id, limit=limit)
    if not items and mb.store.get_operation(bank_id, operation_id) is None:
        raise NotFoundError(f"Operation '{operation_id}' not found in bank '{bank_id}'")
    return {
        "operation_id": operation_id,
        "tracing_enabled": mb.settings.llm_trace_enabled,
        "items": [llm_request_item(r) for r in items],
    }
