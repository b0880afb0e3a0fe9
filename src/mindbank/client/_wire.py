"""The request-description layer shared by ``Client`` and ``AsyncClient``: what a method sends and how its answer is
read.

A client method is declared once, in a family module (:mod:`mindbank.client.families`), as an :class:`endpoint`: a
function that returns a :class:`Request` (method, path, query, JSON body and a parser for the response body). Each
client class executes that description its own way — ``Client`` sends it at once, ``AsyncClient`` in a coroutine —
and both read the answer with the one parser :func:`read_response`, so the wire contract lives in one place.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Concatenate, Generic, Literal, ParamSpec, Protocol, TypeAlias, TypeVar, overload
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from mindbank.client.errors import MindBankHTTPError

T = TypeVar("T")
P = ParamSpec("P")
Detail = Literal["metadata", "content", "full"]
Budget = Literal["low", "mid", "high"]
Trigger: TypeAlias = Mapping[str, Any] | BaseModel


@dataclass(frozen=True, slots=True)
class Request(Generic[T]):
    """One HTTP exchange: ``parse`` turns the decoded JSON body of a 2xx answer (its text, with ``text``; its bytes,
    with ``raw``) into the method's return value. ``files`` / ``data``: a multipart body (httpx's arguments) instead of
    JSON."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: dict[str, Any] | None = None
    json: Any = None
    files: Any = None
    data: Any = None
    text: bool = False
    raw: bool = False

    def send_arguments(self) -> dict[str, Any]:
        """The keyword arguments of ``httpx.Client.request`` for this exchange."""
        return {"params": self.params, "json": self.json, "files": self.files, "data": self.data}


class Transport(Protocol):
    """What an :class:`endpoint` needs from the client it is read from: a way to turn a request builder into the
    client's method (sync or async)."""

    def _bind(self, build: Callable[..., Request[Any]]) -> Callable[..., Any]: ...


class SyncTransport(Transport, Protocol):
    """A client whose methods answer at once (``Client``): ``_asynchronous`` is ``False``."""

    _asynchronous: ClassVar[Literal[False]]


class AsyncTransport(Transport, Protocol):
    """A client whose methods are coroutines (``AsyncClient``): ``_asynchronous`` is ``True``."""

    _asynchronous: ClassVar[Literal[True]]


class endpoint(Generic[P, T]):  # lower case: it is used as a decorator
    """A client method declared once for both clients: decorate a function ``(self, *args) -> Request[T]``.

    Read from a ``Client`` it is a method returning ``T``; read from an ``AsyncClient``, a coroutine method returning
    ``T``. The builder runs when the method is called (sync) or awaited (async), so its argument errors
    (``ValueError``) surface where the answer would; the method keeps the builder's name, signature and docstring.
    """

    def __init__(self, build: Callable[Concatenate[Any, P], Request[T]]) -> None:
        self._build = build
        functools.update_wrapper(self, build)
        # what help() and IDEs show: the answer the method returns, not the request that fetches it
        signature = inspect.signature(build)
        self.__signature__ = signature.replace(return_annotation=_answer(signature.return_annotation))
        self._method_signature = self.__signature__.replace(parameters=list(signature.parameters.values())[1:])

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> endpoint[P, T]: ...
    @overload
    def __get__(self, obj: AsyncTransport, owner: type | None = None) -> Callable[P, Coroutine[Any, Any, T]]: ...
    @overload
    def __get__(self, obj: SyncTransport, owner: type | None = None) -> Callable[P, T]: ...
    def __get__(self, obj: Transport | None, owner: type | None = None) -> Any:
        return self if obj is None else self._method_of(obj)

    def __call__(self, client: Transport, /, *args: P.args, **kwargs: P.kwargs) -> Any:
        """Called on the class (``Client.retain(client, ...)``), as a plain method would be."""
        return self._method_of(client)(*args, **kwargs)

    def _method_of(self, client: Transport) -> Callable[..., Any]:
        method = client._bind(self._build)
        method.__signature__ = self._method_signature  # type: ignore[attr-defined]  # what help() and IDEs read
        return method


def _answer(annotation: Any) -> Any:
    """``T`` for a builder's ``Request[T]`` return annotation (a string under postponed evaluation)."""
    if isinstance(annotation, str) and annotation.startswith("Request[") and annotation.endswith("]"):
        return annotation[len("Request[") : -1]
    return annotation


def read_response(response: httpx.Response, request: Request[T]) -> T:
    """The parsed body of a 2xx response. Raises :class:`MindBankHTTPError` (status, the server's message) for any
    other status."""
    if response.is_success:
        if request.raw:
            return request.parse(response.content)
        return request.parse(response.text if request.text else response.json())
    try:
        body = response.json()
        detail = body.get("detail", body) if isinstance(body, dict) else body
    except ValueError:
        detail = response.text or response.reason_phrase
    raise MindBankHTTPError(response.status_code, error_message(detail), detail=detail, method=request.method,
                            path=request.path)  # fmt: skip


def error_message(detail: Any) -> str:
    """A readable message from an error body's ``detail``: a string as is; FastAPI's 422 list as
    ``field: message`` parts joined by ``; ``."""
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list):
        parts = []
        for err in detail:
            if not isinstance(err, dict):
                parts.append(str(err))
                continue
            loc = [str(p) for p in err.get("loc", []) if p not in ("body", "query", "path")]
            msg = str(err.get("msg", "")).removeprefix("Value error, ")  # pydantic's wrapper adds nothing here
            parts.append(f"{'.'.join(loc)}: {msg}" if loc else msg)
        return "; ".join(parts)
    return str(detail)


# ---------------------------------------------------------------- paths and bodies
def bank_path(bank_id: str) -> str:
    """``/v1/default/banks/{bank_id}``, the id path-escaped (an odd id is then a clean 404, not another route)."""
    return f"/v1/default/banks/{quote(bank_id, safe='')}"


def child_path(bank_id: str, collection: str, item_id: str) -> str:
    """``{bank_path}/{collection}/{item_id}``, the id path-escaped."""
    return f"{bank_path(bank_id)}/{collection}/{quote(item_id, safe='')}"


def clean(data: Mapping[str, Any]) -> dict[str, Any]:
    """Drop unset (None) fields: the server applies its own defaults."""
    return {k: v for k, v in data.items() if v is not None}


def listed(values: Any, *, keep_empty: bool = False) -> list[Any] | None:
    """A sequence argument as a JSON list; None when absent, and (unless ``keep_empty``) when empty."""
    if values is None or (not values and not keep_empty):
        return None
    return list(values)


def iso_time(value: str | datetime | None) -> str | None:
    """A time argument as ISO-8601 text (a string is sent as given)."""
    return value.isoformat() if isinstance(value, datetime) else value


def trigger_body(trigger: Trigger | None) -> dict[str, Any] | None:
    """A trigger argument (a mapping, or a pydantic model: only its set fields) as a JSON object."""
    if isinstance(trigger, BaseModel):
        return trigger.model_dump(exclude_unset=True)
    return None if trigger is None else dict(trigger)


def model_settings_body(
    *, tags: Sequence[str] | None, max_tokens: int | None, trigger: Trigger | None, **fields: Any
) -> dict[str, Any]:
    """The JSON body of a mental model's (or knowledge page's) settings: ``fields`` (name, source_query, ids) as
    given, ``tags`` as a list (an empty list kept: it clears them), ``max_tokens`` and the ``trigger`` object; unset
    (None) fields dropped."""
    return clean(
        {**fields, "tags": listed(tags, keep_empty=True), "max_tokens": max_tokens, "trigger": trigger_body(trigger)}
    )
