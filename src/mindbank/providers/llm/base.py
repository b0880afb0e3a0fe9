"""The LLM port: one chat call with optional tools and optional JSON-schema output, and what wraps every provider.

Reference facts §1 (providers, per-operation overrides, timeouts, concurrency) and §5 (tools in OpenAI function
format). The engine talks to :class:`LLM` only; providers (``openai_provider``, ``anthropic_provider``) adapt an
official SDK to :class:`Provider`, and :class:`ManagedLLM` adds what every provider needs the same way:

* bounded retries with exponential backoff (and ``Retry-After``) on :class:`LLMTransientError` — 429, 5xx, timeouts,
  connection failures; the SDKs' own retries are switched off so there is exactly one retry policy;
* a concurrency cap (a semaphore shared by every operation of the process);
* token usage on every call, handed with the request and the response to observers (tracing, accounting).

Messages are provider-neutral dicts in the OpenAI chat shape (build them with :func:`system`, :func:`user`,
:func:`assistant`, :func:`tool_result`); each provider converts them to its wire format.
"""

from __future__ import annotations

import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from mindbank.errors import TransientError
from mindbank.providers.llm.context import ContextWindowError, check_fits

log = logging.getLogger(__name__)
R = TypeVar("R")

Message = dict[str, Any]
ToolSpec = dict[str, Any]  # OpenAI function format: {"type": "function", "function": {name, description, parameters}}


@dataclass(frozen=True, slots=True)
class ForceTool:
    """A ``tool_choice`` that makes the model call one named tool."""

    name: str


ToolChoice = Literal["auto", "required", "none"] | ForceTool


class LLMError(Exception):
    """The provider refused or answered unusably, and retrying the same request will not help (400, 401, 404, an
    unreadable body). ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, *, provider: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status


class LLMTransientError(LLMError, TransientError):
    """A failure that the same request may overcome later: 408/409/429, 5xx, a timeout or a connection error.

    ``retry_after`` (seconds) is the provider's hint when it sent one. Being a :class:`~mindbank.errors.TransientError`,
    it passes through a refresh unrecorded (no failure stamp, nothing changed) and the worker retries the operation
    with backoff (reference facts §4.4)."""

    def __init__(
        self, message: str, *, provider: str = "", status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, provider=provider, status=status)
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call the model made. ``arguments`` is None when the model's argument text was not a JSON object
    (``raw_arguments`` keeps it, so the caller can tell the model what was wrong)."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments, "raw_arguments": self.raw_arguments}


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Tokens one call (or a sum of calls) spent, as the provider reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        """The reference's ``TokenUsage`` shape (``thoughts_tokens`` is not reported by our providers: 0)."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "cached_tokens": self.cached_tokens,
            "thoughts_tokens": 0,
        }


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat call. ``response_schema`` (a JSON Schema object) asks for a JSON reply; it cannot be combined with
    ``tools``. ``max_tokens`` caps the reply (None: the provider's default); ``scope`` labels the call in traces
    (``agent_1``, ``delta_ops``, ``retain_extract`` ...)."""

    messages: Sequence[Message]
    tools: Sequence[ToolSpec] | None = None
    tool_choice: ToolChoice | None = None
    response_schema: dict[str, Any] | None = None
    schema_name: str = "response"
    temperature: float | None = None
    max_tokens: int | None = None
    scope: str = "llm"

    def to_trace(self) -> dict[str, Any]:
        """The request as stored by tracing (never any credential: those live in the provider, not here)."""
        choice = self.tool_choice
        return {
            "messages": list(self.messages),
            "tools": [t.get("function", {}).get("name") for t in self.tools or ()],
            "tool_choice": {"name": choice.name} if isinstance(choice, ForceTool) else choice,
            "response_schema": self.response_schema,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }


@dataclass(frozen=True, slots=True)
class ChatResult:
    """A model reply: its text, its tool calls, and (with ``response_schema``) the parsed JSON value in ``parsed``
    (None when the reply was not JSON). ``duration_ms`` is wall time of the successful attempt."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: TokenUsage = field(default_factory=TokenUsage)
    model: str = ""
    finish_reason: str | None = None
    parsed: Any = None
    duration_ms: int = 0

    def to_trace(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "finish_reason": self.finish_reason,
            "parsed": self.parsed,
            "model": self.model,
        }


class Provider(Protocol):
    """An SDK adapter: one attempt of one call, errors mapped to :class:`LLMError` / :class:`LLMTransientError`."""

    provider: str
    model: str

    def complete(self, request: ChatRequest) -> ChatResult: ...


class LLM(Protocol):
    """What the engine calls: a chat with optional tools / JSON output; raises ``LLMError`` (and, once retries are
    spent, ``LLMTransientError``)."""

    provider: str
    model: str

    def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: ToolChoice | None = None,
        response_schema: dict[str, Any] | None = None,
        schema_name: str = "response",
        temperature: float | None = None,
        max_tokens: int | None = None,
        scope: str = "llm",
    ) -> ChatResult: ...


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One attempt, as observers see it: ``result`` or ``error`` is set. ``attempt`` counts from 1."""

    provider: str
    model: str
    scope: str
    request: ChatRequest
    result: ChatResult | None
    error: str | None
    attempt: int
    duration_ms: int


Observer = Callable[[CallRecord], None]


class ManagedLLM:
    """The :class:`LLM` every operation uses: a :class:`Provider` plus retries, a concurrency cap and observers.

    ``max_retries`` transient failures are retried (``max_retries + 1`` attempts in all); the n-th retry waits
    ``backoff_seconds * 2**(n-1)`` (with ±25 % jitter so parallel callers spread out), or the provider's
    ``Retry-After`` when it is larger, never more than ``max_backoff_seconds``. ``semaphore`` bounds attempts in
    flight (shared across operations; the wait between attempts does not hold it).
    """

    def __init__(
        self,
        provider: Provider,
        *,
        max_retries: int = 3,
        semaphore: threading.Semaphore | None = None,
        observers: Sequence[Observer] = (),
        backoff_seconds: float = 1.0,
        max_backoff_seconds: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        context_window: int | None = None,
    ) -> None:
        self.inner = provider
        self.context_window = context_window
        self.provider = provider.provider
        self.model = provider.model
        self.max_retries = max(0, max_retries)
        self.semaphore = semaphore or threading.BoundedSemaphore(32)
        self.observers = list(observers)
        self.backoff_seconds = backoff_seconds
        self.max_backoff_seconds = max_backoff_seconds
        self._sleep = sleep
        self._lock = threading.Lock()
        self.usage_total = TokenUsage()  # every successful call of this client, for accounting and tests
        self.calls = 0

    def __repr__(self) -> str:
        return f"ManagedLLM(provider={self.provider!r}, model={self.model!r})"

    def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: ToolChoice | None = None,
        response_schema: dict[str, Any] | None = None,
        schema_name: str = "response",
        temperature: float | None = None,
        max_tokens: int | None = None,
        scope: str = "llm",
    ) -> ChatResult:
        """One call, retried on transient errors. Raises ``ValueError`` for tools combined with a response schema,
        :class:`LLMError` for a permanent failure (a prompt that would overflow ``context_window`` among them: it is
        never sent), :class:`LLMTransientError` once the retries are spent."""
        if tools and response_schema is not None:
            raise ValueError("a call takes tools or a response_schema, not both")
        try:
            check_fits(self.context_window, messages, tools, response_schema, max_tokens)
        except ContextWindowError as exc:
            raise LLMError(str(exc), provider=self.provider) from None
        request = ChatRequest(
            messages=list(messages),
            tools=list(tools) if tools else None,
            tool_choice=tool_choice if tools else None,
            response_schema=response_schema,
            schema_name=schema_name,
            temperature=temperature,
            max_tokens=max_tokens,
            scope=scope,
        )
        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            try:
                with self.semaphore:
                    result = self.inner.complete(request)
            except LLMError as exc:
                elapsed = int((time.perf_counter() - started) * 1000)
                self._notify(request, None, f"{type(exc).__name__}: {exc}", attempt, elapsed)
                if not isinstance(exc, LLMTransientError) or attempt > self.max_retries:
                    log.warning("llm %s/%s %s failed (attempt %d): %s", self.provider, self.model, scope, attempt, exc)
                    raise
                delay = self._delay(attempt, exc.retry_after)
                log.info(
                    "llm %s %s: transient failure (%s); retry %d in %.2fs", self.provider, scope, exc, attempt, delay
                )
                self._sleep(delay)
                continue
            elapsed = int((time.perf_counter() - started) * 1000)
            result = _with_duration(result, elapsed)
            with self._lock:
                self.usage_total = self.usage_total + result.usage
                self.calls += 1
            log.debug(
                "llm %s/%s %s: %d in / %d out tokens, %d ms",
                self.provider, self.model, scope, result.usage.input_tokens, result.usage.output_tokens, elapsed,
            )  # fmt: skip
            self._notify(request, result, None, attempt, elapsed)
            return result

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        base = self.backoff_seconds * (2 ** (attempt - 1)) * random.uniform(0.75, 1.25)
        if retry_after is not None:
            base = max(base, retry_after)
        return float(max(0.0, min(base, self.max_backoff_seconds)))

    def _notify(
        self, request: ChatRequest, result: ChatResult | None, error: str | None, attempt: int, elapsed: int
    ) -> None:
        record = CallRecord(self.provider, self.model, request.scope, request, result, error, attempt, elapsed)
        for observer in self.observers:
            try:
                observer(record)
            except Exception:  # an observer (tracing) must never break the call it watches
                log.exception("llm observer failed")


def _with_duration(result: ChatResult, duration_ms: int) -> ChatResult:
    return ChatResult(
        text=result.text,
        tool_calls=result.tool_calls,
        usage=result.usage,
        model=result.model,
        finish_reason=result.finish_reason,
        parsed=result.parsed,
        duration_ms=duration_ms,
    )


# ---------------------------------------------------------------- messages
def system(text: str) -> Message:
    """A system message."""
    return {"role": "system", "content": text}


def user(text: str) -> Message:
    """A user message."""
    return {"role": "user", "content": text}


def assistant(text: str, tool_calls: Sequence[ToolCall] = ()) -> Message:
    """The model's own turn, replayed into the conversation (tool calls keep their ids)."""
    message: Message = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments if c.arguments is not None else c.raw_arguments}
            for c in tool_calls
        ]
    return message


def tool_result(call_id: str, name: str, content: str) -> Message:
    """The result of a tool call, answering the call with id ``call_id``."""
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def tool_spec(name: str, description: str, parameters: dict[str, Any]) -> ToolSpec:
    """A tool in OpenAI function format."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


# ---------------------------------------------------------------- JSON replies
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


TRANSIENT_STATUSES = frozenset({408, 409, 429})


def is_transient_status(status: int) -> bool:
    """Whether an HTTP status from a provider is worth retrying later: timeouts, conflicts, rate limits, 5xx."""
    return status in TRANSIENT_STATUSES or status >= 500


# ---------------------------------------------------------------- SDK calls and their errors
@dataclass(frozen=True, slots=True)
class SDKErrors:
    """The exception classes of one provider SDK, as :func:`call_sdk` maps them: ``connection`` (no answer: a
    connection failure or a timeout), ``status`` (an HTTP error answer; the instance has ``status_code`` and
    ``response``), ``base`` (any other error of the SDK, e.g. a body that is not the expected shape)."""

    connection: type[Exception]
    status: type[Exception]
    base: type[Exception]


def call_sdk(
    send: Callable[[], R],
    read: Callable[[R], ChatResult],
    *,
    provider: str,
    errors: SDKErrors,
    secret: str | None,
) -> ChatResult:
    """One provider attempt: ``read(send())`` with every failure mapped for :class:`ManagedLLM`.

    Raises :class:`LLMTransientError` for a connection failure or timeout, and for a transient HTTP status
    (:func:`is_transient_status`, with the ``Retry-After`` hint); :class:`LLMError` for any other HTTP status, any
    other SDK error, a 2xx body that is not JSON (``ValueError`` from the SDK's decoder) or an answer of the wrong
    shape (``AttributeError``/``TypeError``/``KeyError`` from ``read``); an ``LLMError`` that ``read`` raises itself
    passes through. Messages never contain ``secret`` (the API key)."""

    def message(exc: Exception) -> str:
        return redact(f"{type(exc).__name__}: {exc}", secret)

    try:
        answer = send()
    except errors.connection as exc:
        raise LLMTransientError(message(exc), provider=provider) from exc
    except errors.status as exc:
        status: int = getattr(exc, "status_code")  # noqa: B009 - the SDKs' status errors all carry it
        if is_transient_status(status):
            retry_after = retry_after_seconds(getattr(exc, "response", None))
            raise LLMTransientError(message(exc), provider=provider, status=status, retry_after=retry_after) from exc
        raise LLMError(message(exc), provider=provider, status=status) from exc
    except errors.base as exc:
        raise LLMError(message(exc), provider=provider) from exc
    except ValueError as exc:  # a 200 whose body is not JSON: the SDK's decoder raises
        raise LLMError(f"unreadable response body: {exc}", provider=provider) from exc
    try:
        return read(answer)
    except (AttributeError, TypeError, KeyError) as exc:  # a body of the wrong shape
        raise LLMError(f"malformed response: {type(exc).__name__}: {exc}", provider=provider) from exc


def retry_after_seconds(response: Any) -> float | None:
    """The ``Retry-After`` header of an HTTP error answer, in seconds (None when absent, or an HTTP date: the
    retry policy then uses its own backoff)."""
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    try:
        return None if value is None else max(0.0, float(value))
    except ValueError:
        return None


def parse_json_reply(text: str) -> Any:
    """The JSON value in a model's reply: the whole text, else a fenced block, else the outermost ``{...}``.
    Returns None when nothing parses (small local models often wrap JSON in prose or code fences)."""
    candidate = text.strip()
    fenced = _FENCE.match(candidate)
    if fenced:
        candidate = fenced.group(1)
    for attempt in (candidate, candidate[candidate.find("{") : candidate.rfind("}") + 1]):
        if not attempt:
            continue
        try:
            return json.loads(attempt)
        except ValueError:
            continue
    return None


def redact(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` (an API key) masked, for error messages that might echo a request."""
    if secret and len(secret) >= 4 and secret in text:
        return text.replace(secret, "***")
    return text
