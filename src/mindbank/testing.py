"""Test seams shipped with mindbank: a scripted synthesizer and a scripted LLM that answer whatever a test tells
them to.

Use it to drive the refresh pipeline's failure paths (provider errors, empty answers, rejected edits, structured
output) without a model::

    synth = ScriptedSynthesizer(compose_script=SynthesisError("no_answer", "provider timed out"))
    mb = MindBank.open(settings, synthesizer=synth)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from mindbank.domain.document import Operation, StructuredDocument
from mindbank.domain.timeutil import utcnow
from mindbank.engine.synthesis.extractive import ExtractiveSynthesizer
from mindbank.engine.synthesis.port import Capabilities, Synthesis, SynthesisError, SynthesisInputs
from mindbank.providers.llm.base import (
    ChatRequest,
    ChatResult,
    ForceTool,
    Message,
    TokenUsage,
    ToolCall,
    ToolChoice,
    ToolSpec,
)

Script = Any  # a value, an exception to raise, or a callable computing either from the call's arguments


@dataclass
class ScriptedSynthesizer:
    """A :class:`~mindbank.engine.synthesis.Synthesizer` whose answers are scripted.

    ``compose_script``: markdown ``str`` | ``Synthesis`` | exception | callable(facts) -> one of those;
    None = extractive.
    ``edit_script``: ``list[Operation]`` | ``Synthesis`` | exception | callable(document, facts) -> one of those;
    None = extractive. ``structured_script``: dict | exception | None (= cannot, like the extractive engine).
    Every call is recorded in ``calls`` as ``(method, kwargs)``; it reads source chunks (``reads_chunks``), so
    the recorded kwargs include the ``chunks`` a refresh handed over.
    """

    compose_script: Script = None
    edit_script: Script = None
    structured_script: Script = None
    name: str = "scripted"
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _fallback: ExtractiveSynthesizer = field(default_factory=ExtractiveSynthesizer)

    @property
    def capabilities(self) -> Capabilities:
        """Reads source chunks; may fill a ``response_schema`` only when a structured script is set."""
        return Capabilities(reads_chunks=True, extracts_structured=self.structured_script is not None)

    def compose(self, inputs: SynthesisInputs) -> Synthesis:
        facts = inputs.facts
        self.calls.append(
            ("compose", {"source_query": inputs.source_query, "facts": list(facts), "max_tokens": inputs.max_tokens,
                         "chunks": list(inputs.chunks)})
        )  # fmt: skip
        if self.compose_script is None:
            return self._fallback.compose(inputs)
        answer = _resolve(self.compose_script, facts)
        if isinstance(answer, str):
            return Synthesis(markdown=answer, used_ids=[f.memory.id for f in facts])
        return answer  # type: ignore[no-any-return]

    def edit(self, document: StructuredDocument, inputs: SynthesisInputs) -> Synthesis:
        facts = inputs.facts
        self.calls.append(
            ("edit", {"source_query": inputs.source_query, "document": document, "facts": list(facts),
                      "chunks": list(inputs.chunks)})
        )  # fmt: skip
        if self.edit_script is None:
            return self._fallback.edit(document, inputs)
        answer = _resolve(self.edit_script, document, facts)
        if isinstance(answer, list):
            return Synthesis(operations=list(answer), used_ids=[f.memory.id for f in facts])
        return answer  # type: ignore[no-any-return]

    def extract_structured(self, *, content: str, schema: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("extract_structured", {"content": content, "schema": schema}))
        if self.structured_script is None:
            return self._fallback.extract_structured(content=content, schema=schema)
        return _resolve(self.structured_script, content)  # type: ignore[no-any-return]

    def methods_called(self) -> list[str]:
        """Names of the methods called so far, in order."""
        return [name for name, _ in self.calls]


def _resolve(script: Script, *args: Any) -> Any:
    if callable(script) and not isinstance(script, BaseException):
        script = script(*args)
    if isinstance(script, BaseException):
        raise script
    return script


@dataclass
class ScriptedLLM:
    """An :class:`~mindbank.providers.llm.base.LLM` whose replies are scripted (agent loop, LLM synthesis, retain
    extraction), no provider involved::

        llm = ScriptedLLM([tool_reply("recall", query="boat"), tool_reply("done", answer="A boat.")])
        mb = MindBank(store=store, embedder=embedder, llms={"reflect": llm})

    ``script`` is consumed in order; each entry is a ``ChatResult``, an exception to raise, or a callable
    ``(ChatRequest) -> either``. When it runs out, ``default`` (same kinds) answers every further call; without one
    the call fails the test. Every request is kept in ``requests``.
    """

    script: list[Any] = field(default_factory=list)
    default: Any = None
    provider: str = "scripted"
    model: str = "scripted-1"
    requests: list[ChatRequest] = field(default_factory=list)

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
        request = ChatRequest(
            messages=list(messages), tools=list(tools) if tools else None, tool_choice=tool_choice,
            response_schema=response_schema, schema_name=schema_name, temperature=temperature,
            max_tokens=max_tokens, scope=scope,
        )  # fmt: skip
        self.requests.append(request)
        entry = self.script.pop(0) if self.script else self.default
        if entry is None:
            raise AssertionError(f"ScriptedLLM: no scripted reply left for call {len(self.requests)} ({scope})")
        return _resolve(entry, request)  # type: ignore[no-any-return]

    def forced_tools(self) -> list[str | None]:
        """Per request: the tool name it forced, ``"required"`` / ``"auto"`` / None otherwise."""
        out: list[str | None] = []
        for r in self.requests:
            choice = r.tool_choice
            out.append(choice.name if isinstance(choice, ForceTool) else choice)
        return out


def tool_reply(name: str, call_id: str | None = None, *, text: str = "", **arguments: Any) -> ChatResult:
    """A reply calling tool ``name`` with ``arguments`` (10 input / 5 output tokens)."""
    call = ToolCall(id=call_id or f"call_{name}", name=name, arguments=arguments, raw_arguments=json.dumps(arguments))
    return ChatResult(text=text, tool_calls=(call,), usage=TokenUsage(10, 5), model="scripted-1")


def text_reply(text: str) -> ChatResult:
    """A plain-text reply."""
    return ChatResult(text=text, usage=TokenUsage(10, 5), model="scripted-1")


def json_reply(value: Any) -> ChatResult:
    """A JSON reply (``parsed`` set, as a provider does for ``response_schema`` calls)."""
    return ChatResult(text=json.dumps(value), usage=TokenUsage(10, 5), model="scripted-1", parsed=value)


class FakeClock:
    """A settable clock for ``MindBank(clock=...)``: starts now, moves only by :meth:`advance`, and never runs behind
    the real clock (the store stamps memories with real time, so simulated time must not fall behind them)."""

    def __init__(self) -> None:
        self.now = utcnow()

    def __call__(self) -> datetime:
        return max(self.now, utcnow())

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward (from the later of its time and the real time)."""
        self.now = self() + timedelta(seconds=seconds)


__all__ = [
    "FakeClock",
    "Operation",
    "ScriptedLLM",
    "ScriptedSynthesizer",
    "SynthesisError",
    "json_reply",
    "text_reply",
    "tool_reply",
]
