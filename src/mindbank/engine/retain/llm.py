"""LLM fact extraction at retain: an item's chunks → self-contained facts, when a retain LLM is configured.

The extractive splitter (``domain.text.split_facts``) stays the default and the fallback. The chunks of one item go
to the model in batches of about ``BATCH_TOKENS``; it answers JSON ``{"facts": [{"chunk", "text", "kind"}]}`` where
``chunk`` is the chunk's number in the batch and ``kind`` is ``experience`` for the agent's own actions and
statements, ``world`` for everything else (reference facts §2: only assistant facts are experience).

A batch whose reply is not JSON or does not fit the schema falls back to the splitter for that batch (logged), so
nothing said is ever lost. Transient provider errors propagate: an async retain is retried by the worker, a
synchronous one answers 503.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from mindbank.domain.document import count_tokens
from mindbank.domain.records import FactType, RetainItem
from mindbank.domain.text import split_facts
from mindbank.domain.timeutil import to_iso
from mindbank.engine.synthesis.structured import schema_problems
from mindbank.providers.llm.base import LLM, LLMError, LLMTransientError, system, user

log = logging.getLogger(__name__)
BATCH_TOKENS = 1500
RETAIN_TEMPERATURE = 0.1  # reference: retain 0.1

FACTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "chunk": {"type": "integer"},
                    "text": {"type": "string"},
                    "kind": {"type": "string", "enum": ["world", "experience"]},
                },
                "required": ["chunk", "text"],
            },
        }
    },
    "required": ["facts"],
}

PROMPT = """You extract facts worth remembering from a conversation or document, for an agent's long-term memory.
Each numbered chunk below is one turn or paragraph. For each chunk give zero or more facts: short, self-contained
statements (name the speaker instead of "I"/"you", resolve pronouns, keep dates, places, numbers and names). Skip
greetings and small talk that say nothing. kind is "experience" for what the assistant/agent itself did or said,
"world" for everything else. Reply with JSON {"facts": [{"chunk": <number>, "text": "...", "kind": "world"}]}."""

Extracted = list[tuple[str, FactType | None]]


class LLMFactExtractor:
    """``extract(item, chunks)`` → per chunk, the facts as ``(text, fact type or None)``; None = the item's own
    rule (assistant speaker → experience)."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    def __call__(self, item: RetainItem, chunks: Sequence[str]) -> list[Extracted]:
        out: list[Extracted] = [[] for _ in chunks]
        for batch in _batches(chunks):
            facts = self._extract(item, [chunks[i] for i in batch])
            if facts is None:  # unusable reply: the splitter keeps what was said
                for i in batch:
                    out[i] = [(f, None) for f in split_facts(chunks[i])]
                continue
            for local, text, kind in facts:
                out[batch[local]].append((text, kind))
        return out

    def _extract(self, item: RetainItem, chunks: Sequence[str]) -> list[tuple[int, str, FactType | None]] | None:
        header = {
            "context": item.context,
            "timestamp": to_iso(item.timestamp),
            "speaker": item.metadata.get("speaker") or item.metadata.get("role"),
        }
        numbered = "\n".join(f"[{i}] {text}" for i, text in enumerate(chunks))
        messages = [system(PROMPT), user(f"{json.dumps({k: v for k, v in header.items() if v})}\n\n{numbered}")]
        try:
            reply = self.llm.chat(
                messages,
                response_schema=FACTS_SCHEMA,
                schema_name="facts",
                temperature=RETAIN_TEMPERATURE,
                scope="retain_extract",
            )
        except LLMTransientError:
            raise
        except LLMError as exc:
            log.warning("LLM fact extraction failed (%s); using the sentence splitter for this batch", exc)
            return None
        if reply.parsed is None or schema_problems(reply.parsed, FACTS_SCHEMA):
            log.warning("LLM fact extraction reply did not fit the schema; using the sentence splitter for this batch")
            return None
        facts: list[tuple[int, str, FactType | None]] = []
        for fact in reply.parsed["facts"]:
            text = " ".join(fact["text"].split())
            if text and 0 <= fact["chunk"] < len(chunks):
                facts.append((fact["chunk"], text, "experience" if fact.get("kind") == "experience" else None))
        return facts


def _batches(chunks: Sequence[str]) -> list[list[int]]:
    """Consecutive chunk indexes grouped to about ``BATCH_TOKENS`` each (a longer chunk goes alone)."""
    batches: list[list[int]] = []
    size = 0
    for i, text in enumerate(chunks):
        cost = count_tokens(text)
        if batches and size + cost <= BATCH_TOKENS:
            batches[-1].append(i)
            size += cost
        else:
            batches.append([i])
            size = cost
    return batches
