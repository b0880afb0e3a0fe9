"""FastAPI dependencies, and the small request and response helpers, shared by the routers."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from pydantic import BaseModel

from mindbank.service.facade import MindBank


async def _mindbank(request: Request) -> MindBank:
    """The app's service (a coroutine: FastAPI would run a plain function on its thread pool, one more hand-off)."""
    mindbank: MindBank = request.app.state.mindbank  # set once by create_api; Starlette's state is untyped
    return mindbank


Bank = Annotated[MindBank, Depends(_mindbank)]


def same_named(source: object, *names: str) -> dict[str, Any]:
    """``{name: source.name}`` for each of ``names``: the request-body fields a route hands unchanged to the facade
    parameter of the same name (pass it as ``**same_named(body, ...)``)."""
    return {name: getattr(source, name) for name in names}


def trigger_patch(trigger: BaseModel | None) -> dict[str, Any] | None:
    """The trigger fields a request set (``None`` when it sent no trigger): a patch merged over the stored trigger."""
    return None if trigger is None else trigger.model_dump(exclude_unset=True)


def deleted_response(kind: str, item_id: str, count: int = 1) -> dict[str, Any]:
    """The reference's ``DeleteResponse`` for a deleted ``kind`` (``"Bank"``, ``"Memory"``, ...) named ``item_id``."""
    return {"success": True, "message": f"{kind} '{item_id}' deleted", "deleted_count": count}
