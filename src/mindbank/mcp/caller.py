"""Who calls an MCP tool: the scoped API key of the HTTP request (set by ``mcp/http.py`` from the ASGI scope), or
None (no key configured, the admin key, or stdio: unrestricted). The tool layer (``mcp/wrap.py``) enforces it."""

from __future__ import annotations

from contextvars import ContextVar

from mindbank.domain.access import Principal

REQUEST_PRINCIPAL: ContextVar[Principal | None] = ContextVar("mindbank_mcp_principal", default=None)


def current_principal() -> Principal | None:
    """The caller of the tool being run (None: unrestricted)."""
    return REQUEST_PRINCIPAL.get()
