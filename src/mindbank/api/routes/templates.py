"""Bank templates: ``GET /export``, ``POST /import`` and ``GET /v1/bank-template-schema`` (see
:mod:`mindbank.service.templates`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from mindbank.api.deps import Bank

router = APIRouter(tags=["bank templates"])


@router.get("/v1/default/banks/{bank_id}/export")
def export_bank_template(bank_id: str, mb: Bank) -> dict[str, Any]:
    """The bank's setup as a template manifest (404 for an unknown bank)."""
    return mb.export_bank_template(bank_id)


@router.post("/v1/default/banks/{bank_id}/import")
def import_bank_template(
    bank_id: str,
    mb: Bank,
    manifest: Annotated[dict[str, Any], Body(description="Bank template manifest")],
    dry_run: Annotated[bool, Query(description="Validate only, do not apply changes")] = False,
) -> dict[str, Any]:
    """Apply a template manifest to the bank (created if missing)."""
    return mb.import_bank_template(bank_id, manifest, dry_run=dry_run)


@router.get("/v1/bank-template-schema")
def bank_template_schema(mb: Bank) -> dict[str, Any]:
    """The JSON Schema of a template manifest."""
    return mb.bank_template_schema()
