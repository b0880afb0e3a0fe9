"""``Client`` (sync) and ``AsyncClient`` (asyncio) over httpx: one method per server capability.

Both build their exchanges with :mod:`mindbank.client._requests`, so they send the same requests and return the same
pydantic models; they differ only in ``await``. Every method raises :class:`MindBankHTTPError` for an error answer
and :class:`MindBankConnectionError` when the server cannot be reached.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Literal, TypeVar

import httpx
from pydantic import BaseModel

from mindbank.client import _requests as api
from mindbank.client.errors import MindBankConnectionError
from mindbank.client.models import (
    BankConfig,
    BankList,
    BankStats,
    CancelResponse,
    CreateMentalModelResponse,
    DryRunResult,
    HistoryEntry,
    MentalModel,
    MentalModelList,
    Operation,
    OperationList,
    RecallResponse,
    ReflectResponse,
    RefreshResponse,
    RetainResponse,
    StatusResponse,
    TagList,
)
from mindbank.version import __version__

T = TypeVar("T")
DEFAULT_URL = "http://127.0.0.1:8888"
Detail = api.Detail
Budget = api.Budget
Trigger = Mapping[str, Any] | BaseModel


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


class Client:
    """Synchronous client. ``Client()`` talks to ``MINDBANK_URL`` (default http://127.0.0.1:8888) with
    ``MINDBANK_API_KEY`` if set. Use as a context manager, or call :meth:`close`."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        config = _config(base_url, api_key, timeout)
        self.base_url: str = config["base_url"]
        self._http = httpx.Client(**config, transport=transport)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, request: api.Request[T]) -> T:
        try:
            response = self._http.request(request.method, request.path, params=request.params, json=request.json)
        except httpx.TransportError as exc:
            raise _unreachable(self.base_url, exc) from exc
        return api.read_response(response, request)

    # ------------------------------------------------------------------ memories
    def retain(
        self,
        bank_id: str,
        content: str | None = None,
        *,
        items: Sequence[Mapping[str, Any]] | None = None,
        tags: Sequence[str] | None = None,
        context: str | None = None,
        timestamp: str | datetime | None = None,
        metadata: Mapping[str, str] | None = None,
        document_id: str | None = None,
        async_: bool = False,
    ) -> RetainResponse:
        """Store ``content`` (or a batch of ``items``: dicts with the HTTP item fields). ``async_`` queues the work
        and returns its ``operation_id``. Raises ``ValueError`` unless exactly one of content/items is given."""
        return self._send(
            api.retain(bank_id, content, items=items, tags=tags, context=context, timestamp=timestamp,
                       metadata=metadata, document_id=document_id, async_=async_)
        )  # fmt: skip

    def recall(
        self,
        bank_id: str,
        query: str,
        *,
        types: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        tags_match: str | None = None,
        max_tokens: int | None = None,
        budget: Budget | None = None,
    ) -> RecallResponse:
        """Search memories (semantic + keyword); ``results`` best first."""
        return self._send(
            api.recall(bank_id, query, types=types, tags=tags, tags_match=tags_match, max_tokens=max_tokens,
                       budget=budget)
        )  # fmt: skip

    def reflect(
        self,
        bank_id: str,
        query: str,
        *,
        budget: Budget | None = None,
        max_tokens: int | None = None,
        tags: Sequence[str] | None = None,
        tags_match: str | None = None,
        include_facts: bool = False,
        response_schema: Mapping[str, Any] | None = None,
        fact_types: Sequence[str] | None = None,
        exclude_mental_models: bool | None = None,
    ) -> ReflectResponse:
        """Answer ``query`` from the bank (``POST /reflect``); ``include_facts`` adds ``based_on``."""
        return self._send(
            api.reflect(bank_id, query, budget=budget, max_tokens=max_tokens, tags=tags, tags_match=tags_match,
                        include_facts=include_facts, response_schema=response_schema, fact_types=fact_types,
                        exclude_mental_models=exclude_mental_models)
        )  # fmt: skip

    def list_tags(
        self,
        bank_id: str,
        *,
        q: str | None = None,
        source: Literal["memories", "mental_models"] = "memories",
        limit: int = 100,
        offset: int = 0,
    ) -> TagList:
        """Tags in use with counts, most used first; ``q`` filters with ``*`` wildcards."""
        return self._send(api.list_tags(bank_id, q=q, source=source, limit=limit, offset=offset))

    def stats(self, bank_id: str) -> BankStats:
        """Live bank statistics."""
        return self._send(api.stats(bank_id))

    def list_banks(self) -> BankList:
        """Every bank with its memory count."""
        return self._send(api.list_banks())

    def get_bank_config(self, bank_id: str) -> BankConfig:
        """Resolved settings of a bank and its own overrides."""
        return self._send(api.get_bank_config(bank_id))

    def update_bank_config(self, bank_id: str, updates: Mapping[str, Any]) -> BankConfig:
        """Set per-bank overrides (a None value removes one)."""
        return self._send(api.update_bank_config(bank_id, updates))

    # ------------------------------------------------------------------ mental models
    def create_mental_model(
        self,
        bank_id: str,
        name: str,
        source_query: str,
        *,
        id: str | None = None,
        tags: Sequence[str] | None = None,
        max_tokens: int | None = None,
        trigger: Trigger | None = None,
    ) -> CreateMentalModelResponse:
        """Create a model; its first refresh is queued (``operation_id``; see :meth:`wait`)."""
        return self._send(
            api.create_mental_model(bank_id, name, source_query, id=id, tags=tags, max_tokens=max_tokens,
                                    trigger=trigger)
        )  # fmt: skip

    def list_mental_models(
        self,
        bank_id: str,
        *,
        tags: Sequence[str] | None = None,
        tags_match: Literal["any", "all", "exact"] | None = None,
        detail: Detail = "metadata",
        limit: int = 100,
        offset: int = 0,
    ) -> MentalModelList:
        """A page of models, newest refresh first, each with ``is_stale``."""
        return self._send(
            api.list_mental_models(bank_id, tags=tags, tags_match=tags_match, detail=detail, limit=limit,
                                   offset=offset)
        )  # fmt: skip

    def get_mental_model(self, bank_id: str, mental_model_id: str, *, detail: Detail = "full") -> MentalModel:
        """One model at a detail level (default full)."""
        return self._send(api.get_mental_model(bank_id, mental_model_id, detail=detail))

    def update_mental_model(
        self,
        bank_id: str,
        mental_model_id: str,
        *,
        name: str | None = None,
        source_query: str | None = None,
        max_tokens: int | None = None,
        tags: Sequence[str] | None = None,
        trigger: Trigger | None = None,
    ) -> MentalModel:
        """Change the given fields; ``trigger`` fields are merged over the stored trigger. Queues no refresh."""
        return self._send(
            api.update_mental_model(bank_id, mental_model_id, name=name, source_query=source_query,
                                    max_tokens=max_tokens, tags=tags, trigger=trigger)
        )  # fmt: skip

    def delete_mental_model(self, bank_id: str, mental_model_id: str) -> StatusResponse:
        """Delete a model and its history."""
        return self._send(api.delete_mental_model(bank_id, mental_model_id))

    def refresh_mental_model(
        self, bank_id: str, mental_model_id: str, *, mode: Literal["full"] | None = None
    ) -> RefreshResponse:
        """Queue a refresh (or get the one already queued); ``mode="full"`` forces a full rebuild for that run."""
        return self._send(api.refresh_mental_model(bank_id, mental_model_id, mode=mode))

    def dry_run_refresh_mental_model(self, bank_id: str, mental_model_id: str) -> DryRunResult:
        """What a refresh would do now (outcome, preview, diff); writes nothing."""
        return self._send(api.dry_run_refresh_mental_model(bank_id, mental_model_id))

    def clear_mental_model(self, bank_id: str, mental_model_id: str) -> MentalModel:
        """Empty the content (kept in history); the next refresh rebuilds it."""
        return self._send(api.clear_mental_model(bank_id, mental_model_id))

    def revert_mental_model(self, bank_id: str, mental_model_id: str, history_id: int) -> MentalModel:
        """Restore the content a history entry recorded (the revert is itself recorded)."""
        return self._send(api.revert_mental_model(bank_id, mental_model_id, history_id))

    def get_mental_model_history(self, bank_id: str, mental_model_id: str) -> list[HistoryEntry]:
        """Previous versions and failed refreshes, most recent first."""
        return self._send(api.get_mental_model_history(bank_id, mental_model_id))

    # ------------------------------------------------------------------ operations
    def list_operations(
        self,
        bank_id: str,
        *,
        status: str | None = None,
        operation_type: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> OperationList:
        """A page of background operations, newest first."""
        return self._send(
            api.list_operations(bank_id, status=status, operation_type=operation_type, limit=limit, offset=offset)
        )

    def get_operation(self, bank_id: str, operation_id: str) -> Operation:
        """One operation's status and result."""
        return self._send(api.get_operation(bank_id, operation_id))

    def cancel_operation(self, bank_id: str, operation_id: str) -> CancelResponse:
        """Cancel a pending operation (409 once it runs or has finished)."""
        return self._send(api.cancel_operation(bank_id, operation_id))

    def wait(self, bank_id: str, operation_id: str, *, timeout: float = 120.0, poll_interval: float = 0.2) -> Operation:
        """Poll an operation until it is completed, failed or cancelled, and return it (check ``status``).
        Raises ``TimeoutError`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            op = self.get_operation(bank_id, operation_id)
            if op.is_terminal:
                return op
            if time.monotonic() >= deadline:
                raise TimeoutError(f"operation {operation_id} still {op.status} after {timeout} s")
            time.sleep(poll_interval)


class AsyncClient:
    """Asynchronous client, the same methods as :class:`Client` as coroutines. ``async with AsyncClient() as c``."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        config = _config(base_url, api_key, timeout)
        self.base_url: str = config["base_url"]
        self._http = httpx.AsyncClient(**config, transport=transport)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _send(self, request: api.Request[T]) -> T:
        try:
            response = await self._http.request(request.method, request.path, params=request.params, json=request.json)
        except httpx.TransportError as exc:
            raise _unreachable(self.base_url, exc) from exc
        return api.read_response(response, request)

    # ------------------------------------------------------------------ memories
    async def retain(
        self,
        bank_id: str,
        content: str | None = None,
        *,
        items: Sequence[Mapping[str, Any]] | None = None,
        tags: Sequence[str] | None = None,
        context: str | None = None,
        timestamp: str | datetime | None = None,
        metadata: Mapping[str, str] | None = None,
        document_id: str | None = None,
        async_: bool = False,
    ) -> RetainResponse:
        """See :meth:`Client.retain`."""
        return await self._send(
            api.retain(bank_id, content, items=items, tags=tags, context=context, timestamp=timestamp,
                       metadata=metadata, document_id=document_id, async_=async_)
        )  # fmt: skip

    async def recall(
        self,
        bank_id: str,
        query: str,
        *,
        types: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        tags_match: str | None = None,
        max_tokens: int | None = None,
        budget: Budget | None = None,
    ) -> RecallResponse:
        """See :meth:`Client.recall`."""
        return await self._send(
            api.recall(bank_id, query, types=types, tags=tags, tags_match=tags_match, max_tokens=max_tokens,
                       budget=budget)
        )  # fmt: skip

    async def reflect(
        self,
        bank_id: str,
        query: str,
        *,
        budget: Budget | None = None,
        max_tokens: int | None = None,
        tags: Sequence[str] | None = None,
        tags_match: str | None = None,
        include_facts: bool = False,
        response_schema: Mapping[str, Any] | None = None,
        fact_types: Sequence[str] | None = None,
        exclude_mental_models: bool | None = None,
    ) -> ReflectResponse:
        """See :meth:`Client.reflect`."""
        return await self._send(
            api.reflect(bank_id, query, budget=budget, max_tokens=max_tokens, tags=tags, tags_match=tags_match,
                        include_facts=include_facts, response_schema=response_schema, fact_types=fact_types,
                        exclude_mental_models=exclude_mental_models)
        )  # fmt: skip

    async def list_tags(
        self,
        bank_id: str,
        *,
        q: str | None = None,
        source: Literal["memories", "mental_models"] = "memories",
        limit: int = 100,
        offset: int = 0,
    ) -> TagList:
        """See :meth:`Client.list_tags`."""
        return await self._send(api.list_tags(bank_id, q=q, source=source, limit=limit, offset=offset))

    async def stats(self, bank_id: str) -> BankStats:
        """See :meth:`Client.stats`."""
        return await self._send(api.stats(bank_id))

    async def list_banks(self) -> BankList:
        """See :meth:`Client.list_banks`."""
        return await self._send(api.list_banks())

    async def get_bank_config(self, bank_id: str) -> BankConfig:
        """See :meth:`Client.get_bank_config`."""
        return await self._send(api.get_bank_config(bank_id))

    async def update_bank_config(self, bank_id: str, updates: Mapping[str, Any]) -> BankConfig:
        """See :meth:`Client.update_bank_config`."""
        return await self._send(api.update_bank_config(bank_id, updates))

    # ------------------------------------------------------------------ mental models
    async def create_mental_model(
        self,
        bank_id: str,
        name: str,
        source_query: str,
        *,
        id: str | None = None,
        tags: Sequence[str] | None = None,
        max_tokens: int | None = None,
        trigger: Trigger | None = None,
    ) -> CreateMentalModelResponse:
        """See :meth:`Client.create_mental_model`."""
        return await self._send(
            api.create_mental_model(bank_id, name, source_query, id=id, tags=tags, max_tokens=max_tokens,
                                    trigger=trigger)
        )  # fmt: skip

    async def list_mental_models(
        self,
        bank_id: str,
        *,
        tags: Sequence[str] | None = None,
        tags_match: Literal["any", "all", "exact"] | None = None,
        detail: Detail = "metadata",
        limit: int = 100,
        offset: int = 0,
    ) -> MentalModelList:
        """See :meth:`Client.list_mental_models`."""
        return await self._send(
            api.list_mental_models(bank_id, tags=tags, tags_match=tags_match, detail=detail, limit=limit,
                                   offset=offset)
        )  # fmt: skip

    async def get_mental_model(self, bank_id: str, mental_model_id: str, *, detail: Detail = "full") -> MentalModel:
        """See :meth:`Client.get_mental_model`."""
        return await self._send(api.get_mental_model(bank_id, mental_model_id, detail=detail))

    async def update_mental_model(
        self,
        bank_id: str,
        mental_model_id: str,
        *,
        name: str | None = None,
        source_query: str | None = None,
        max_tokens: int | None = None,
        tags: Sequence[str] | None = None,
        trigger: Trigger | None = None,
    ) -> MentalModel:
        """See :meth:`Client.update_mental_model`."""
        return await self._send(
            api.update_mental_model(bank_id, mental_model_id, name=name, source_query=source_query,
                                    max_tokens=max_tokens, tags=tags, trigger=trigger)
        )  # fmt: skip

    async def delete_mental_model(self, bank_id: str, mental_model_id: str) -> StatusResponse:
        """See :meth:`Client.delete_mental_model`."""
        return await self._send(api.delete_mental_model(bank_id, mental_model_id))

    async def refresh_mental_model(
        self, bank_id: str, mental_model_id: str, *, mode: Literal["full"] | None = None
    ) -> RefreshResponse:
        """See :meth:`Client.refresh_mental_model`."""
        return await self._send(api.refresh_mental_model(bank_id, mental_model_id, mode=mode))

    async def dry_run_refresh_mental_model(self, bank_id: str, mental_model_id: str) -> DryRunResult:
        """See :meth:`Client.dry_run_refresh_mental_model`."""
        return await self._send(api.dry_run_refresh_mental_model(bank_id, mental_model_id))

    async def clear_mental_model(self, bank_id: str, mental_model_id: str) -> MentalModel:
        """See :meth:`Client.clear_mental_model`."""
        return await self._send(api.clear_mental_model(bank_id, mental_model_id))

    async def revert_mental_model(self, bank_id: str, mental_model_id: str, history_id: int) -> MentalModel:
        """See :meth:`Client.revert_mental_model`."""
        return await self._send(api.revert_mental_model(bank_id, mental_model_id, history_id))

    async def get_mental_model_history(self, bank_id: str, mental_model_id: str) -> list[HistoryEntry]:
        """See :meth:`Client.get_mental_model_history`."""
        return await self._send(api.get_mental_model_history(bank_id, mental_model_id))

    # ------------------------------------------------------------------ operations
    async def list_operations(
        self,
        bank_id: str,
        *,
        status: str | None = None,
        operation_type: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> OperationList:
        """See :meth:`Client.list_operations`."""
        return await self._send(
            api.list_operations(bank_id, status=status, operation_type=operation_type, limit=limit, offset=offset)
        )

    async def get_operation(self, bank_id: str, operation_id: str) -> Operation:
        """See :meth:`Client.get_operation`."""
        return await self._send(api.get_operation(bank_id, operation_id))

    async def cancel_operation(self, bank_id: str, operation_id: str) -> CancelResponse:
        """See :meth:`Client.cancel_operation`."""
        return await self._send(api.cancel_operation(bank_id, operation_id))

    async def wait(
        self, bank_id: str, operation_id: str, *, timeout: float = 120.0, poll_interval: float = 0.2
    ) -> Operation:
        """See :meth:`Client.wait`."""
        deadline = time.monotonic() + timeout
        while True:
            op = await self.get_operation(bank_id, operation_id)
            if op.is_terminal:
                return op
            if time.monotonic() >= deadline:
                raise TimeoutError(f"operation {operation_id} still {op.status} after {timeout} s")
            await asyncio.sleep(poll_interval)
