"""The bank's LLM request log at the reference's paths: ``GET /llm-requests`` (a page of traced calls, filtered)
and ``GET /llm-requests/stats`` (calls by status and token sums per hour or day). Empty unless
``MINDBANK_LLM_TRACE_ENABLED``; the per-operation view is ``GET /operations/{id}/llm-requests``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from mindbank.api.deps import Bank
from mindbank.domain.fields import Offset, QueryTime
from mindbank.errors import InvalidInputError
from mindbank.wire.resources import llm_request_entry

router = APIRouter(prefix="/v1/default/banks/{bank_id}/llm-requests", tags=["llm-traces"])
CallType = Literal["llm", "embedding", "rerank", "decision"]


@router.get("")
def list_llm_requests(
    bank_id: str,
    mb: Bank,
    status: str | None = None,
    operation: str | None = None,
    scope: str | None = None,
    call_type: CallType | None = None,
    provider: str | None = None,
    trace_id: str | None = None,
    document_id: str | None = None,
    memory_id: str | None = None,
    group: bool = False,
    start_date: QueryTime | None = None,
    end_date: QueryTime | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[Offset, Query()] = 0,
) -> dict[str, Any]:
    """``LLMRequestListResponse``, newest first. ``group`` is accepted and pages by call (mindbank records no
    spans); ``document_id`` / ``memory_id`` answer 422: mindbank does not link calls to documents or memories."""
    for name, value in (("document_id", document_id), ("memory_id", memory_id)):
        if value:
            raise InvalidInputError(name, "not supported: mindbank does not link LLM calls to documents or memories")
    items, total = mb.list_llm_requests(
        bank_id, status=status, operation=operation, scope=scope, call_type=call_type, provider=provider,
        trace_id=trace_id, start=start_date, end=end_date, limit=limit, offset=offset,
    )  # fmt: skip
    return {
        "bank_id": bank_id,
        "total": total,
        "limit": limit,
        "offset": offset,
        "items": [llm_request_entry(r) for r in items],
    }


@router.get("/stats")
def llm_request_stats(
    bank_id: str, mb: Bank, operation: str | None = None, call_type: CallType | None = None, period: str = "7d"
) -> dict[str, Any]:
    """``LLMRequestStatsResponse``: per hour (``period=1d``) or day (``7d``, ``30d``)."""
    return mb.llm_request_stats(bank_id, period=period, operation=operation, call_type=call_type)
