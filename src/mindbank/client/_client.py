"""``Client`` (sync) and ``AsyncClient`` (asyncio) over httpx: two ways to execute the same method families.

Every method is declared once in :mod:`mindbank.client.families` as a request description
(:mod:`mindbank.client._wire`); a client only sends it (``_send``) and turns a description into one of its methods
(``_bind``), so both clients send the same requests and return the same pydantic models — they differ only in
``await``. Every method raises :class:`MindBankHTTPError` for an error answer and :class:`MindBankConnectionError`
when the server cannot be reached.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, ClassVar, Generic, Literal, TypeVar

import httpx

from mindbank.client._wire import Request, read_response
from mindbank.client.errors import MindBankClientError, MindBankConnectionError
from mindbank.client.families import Families
from mindbank.client.models import Operation
from mindbank.version import __version__

T = TypeVar("T")
DEFAULT_URL = "http://127.0.0.1:8888"


def _config(base_url: str | None, api_key: str | None, timeout: float) -> dict[str, Any]:
    """httpx client arguments: URL and key from the arguments, else ``MINDBANK_URL`` / ``MINDBANK_API_KEY``."""
    url = base_url or os.environ.get("MINDBANK_URL") or DEFAULT_URL
    key = api_key if api_key is not None else os.environ.get("MINDBANK_API_KEY") or None
    headers = {"user-agent": f"mindbank-client/{__version__}"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    return {"base_url": url.rstrip("/"), "headers": headers, "timeout": timeout}


def _unreachable(base_url: str, exc: httpx.TransportError) -> MindBankConnectionError:
    # the message names the URL and the transport's reason, never the headers (they carry the API key)
    return MindBankConnectionError(f"cannot reach mindbank at {base_url}: {exc.__class__.__name__}: {exc}")


def _settled(op: Operation, operation_id: str, deadline: float, timeout: float) -> bool:
    """Whether ``wait`` is done with ``op`` (it is terminal). Raises ``TimeoutError`` once ``deadline`` has passed."""
    if op.is_terminal:
        return True
    if time.monotonic() >= deadline:
        raise TimeoutError(f"operation {operation_id} still {op.status} after {timeout} s")
    return False


def _archive_url(op: Operation) -> str:
    """Where a completed export's archive is. Raises :class:`MindBankClientError` when there is none."""
    url = (op.result_metadata or {}).get("download_url") if op.status == "completed" else None
    if not url:
        raise MindBankClientError(f"export {op.operation_id} {op.status} without an archive: {op.error_message or '-'}")
    return str(url)


HttpT = TypeVar("HttpT", httpx.Client, httpx.AsyncClient)
TransportT = TypeVar("TransportT", httpx.BaseTransport, httpx.AsyncBaseTransport)


class _Connected(Families, Generic[HttpT, TransportT]):
    """What both clients hold: the server's base URL (``base_url``, else ``MINDBANK_URL``, else
    http://127.0.0.1:8888) and an httpx client for it sending ``api_key`` (else ``MINDBANK_API_KEY``) if any.
    ``transport`` replaces httpx's (a test's in-process app)."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        transport: TransportT | None = None,
    ) -> None:
        config = _config(base_url, api_key, timeout)
        self.base_url: str = config["base_url"]
        self._http: HttpT = self._open(config, transport)

    def _open(self, config: dict[str, Any], transport: TransportT | None) -> HttpT:
        raise NotImplementedError


class Client(_Connected[httpx.Client, httpx.BaseTransport]):
    """Synchronous client. ``Client()`` talks to ``MINDBANK_URL`` (default http://127.0.0.1:8888) with
    ``MINDBANK_API_KEY`` if set. Use as a context manager, or call :meth:`close`."""

    _asynchronous: ClassVar[Literal[False]] = False

    def _open(self, config: dict[str, Any], transport: httpx.BaseTransport | None) -> httpx.Client:
        return httpx.Client(**config, transport=transport)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, request: Request[T]) -> T:
        try:
            response = self._http.request(request.method, request.path, **request.send_arguments())
        except httpx.TransportError as exc:
            raise _unreachable(self.base_url, exc) from exc
        return read_response(response, request)

    def _bind(self, build: Callable[..., Request[T]]) -> Callable[..., T]:
        @functools.wraps(build)
        def method(*args: Any, **kwargs: Any) -> T:
            return self._send(build(self, *args, **kwargs))

        return method

    def wait(self, bank_id: str, operation_id: str, *, timeout: float = 120.0, poll_interval: float = 0.2) -> Operation:
        """Poll an operation until it is completed, failed or cancelled, and return it (check ``status``).
        Raises ``TimeoutError`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not _settled(op := self.get_operation(bank_id, operation_id), operation_id, deadline, timeout):
            time.sleep(poll_interval)
        return op

    def fetch_archive(
        self, bank_id: str, operation_id: str, *, timeout: float = 300.0, poll_interval: float = 0.2
    ) -> bytes:
        """Wait for an export operation and download the archive it wrote. Raises ``TimeoutError``, and
        :class:`MindBankClientError` when the export did not complete."""
        op = self.wait(bank_id, operation_id, timeout=timeout, poll_interval=poll_interval)
        return self.download_archive(_archive_url(op))


class AsyncClient(_Connected[httpx.AsyncClient, httpx.AsyncBaseTransport]):
    """Asynchronous client, the same methods as :class:`Client` as coroutines. ``async with AsyncClient() as c``."""

    _asynchronous: ClassVar[Literal[True]] = True

    def _open(self, config: dict[str, Any], transport: httpx.AsyncBaseTransport | None) -> httpx.AsyncClient:
        return httpx.AsyncClient(**config, transport=transport)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _send(self, request: Request[T]) -> T:
        try:
            response = await self._http.request(request.method, request.path, **request.send_arguments())
        except httpx.TransportError as exc:
            raise _unreachable(self.base_url, exc) from exc
        return read_response(response, request)

    def _bind(self, build: Callable[..., Request[T]]) -> Callable[..., Coroutine[Any, Any, T]]:
        @functools.wraps(build)
        async def method(*args: Any, **kwargs: Any) -> T:
            # built inside the coroutine, so an argument error surfaces on ``await``, where the answer would
            return await self._send(build(self, *args, **kwargs))

        return method

    async def wait(
        self, bank_id: str, operation_id: str, *, timeout: float = 120.0, poll_interval: float = 0.2
    ) -> Operation:
        """See :meth:`Client.wait`."""
        deadline = time.monotonic() + timeout
        while not _settled(op := await self.get_operation(bank_id, operation_id), operation_id, deadline, timeout):
            await asyncio.sleep(poll_interval)
        return op

    async def fetch_archive(
        self, bank_id: str, operation_id: str, *, timeout: float = 300.0, poll_interval: float = 0.2
    ) -> bytes:
        """See :meth:`Client.fetch_archive`."""
        op = await self.wait(bank_id, operation_id, timeout=timeout, poll_interval=poll_interval)
        return await self.download_archive(_archive_url(op))
