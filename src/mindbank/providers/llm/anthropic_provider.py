"""The ``anthropic`` provider: the official ``anthropic`` SDK (Messages API) or any server that speaks it.

Conversions from the neutral (OpenAI-shaped) messages: system messages become the ``system`` parameter; an
assistant turn's tool calls become ``tool_use`` blocks; tool results become ``tool_result`` blocks of one user turn
(consecutive same-role turns are merged, as the API wants alternating roles). JSON-schema output is a forced tool
whose ``input_schema`` is the schema — the Messages API's dependable way to get schema-shaped JSON. The SDK's own
retries are off; errors map to ``LLMTransientError`` (408/409/429, 5xx incl. 529 overloaded, timeouts, connection)
or ``LLMError``. ``temperature`` is sent only to SDK versions whose ``messages.create`` still takes it.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Sequence
from typing import Any

import anthropic

from mindbank.providers.llm.base import (
    ChatRequest,
    ChatResult,
    ForceTool,
    LLMError,
    Message,
    SDKErrors,
    TokenUsage,
    ToolCall,
    ToolChoice,
    call_sdk,
    parse_json_reply,
)

# APITimeoutError is an APIConnectionError
_ERRORS = SDKErrors(
    connection=anthropic.APIConnectionError, status=anthropic.APIStatusError, base=anthropic.AnthropicError
)
DEFAULT_MAX_TOKENS = 8192  # the Messages API requires a cap; documents go up to 8192 tokens plus JSON overhead


class AnthropicProvider:
    """One attempt per :meth:`complete`. Raises ``ValueError`` at construction when no key is available."""

    provider = "anthropic"

    def __init__(self, *, model: str, api_key: str | None, base_url: str | None, timeout: float) -> None:
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ValueError("the anthropic provider needs MINDBANK_LLM_API_KEY (or ANTHROPIC_API_KEY)")
        self.model = model
        self.base_url = base_url
        self._key = key
        self._client = anthropic.Anthropic(api_key=key, base_url=base_url, timeout=timeout, max_retries=0)
        # newer SDKs (2.x) dropped sampling parameters from messages.create: send temperature only where accepted
        self._takes_temperature = "temperature" in inspect.signature(self._client.messages.create).parameters

    def __repr__(self) -> str:  # never the key
        return f"AnthropicProvider(model={self.model!r}, base_url={self.base_url!r})"

    def complete(self, request: ChatRequest) -> ChatResult:
        system, messages = to_anthropic_messages(request.messages)
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": messages,
        }
        if system:
            kwargs["system"] = system
        if request.tools:
            kwargs["tools"] = [_tool(t) for t in request.tools]
            if request.tool_choice is not None:
                kwargs["tool_choice"] = _tool_choice(request.tool_choice)
        if request.response_schema is not None:
            kwargs["tools"] = [
                {
                    "name": request.schema_name,
                    "description": "Give your answer as this tool's input, exactly in its schema.",
                    "input_schema": request.response_schema,
                }
            ]
            kwargs["tool_choice"] = {"type": "tool", "name": request.schema_name}
        if request.temperature is not None and self._takes_temperature:
            kwargs["temperature"] = request.temperature
        return call_sdk(
            lambda: self._client.messages.create(**kwargs),
            lambda message: self._result(message, request),
            provider=self.provider,
            errors=_ERRORS,
            secret=self._key,
        )

    def _result(self, message: Any, request: ChatRequest) -> ChatResult:
        blocks = getattr(message, "content", None)
        if blocks is None:
            raise LLMError("the server returned no content", provider=self.provider)
        texts: list[str] = []
        calls: list[ToolCall] = []
        for i, block in enumerate(blocks):
            kind = getattr(block, "type", None)
            if kind == "text":
                texts.append(block.text)
            elif kind == "tool_use":
                raw_input = block.input
                arguments = raw_input if isinstance(raw_input, dict) else None
                raw = json.dumps(raw_input) if arguments is not None else str(raw_input)
                calls.append(
                    ToolCall(id=block.id or f"toolu_{i}", name=block.name, arguments=arguments, raw_arguments=raw)
                )
        text = "".join(texts)
        parsed: Any = None
        if request.response_schema is not None:
            answer = next((c for c in calls if c.name == request.schema_name), None)
            if answer is not None and answer.arguments is not None:
                parsed, text = answer.arguments, json.dumps(answer.arguments)
            else:  # the model answered in prose: take JSON from the text if there is some
                parsed = parse_json_reply(text)
            calls = []
        usage = getattr(message, "usage", None)
        tokens = TokenUsage(
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            cached_tokens=int(getattr(usage, "cache_read_input_tokens", 0) or 0),
        )
        return ChatResult(
            text=text,
            tool_calls=tuple(calls),
            usage=tokens,
            model=getattr(message, "model", None) or self.model,
            finish_reason=getattr(message, "stop_reason", None),
            parsed=parsed,
        )


def _tool(spec: dict[str, Any]) -> dict[str, Any]:
    function = spec.get("function", spec)
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }


def _tool_choice(choice: ToolChoice) -> dict[str, Any]:
    if isinstance(choice, ForceTool):
        return {"type": "tool", "name": choice.name}
    return {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}[choice]


def to_anthropic_messages(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Neutral messages as ``(system text, Messages API turns)``."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for m in messages:
        role = m["role"]
        if role == "system":
            system.append(m["content"])
        elif role == "tool":
            add("user", [{"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}])
        elif role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m["content"]}] if m.get("content") else []
            for c in m.get("tool_calls") or ():
                arguments = c["arguments"] if isinstance(c["arguments"], dict) else {}
                blocks.append({"type": "tool_use", "id": c["id"], "name": c["name"], "input": arguments})
            add("assistant", blocks or [{"type": "text", "text": "(no reply)"}])
        else:
            add("user", [{"type": "text", "text": m["content"]}])
    return "\n\n".join(system), turns
