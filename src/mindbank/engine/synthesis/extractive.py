"""The offline synthesizer: the extractive briefing writer (``compose.py``) and delta editor (``delta.py``) behind
the port."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from mindbank.domain.document import StructuredDocument, count_tokens, render_markdown
from mindbank.domain.records import ScoredMemory
from mindbank.engine.synthesis.compose import compose_briefing
from mindbank.engine.synthesis.delta import plan_delta_operations
from mindbank.engine.synthesis.port import Capabilities, StructuredOutputUnsupported, Synthesis, SynthesisInputs


@lru_cache(maxsize=65536)
def _tokens(text: str) -> int:
    return count_tokens(text)


def _facts_tokens(facts: Sequence[ScoredMemory]) -> int:
    """What the synthesis read, in tokens (cached per text: a whole-scope refresh counts the same facts again)."""
    return sum(_tokens(f.memory.text) for f in facts)


class ExtractiveSynthesizer:
    """The offline engine: a briefing of cited quotes grouped into topics (full); update/repeat/append/evict
    operations (delta).

    It reads its whole scope (``reads_scope``: the pipeline hands it every in-scope fact of the window, bounded,
    with their stored vectors), quotes facts verbatim and never reads source chunks (no ``reads_chunks``), so a
    refresh fetches none for it whatever ``include_chunks`` says; it follows no written guidance (no
    ``reads_directives``: it cannot) and cannot fill a ``response_schema`` (no ``extracts_structured``)."""

    name = "extractive"
    capabilities = Capabilities(reads_scope=True)

    def compose(self, inputs: SynthesisInputs) -> Synthesis:
        """The briefing of ``inputs.facts`` (``compose.py``), within ``inputs.max_tokens``."""
        source_query, facts = inputs.source_query, inputs.facts
        briefing = compose_briefing(
            source_query=source_query, hits=facts, max_tokens=inputs.max_tokens, read=inputs.read
        )
        read_tokens = count_tokens(source_query) + _facts_tokens(facts)
        return Synthesis(
            markdown=briefing.markdown,
            used_ids=briefing.cited,
            input_tokens=read_tokens,
            nothing_relevant=not briefing.markdown,
            left_out=briefing.left_out,
        )

    def edit(self, document: StructuredDocument, inputs: SynthesisInputs) -> Synthesis:
        """The update / repeat / append / evict operations folding ``inputs.facts`` into ``document``
        (``delta.py``)."""
        source_query, facts = inputs.source_query, inputs.facts
        left_out: dict[str, str] = {}
        operations, used = plan_delta_operations(
            document,
            facts,
            max_tokens=inputs.max_tokens,
            read=inputs.read,
            source_query=source_query,
            left_out=left_out,
        )
        # what the extractive editor reads: the new facts and the document (its blocks' quotes, counts, citations)
        read_tokens = count_tokens(source_query) + _facts_tokens(facts) + count_tokens(render_markdown(document))
        return Synthesis(operations=operations, used_ids=used, input_tokens=read_tokens, left_out=left_out)

    def extract_structured(self, *, content: str, schema: dict[str, Any]) -> dict[str, Any]:
        raise StructuredOutputUnsupported(
            "structured_output_failed",
            "the extractive engine cannot fill a response_schema; configure an LLM provider (MINDBANK_LLM_PROVIDER)",
        )
