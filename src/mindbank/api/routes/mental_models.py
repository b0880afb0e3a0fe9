"""Mental models: create, list, get, refresh, history."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query

from mindbank.api.deps import Bank
from mindbank.api.schemas import CreateMentalModelRequest, Detail, RefreshRequest, mental_model_response

router = APIRouter(prefix="/v1/default/banks/{bank_id}/mental-models", tags=["mental-models"])


@router.post("")
def create_mental_model(bank_id: str, body: CreateMentalModelRequest, mb: Bank) -> dict[str, str]:
    """Create a model (bank auto-created); its first refresh runs in the background."""
    model_id, operation_id = mb.create_mental_model(
        bank_id,
        name=body.name,
        source_query=body.source_query,
        id=body.id,
        tags=body.tags,
        max_tokens=body.max_tokens,
        trigger=body.trigger,
    )
    return {"mental_model_id": model_id, "operation_id": operation_id}


@router.get("")
def list_mental_models(
    bank_id: str,
    mb: Bank,
    tags: Annotated[list[str] | None, Query()] = None,
    tags_match: Literal["any", "all", "exact"] = "any",
    detail: Detail = "metadata",
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> dict[str, Any]:
    """A page of models ordered ``last_refreshed_at DESC, id DESC``; every item carries ``is_stale``."""
    models, total = mb.list_mental_models(bank_id, tags=tags or (), tags_match=tags_match, limit=limit, offset=offset)
    return {
        "items": [mental_model_response(m, detail) for m in models],
        "total": total,
        "limit": limit,
        "offset": offset,
    }


@router.get("/{mental_model_id}")
def get_mental_model(bank_id: str, mental_model_id: str, mb: Bank, detail: Detail = "full") -> dict[str, Any]:
    """One model at the requested detail level (default full)."""
    model = mb.get_mental_model(bank_id, mental_model_id)
    return mental_model_response(model, detail)


@router.post("/{mental_model_id}/refresh")
def refresh_mental_model(
    bank_id: str, mental_model_id: str, mb: Bank, body: Annotated[RefreshRequest | None, Body()] = None
) -> dict[str, str]:
    """Queue a refresh (or return the one already queued)."""
    operation_id = mb.refresh_mental_model(bank_id, mental_model_id)
    return {"operation_id": operation_id, "status": "queued"}


@router.get("/{mental_model_id}/history")
def mental_model_history(bank_id: str, mental_model_id: str, mb: Bank) -> list[dict[str, Any]]:
    """Previous versions and failure records, most recent first."""
    return mb.mental_model_history(bank_id, mental_model_id)
