"""Mental models: create, list, get, refresh, history."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query

from mindbank.api.access import READ
from mindbank.api.deps import Bank, same_named, trigger_patch
from mindbank.api.openapi import errors
from mindbank.api.schemas import (
    CreateMentalModelRequest,
    RefreshRequest,
    RevertRequest,
    ScopePreviewRequest,
    UpdateMentalModelRequest,
)
from mindbank.domain.fields import FilterTag, Offset
from mindbank.wire.shapes import Detail, mental_model_response

router = APIRouter(prefix="/v1/default/banks/{bank_id}/mental-models", tags=["mental-models"])


@router.post("", responses=errors(409))
def create_mental_model(bank_id: str, body: CreateMentalModelRequest, mb: Bank) -> dict[str, Any]:
    """Create a model (bank auto-created); its first refresh runs in the background. ``warnings`` says when the
    scope matches no memories."""
    model_id, operation_id = mb.create_mental_model(
        bank_id, **same_named(body, "name", "source_query", "id", "tags", "max_tokens", "trigger")
    )
    warnings = mb.scope_warnings(mb.get_mental_model(bank_id, model_id, with_staleness=False))
    return {"mental_model_id": model_id, "operation_id": operation_id, "warnings": warnings}


@router.post("/scope-preview", openapi_extra=READ)
def scope_preview(bank_id: str, body: ScopePreviewRequest, mb: Bank) -> dict[str, Any]:
    """How many memories the model's resolved scope matches now, by fact type, and the resolved tags_match."""
    return mb.scope_preview(bank_id, tags=body.tags, trigger=body.trigger)


@router.get("")
def list_mental_models(
    bank_id: str,
    mb: Bank,
    tags: Annotated[list[FilterTag] | None, Query(max_length=10)] = None,
    tags_match: Literal["any", "all", "exact"] = "any",
    detail: Detail = "metadata",
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[Offset, Query()] = 0,
    exclude_knowledge_pages: bool = False,
) -> dict[str, Any]:
    """A page of models ordered ``last_refreshed_at DESC, id DESC``; every item carries ``is_stale``.
    ``exclude_knowledge_pages`` lists standalone models only."""
    models, total = mb.list_mental_models(
        bank_id,
        tags=tags or (),
        tags_match=tags_match,
        limit=limit,
        offset=offset,
        detail=detail,
        exclude_knowledge_pages=exclude_knowledge_pages,
    )
    return {
        "items": [mental_model_response(m, detail) for m in models],
        "total": total,
        "limit": limit,
        "offset": offset,
    }


@router.get("/{mental_model_id}", responses=errors(404))
def get_mental_model(bank_id: str, mental_model_id: str, mb: Bank, detail: Detail = "full") -> dict[str, Any]:
    """One model at the requested detail level (default full)."""
    model = mb.get_mental_model(bank_id, mental_model_id)
    return mental_model_response(model, detail)


@router.patch("/{mental_model_id}", responses=errors(404))
def update_mental_model(bank_id: str, mental_model_id: str, body: UpdateMentalModelRequest, mb: Bank) -> dict[str, Any]:
    """Change name, source_query, max_tokens, tags; merge trigger fields. Queues no refresh."""
    model = mb.update_mental_model(
        bank_id,
        mental_model_id,
        trigger=trigger_patch(body.trigger),
        **same_named(body, "name", "source_query", "max_tokens", "tags"),
    )
    return {**mental_model_response(model, "full"), "warnings": mb.scope_warnings(model)}


@router.delete("/{mental_model_id}", responses=errors(404))
def delete_mental_model(bank_id: str, mental_model_id: str, mb: Bank) -> dict[str, str]:
    """Delete a model and its history."""
    mb.delete_mental_model(bank_id, mental_model_id)
    return {"status": "deleted"}


@router.post("/{mental_model_id}/clear", responses=errors(404))
def clear_mental_model(bank_id: str, mental_model_id: str, mb: Bank) -> dict[str, Any]:
    """Synchronously empty the content (kept in history); the next refresh rebuilds it in full."""
    return mental_model_response(mb.clear_mental_model(bank_id, mental_model_id), "full")


@router.post("/{mental_model_id}/revert", responses=errors(404))
def revert_mental_model(bank_id: str, mental_model_id: str, body: RevertRequest, mb: Bank) -> dict[str, Any]:
    """Restore a history version's content and structure (the revert is itself recorded in history)."""
    return mental_model_response(mb.revert_mental_model(bank_id, mental_model_id, body.history_id), "full")


@router.post("/{mental_model_id}/dry-run-refresh", openapi_extra=READ, responses=errors(404, 500, 502, 503))
def dry_run_refresh(bank_id: str, mental_model_id: str, mb: Bank) -> dict[str, Any]:
    """Run the real refresh pipeline and report what it would do; writes nothing. Takes no parameters (an empty
    body or ``{}`` is accepted and ignored), so it always predicts the next real refresh."""
    return mb.dry_run_refresh(bank_id, mental_model_id)


@router.post("/{mental_model_id}/refresh", responses=errors(404))
def refresh_mental_model(
    bank_id: str, mental_model_id: str, mb: Bank, body: Annotated[RefreshRequest | None, Body()] = None
) -> dict[str, str]:
    """Queue a refresh (or return the one already queued); ``{"mode": "full"}`` forces full mode for that run."""
    operation_id = mb.refresh_mental_model(bank_id, mental_model_id, mode=body.mode if body else None)
    return {"operation_id": operation_id, "status": "queued"}


@router.get("/{mental_model_id}/history", responses=errors(404))
def mental_model_history(bank_id: str, mental_model_id: str, mb: Bank) -> list[dict[str, Any]]:
    """Previous versions and failure records, most recent first."""
    return mb.mental_model_history(bank_id, mental_model_id)
