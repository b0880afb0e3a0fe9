"""Authorization of every HTTP route for scoped API keys (docs/security.md), as one app-wide dependency.

The API-key middleware (``api/auth.py``) authenticates the caller and leaves a
:class:`~mindbank.domain.access.Principal` in the ASGI scope; without one (no ``MINDBANK_API_KEY``, or the admin key)
every route is open. For a scoped key, :func:`authorize` decides from the route alone:

* a route with ``{bank_id}`` in its path: a bank outside the key's scopes answers 404 (as a missing bank would);
  a write with a read-only key answers 403;
* a route without ``{bank_id}``: only GETs marked :data:`SCOPED` (they filter what they return by the caller, see
  :data:`Caller`) are open to scoped keys; everything else is admin-only (403), so a new route that reaches across
  banks is closed to scoped keys until it says otherwise;
* a route marked :data:`ADMIN_ONLY` (key management) answers 403 to every scoped key.

Reads are GET and HEAD, plus the POSTs marked :data:`READ` (recall, reflect, dry runs, scope previews): a route
declares it with ``openapi_extra=READ``; an unmarked POST, PUT, PATCH or DELETE is a write.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request

from mindbank.domain.access import PRINCIPAL_SCOPE_KEY, Principal
from mindbank.errors import NotFoundError

ACCESS_KEY = "x-mindbank-access"
READ: dict[str, Any] = {ACCESS_KEY: "read"}
"""``openapi_extra`` of a POST that writes nothing (open to read-only keys)."""
SCOPED: dict[str, Any] = {ACCESS_KEY: "scoped"}
"""``openapi_extra`` of a route without ``{bank_id}`` that scoped keys may call (it filters by :data:`Caller`)."""
ADMIN_ONLY: dict[str, Any] = {ACCESS_KEY: "admin"}
"""``openapi_extra`` of a route only the admin key may call."""
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def principal_of(request: Request) -> Principal | None:
    """The authenticated caller (None: unrestricted)."""
    return request.scope.get(PRINCIPAL_SCOPE_KEY)


async def _caller(request: Request) -> Principal | None:
    # a coroutine that awaits nothing: FastAPI runs a plain function dependency on its thread pool, one more
    # hand-off between threads per request
    return principal_of(request)


Caller = Annotated[Principal | None, Depends(_caller)]
"""The caller of a route (None when no key restricts it): routes listing across banks filter with ``covers``."""


def _marker(request: Request) -> str | None:
    route = request.scope.get("route")
    extra = getattr(route, "openapi_extra", None) or {}
    return extra.get(ACCESS_KEY)


async def authorize(request: Request) -> None:
    """App-wide dependency enforcing a scoped key's banks and access (see the module docstring); a coroutine that
    awaits nothing, so FastAPI calls it on the event loop instead of its thread pool. Raises
    :class:`NotFoundError` (404) for a bank outside the scopes, ``HTTPException`` 403 otherwise."""
    principal = principal_of(request)
    if principal is None or principal.admin:
        return
    marker = _marker(request)
    if marker == "admin":
        raise HTTPException(403, "this route needs the admin key (MINDBANK_API_KEY)")
    bank_id = request.path_params.get("bank_id")
    reads = request.method in READ_METHODS or marker == "read"
    if bank_id is None:
        if marker == "scoped" and reads:
            return
        raise HTTPException(403, "a scoped API key can only reach its own banks")
    if not principal.covers(bank_id):
        raise NotFoundError(f"Bank '{bank_id}' not found")
    if not reads and principal.read_only:
        raise HTTPException(403, "this API key is read-only")
