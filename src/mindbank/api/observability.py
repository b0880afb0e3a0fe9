"""Request metrics: a pure ASGI middleware timing every HTTP request and reporting it, labelled by the matched
route template (``/v1/default/banks/{bank_id}/documents``, never the raw path, so labels stay few), to
:meth:`mindbank.service.metrics.Metrics.observe_request`. Unmatched paths are labelled ``unmatched``."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mindbank.service.metrics import Metrics


class RequestMetricsMiddleware:
    """Observes method, route template, status and latency of each HTTP request (a request that raised counts as
    500)."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def observe(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, observe)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.metrics.observe_request(scope["method"], template, status, time.perf_counter() - started)
