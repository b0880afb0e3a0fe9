"""FastAPI dependencies shared by the routers."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from mindbank.service.facade import MindBank


def _mindbank(request: Request) -> MindBank:
    return request.app.state.mindbank  # type: ignore[no-any-return]


Bank = Annotated[MindBank, Depends(_mindbank)]
