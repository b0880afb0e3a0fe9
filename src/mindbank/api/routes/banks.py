"""Banks: list, create/update, profile and background, delete, config (and its reset), stats and tags."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query
from pydantic import Field

from mindbank.api.access import SCOPED, Caller
from mindbank.api.deps import Bank, deleted_response
from mindbank.api.openapi import errors
from mindbank.api.schemas import BankConfigUpdate, BankRequest, DispositionTraits, RequestBody
from mindbank.domain.fields import Offset, QueryParamText
from mindbank.wire.shapes import bank_list_item, bank_profile, bank_stats_response, tag_page

router = APIRouter(prefix="/v1/default/banks", tags=["banks"])


@router.get("", openapi_extra=SCOPED)
def list_banks(mb: Bank, caller: Caller) -> dict[str, Any]:
    """Every bank with its memory count (with a scoped API key: the banks inside its scopes)."""
    banks = [(b, n) for b, n in mb.list_banks() if caller is None or caller.covers(b.bank_id)]
    return {"banks": [bank_list_item(b, n) for b, n in banks], "total": len(banks), "limit": len(banks), "offset": 0}


def _disposition(body: BankRequest) -> dict[str, int] | None:
    parts = {
        "skepticism": body.disposition_skepticism,
        "literalism": body.disposition_literalism,
        "empathy": body.disposition_empathy,
    }
    nested = {} if body.disposition is None else body.disposition.model_dump()
    if body.disposition is None and all(v is None for v in parts.values()):
        return None
    merged = {"skepticism": 3, "literalism": 3, "empathy": 3, **nested}
    merged.update({k: v for k, v in parts.items() if v is not None})
    return merged


@router.put("/{bank_id}")
def put_bank(bank_id: str, body: BankRequest, mb: Bank) -> dict[str, Any]:
    """Create the bank or update its profile."""
    return bank_profile(
        mb.put_bank(bank_id, name=body.name, mission=body.resolved_mission, disposition=_disposition(body))
    )


@router.patch("/{bank_id}", responses=errors(404))
def patch_bank(bank_id: str, body: BankRequest, mb: Bank) -> dict[str, Any]:
    """Update an existing bank's profile."""
    mb.get_bank(bank_id)
    return bank_profile(
        mb.put_bank(bank_id, name=body.name, mission=body.resolved_mission, disposition=_disposition(body))
    )


@router.get("/{bank_id}/profile")
def get_profile(bank_id: str, mb: Bank) -> dict[str, Any]:
    """``BankProfileResponse`` of an existing bank."""
    return bank_profile(mb.get_bank(bank_id))


class UpdateDispositionRequest(RequestBody):
    """``PUT /profile``."""

    disposition: DispositionTraits


@router.put("/{bank_id}/profile")
def put_profile(bank_id: str, body: UpdateDispositionRequest, mb: Bank) -> dict[str, Any]:
    """Set the bank's disposition traits (bank created if missing)."""
    return bank_profile(mb.put_bank(bank_id, disposition=body.disposition.model_dump()))


class AddBackgroundRequest(RequestBody):
    """``POST /background`` (the reference's deprecated spelling of a mission update)."""

    content: str = Field(min_length=1, max_length=20_000)
    update_disposition: bool = True


@router.post("/{bank_id}/background")
def add_background(bank_id: str, body: AddBackgroundRequest, mb: Bank) -> dict[str, Any]:
    """Append ``content`` to the bank's mission as a new paragraph (``BackgroundResponse``)."""
    current = mb.store.get_bank(bank_id)
    previous = (current.mission or "").strip() if current else ""
    mission = f"{previous}\n\n{body.content.strip()}" if previous else body.content.strip()
    bank = mb.put_bank(bank_id, mission=mission)
    profile = bank_profile(bank)
    return {"mission": profile["mission"], "background": profile["mission"], "disposition": profile["disposition"]}


@router.delete("/{bank_id}", responses=errors(404))
def delete_bank(bank_id: str, mb: Bank) -> dict[str, Any]:
    """Delete the bank and everything in it, atomically."""
    removed = mb.delete_bank(bank_id)
    return deleted_response("Bank", bank_id, removed)


@router.get("/{bank_id}/config", responses=errors(404))
def get_config(bank_id: str, mb: Bank) -> dict[str, Any]:
    """Resolved settings for the bank and its own overrides."""
    config, overrides = mb.bank_config(bank_id)
    return {"bank_id": bank_id, "config": config, "overrides": overrides}


@router.patch("/{bank_id}/config", responses=errors(404))
def patch_config(bank_id: str, body: BankConfigUpdate, mb: Bank) -> dict[str, Any]:
    """Set (or, with null, remove) per-bank overrides."""
    config, overrides = mb.update_bank_config(bank_id, body.updates.model_dump(exclude_unset=True))
    return {"bank_id": bank_id, "config": config, "overrides": overrides}


@router.delete("/{bank_id}/config", responses=errors(404))
def reset_config(bank_id: str, mb: Bank) -> dict[str, Any]:
    """Remove every per-bank override (the bank follows the server's settings again)."""
    config, overrides = mb.reset_bank_config(bank_id)
    return {"bank_id": bank_id, "config": config, "overrides": overrides}


@router.get("/{bank_id}/stats", responses=errors(404))
def stats(bank_id: str, mb: Bank) -> dict[str, Any]:
    """Live statistics; ``last_memory_write_at`` is read from the database on every call."""
    return bank_stats_response(bank_id, mb.bank_stats(bank_id))


@router.get("/{bank_id}/tags")
def list_tags(
    bank_id: str,
    mb: Bank,
    q: QueryParamText | None = None,
    source: Literal["memories", "mental_models"] = "memories",
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[Offset, Query()] = 0,
) -> dict[str, Any]:
    """Tags in use with their counts; ``q`` matches case-insensitively with ``*`` wildcards."""
    items, total = mb.list_tags(bank_id, source=source, pattern=q, limit=limit, offset=offset)
    return tag_page(items, total, limit, offset)


class ConsolidateRequest(RequestBody):
    """``POST /consolidate``."""

    observation_scopes: Literal["combined", "per_tag"] | None = None


@router.post("/{bank_id}/consolidate", responses=errors(404))
def consolidate(bank_id: str, mb: Bank, body: Annotated[ConsolidateRequest | None, Body()] = None) -> dict[str, Any]:
    """Queue a consolidation of the bank's pending facts (one pending per bank: a repeat returns the same one)."""
    mb.get_bank(bank_id)
    operation_id, deduplicated = mb.consolidate(bank_id, observation_scopes=body.observation_scopes if body else None)
    return {"operation_id": operation_id, "deduplicated": deduplicated}


@router.get("/{bank_id}/embedding-model", responses=errors(404))
def embedding_model(bank_id: str, mb: Bank) -> dict[str, Any]:
    """The embedding model the bank's vectors were made with, the server's, and the bank's re-embedding if one is
    queued or running (mindbank's extension)."""
    return mb.get_embedding_model(bank_id)


@router.post("/{bank_id}/reembed", responses=errors(404))
def reembed(bank_id: str, mb: Bank) -> dict[str, Any]:
    """Queue the bank's move to the server's embedding model (mindbank's extension; one active per bank: a repeat
    returns the same operation). Recall keeps using the bank's vectors until the switch commits."""
    return mb.reembed(bank_id)
