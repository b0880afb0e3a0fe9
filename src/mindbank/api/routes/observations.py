"""Observations and bulk memory deletes, as the reference serves them: ``GET /memories/{id}/history`` (an
observation's history), ``DELETE /memories/{id}/observations``, ``DELETE /memories`` (optionally by ``type``),
``DELETE /observations`` and ``GET /observations/scopes``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from mindbank.api.deps import Bank
from mindbank.api.openapi import errors
from mindbank.domain.fields import Offset
from mindbank.domain.records import FactType
from mindbank.wire.shapes import memory_item

router = APIRouter(prefix="/v1/default/banks/{bank_id}", tags=["memories"])


@router.get("/memories/{memory_id}/history", responses=errors(404))
def observation_history(bank_id: str, memory_id: str, mb: Bank) -> list[dict[str, Any]]:
    """The reference's ``get_observation_history``: the changes consolidation made to an observation, newest first,
    each with the text and source facts before and after (the facts it added or dropped resolved to their text);
    ``[]`` for a fact or an observation never changed."""
    return mb.get_observation_history(bank_id, memory_id)


@router.get("/memories/{memory_id}/observations", responses=errors(404))
def derived_observations(bank_id: str, memory_id: str, mb: Bank) -> dict[str, Any]:
    """Beyond the reference: the observations built from this memory (those listing it among their sources),
    oldest first, as ``{memory_id, items: [memory], total}`` — what ``DELETE`` on this path would delete."""
    items = [memory_item(m) for m in mb.list_memory_observations(bank_id, memory_id)]
    return {"memory_id": memory_id, "items": items, "total": len(items)}


@router.delete("/memories/{memory_id}/observations", responses=errors(404))
def clear_memory_observations(bank_id: str, memory_id: str, mb: Bank) -> dict[str, int]:
    """The reference's ``clear_memory_observations``: delete the observations built from this memory and send it
    back to consolidation (queued with auto-consolidation); the memory stays. ``{deleted_count}``."""
    return {"deleted_count": mb.clear_memory_observations(bank_id, memory_id)}


@router.delete("/memories", responses=errors(404))
def clear_bank_memories(bank_id: str, mb: Bank, type: FactType | None = None) -> dict[str, Any]:
    """The reference's ``clear_bank_memories``: delete the bank's memories of ``type`` (world, experience,
    observation), or all of them with their documents; the bank, its profile and its mental models stay (models
    citing what went turn stale)."""
    count = mb.clear_bank_memories(bank_id, type)
    kind = ("memory" if count == 1 else "memories") if type is None else f"{type} memor{'y' if count == 1 else 'ies'}"
    return {"success": True, "message": f"Deleted {count} {kind} from bank '{bank_id}'", "deleted_count": count}


@router.delete("/observations", responses=errors(404))
def clear_observations(bank_id: str, mb: Bank) -> dict[str, Any]:
    """The reference's ``clear_observations``: delete every observation of the bank; its facts go back to
    consolidation (queued with auto-consolidation), which rebuilds them."""
    count = mb.clear_observations(bank_id)
    kind = "observation" if count == 1 else "observations"
    return {"success": True, "message": f"Deleted {count} {kind} from bank '{bank_id}'", "deleted_count": count}


@router.get("/observations/scopes", responses=errors(404))
def list_observation_scopes(
    bank_id: str,
    mb: Bank,
    limit: Annotated[int, Query(ge=0, le=1000)] = 100,
    offset: Annotated[Offset, Query()] = 0,
) -> dict[str, Any]:
    """The reference's ``list_observation_scopes``: the distinct tag sets the bank's observations live under, with
    their counts, most populous first (``[]`` is the untagged scope); ``total`` counts every distinct scope."""
    return mb.list_observation_scopes(bank_id, limit=limit, offset=offset)
