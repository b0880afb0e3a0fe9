"""The offline synthesizer: the extractive composer and editor (``synthesis/compose.py``) behind the port."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mindbank.domain.document import StructuredDocument, count_tokens
from mindbank.domain.records import ScoredMemory
from mindbank.engine.synthesis.compose import compose_markdown, document_outline, plan_delta_operations
from mindbank.engine.synthesis.port import StructuredOutputUnsupported, Synthesis


def _facts_tokens(facts: Sequence[ScoredMemory]) -> int:
    return sum(count_tokens(f.memory.text) for f in facts)


class ExtractiveSynthesizer:
    """The offline engine: cited bullets grouped by theme (full); append/add/evict operations (delta).

    It quotes facts verbatim and never reads source chunks (``reads_chunks`` is not set), so a refresh fetches
    none for it whatever ``include_chunks`` says; it cannot fill a ``response_schema`` (``extracts_structured``)."""

    extracts_structured = False

    name = "extractive"

    def compose(self, *, name: str, source_query: str, facts: Sequence[ScoredMemory], max_tokens: int) -> Synthesis:
        markdown, used = compose_markdown(source_query=source_query, hits=facts, max_tokens=max_tokens)
        read = count_tokens(source_query) + _facts_tokens(facts)
        return Synthesis(markdown=markdown, used_ids=used, input_tokens=read, nothing_relevant=not markdown)

    def edit(
        self, *, source_query: str, document: StructuredDocument, facts: Sequence[ScoredMemory], max_tokens: int
    ) -> Synthesis:
        operations, used = plan_delta_operations(document, facts, max_tokens=max_tokens)
        # what the extractive editor reads: the new facts and the document's outline (headings, ids, citations)
        read = count_tokens(source_query) + _facts_tokens(facts) + count_tokens(document_outline(document))
        return Synthesis(operations=operations, used_ids=used, input_tokens=read)

    def extract_structured(self, *, content: str, schema: dict[str, Any]) -> dict[str, Any]:
        raise StructuredOutputUnsupported(
            "structured_output_failed",
            "the extractive engine cannot fill a response_schema; configure an LLM provider (MINDBANK_LLM_PROVIDER)",
        )
