"""Test seams shipped with mindbank: a scripted synthesizer that answers whatever a test tells it to.

Use it to drive the refresh pipeline's failure paths (provider errors, empty answers, rejected edits, structured
output) without a model::

    synth = ScriptedSynthesizer(compose_script=SynthesisError("no_answer", "provider timed out"))
    mb = MindBank.open(settings, synthesizer=synth)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mindbank.domain.document import Operation, StructuredDocument
from mindbank.domain.records import ScoredMemory
from mindbank.engine.synthesis import ExtractiveSynthesizer, Synthesis, SynthesisError

Script = Any  # a value, an exception to raise, or a callable computing either from the call's arguments


@dataclass
class ScriptedSynthesizer:
    """A :class:`~mindbank.engine.synthesis.Synthesizer` whose answers are scripted.

    ``compose_script``: markdown ``str`` | ``Synthesis`` | exception | callable(facts) -> one of those;
    None = extractive.
    ``edit_script``: ``list[Operation]`` | ``Synthesis`` | exception | callable(document, facts) -> one of those;
    None = extractive. ``structured_script``: dict | exception | None (= cannot, like the extractive engine).
    Every call is recorded in ``calls`` as ``(method, kwargs)``.
    """

    compose_script: Script = None
    edit_script: Script = None
    structured_script: Script = None
    name: str = "scripted"
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _fallback: ExtractiveSynthesizer = field(default_factory=ExtractiveSynthesizer)

    def compose(self, *, name: str, source_query: str, facts: Sequence[ScoredMemory], max_tokens: int) -> Synthesis:
        self.calls.append(("compose", {"source_query": source_query, "facts": list(facts), "max_tokens": max_tokens}))
        if self.compose_script is None:
            return self._fallback.compose(name=name, source_query=source_query, facts=facts, max_tokens=max_tokens)
        answer = _resolve(self.compose_script, facts)
        if isinstance(answer, str):
            return Synthesis(markdown=answer, used_ids=[f.memory.id for f in facts])
        return answer  # type: ignore[no-any-return]

    def edit(
        self, *, source_query: str, document: StructuredDocument, facts: Sequence[ScoredMemory], max_tokens: int
    ) -> Synthesis:
        self.calls.append(("edit", {"source_query": source_query, "document": document, "facts": list(facts)}))
        if self.edit_script is None:
            return self._fallback.edit(source_query=source_query, document=document, facts=facts, max_tokens=max_tokens)
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


__all__ = ["Operation", "ScriptedSynthesizer", "SynthesisError"]
