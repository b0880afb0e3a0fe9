"""MCP over streamable HTTP inside the FastAPI app: ``/mcp`` (multi-bank) and ``/mcp/{bank_id}`` (single bank), each
also with a trailing slash (the reference's URLs end in ``/``), answered directly rather than redirected.

Stateless mode with JSON responses: every POST is self-contained, so any number of ``mindbank serve`` processes
behind a load balancer can answer any request (no session affinity), matching the stateless API design. One
MCPServer serves each flavour; the single-bank one learns its bank from the URL through a context variable that the
endpoint sets for the request (the SDK runs the tool in a task and thread that inherit it); the caller (a scoped API
key, docs/security.md) travels the same way, for the tool layer to enforce. The URL's bank follows the one rule for
every path naming a bank (``domain.access.check_new_bank``): an invalid id is a 422 naming it, a bank outside a
scoped key's scopes a 404, before the SDK sees the request. Host and Origin checks (DNS rebinding)
are the app's, for every route (``api/origin.py``), so the SDK's own are off.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from contextlib import AsyncExitStack, asynccontextmanager
from contextvars import ContextVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from mindbank.domain.access import PRINCIPAL_SCOPE_KEY, check_new_bank
from mindbank.errors import InvalidInputError, NotFoundError
from mindbank.mcp.caller import REQUEST_PRINCIPAL
from mindbank.mcp.server import build_server
from mindbank.service.facade import MindBank

_REQUEST_BANK: ContextVar[str | None] = ContextVar("mindbank_mcp_bank", default=None)


def _bank_from_url() -> str:
    bank = _REQUEST_BANK.get()
    if not bank:  # only reachable if a single-bank tool ran outside a /mcp/{bank_id} request
        raise ToolError("no bank in the MCP URL; use /mcp/{bank_id}")
    return bank


class McpHttp:
    """The two MCP endpoints of one app. :meth:`run` must wrap the app's lifetime (it owns the SDK's session
    managers, which cannot be restarted, so each run builds fresh ones); :meth:`routes` are added to the app once."""

    def __init__(self, mb: MindBank, *, enabled_tools: Collection[str] | None = None) -> None:
        self.multi: MCPServer = build_server(mb, enabled_tools=enabled_tools)
        self.single: MCPServer = build_server(mb, bank=_bank_from_url, enabled_tools=enabled_tools)
        self._managers: dict[str, StreamableHTTPSessionManager] = {}

    def routes(self) -> list[BaseRoute]:
        """Starlette routes for ``/mcp`` and ``/mcp/{bank_id}``, with and without a trailing slash (every method:
        POST, GET, DELETE)."""
        multi, single = _Endpoint(self, "multi"), _Endpoint(self, "single")
        return [
            Route("/mcp", multi),
            Route("/mcp/", multi),
            Route("/mcp/{bank_id}", single),
            Route("/mcp/{bank_id}/", single),
        ]

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Start both session managers for the app's lifetime."""
        async with AsyncExitStack() as stack:
            for key, server in (("multi", self.multi), ("single", self.single)):
                server.streamable_http_app(
                    stateless_http=True,
                    json_response=True,
                    transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
                )
                manager = server.session_manager
                await stack.enter_async_context(manager.run())
                self._managers[key] = manager
            try:
                yield
            finally:
                self._managers.clear()

    def manager(self, key: str) -> StreamableHTTPSessionManager | None:
        """The running session manager of ``multi`` or ``single`` (None outside :meth:`run`)."""
        return self._managers.get(key)


class _Endpoint:
    """ASGI endpoint handing a request to its session manager, with the URL's bank in context for the tools."""

    def __init__(self, owner: McpHttp, key: str) -> None:
        self.owner = owner
        self.key = key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self.owner.manager(self.key)
        if manager is None:
            await JSONResponse({"detail": "MCP is not running"}, status_code=503)(scope, receive, send)
            return
        bank_id = scope.get("path_params", {}).get("bank_id")
        if bank_id is not None:
            try:
                check_new_bank(scope.get(PRINCIPAL_SCOPE_KEY), bank_id, "bank_id")
            except InvalidInputError as exc:
                detail = [{"type": "value_error", "loc": ["path", "bank_id"], "msg": exc.message, "input": bank_id}]
                await JSONResponse({"detail": detail}, status_code=422)(scope, receive, send)
                return
            except NotFoundError as exc:
                await JSONResponse({"detail": str(exc)}, status_code=404)(scope, receive, send)
                return
        token = _REQUEST_BANK.set(bank_id)
        caller = REQUEST_PRINCIPAL.set(scope.get(PRINCIPAL_SCOPE_KEY))
        try:
            await manager.handle_request(scope, receive, send)
        finally:
            REQUEST_PRINCIPAL.reset(caller)
            _REQUEST_BANK.reset(token)
