"""The chunks a refresh reads beside its facts (trigger ``include_chunks`` / ``recall_chunks_max_tokens``).

Reference facts §4.3: a refresh's recall returns, with ``include_chunks`` on (the default), the raw chunks its
facts were extracted from, under their own token budget (``recall_chunks_max_tokens``, default 1000). A chunk
tells an engine what the fact alone does not: the rest of the turn a long message was split from, or the words
an LLM-extracted fact paraphrased. Chunks are taken in the rank of their best fact, and a chunk whose text is
exactly one retrieved fact's text is left out, since it would only repeat that fact.
"""

from __future__ import annotations

from collections.abc import Sequence

from mindbank.domain.document import count_tokens
from mindbank.domain.records import ScoredMemory, SourceChunk
from mindbank.store.base import Store


def _normal(text: str) -> str:
    return " ".join(text.split())


def select_chunks(store: Store, bank_id: str, hits: Sequence[ScoredMemory], max_tokens: int) -> list[SourceChunk]:
    """The source chunks of ``hits`` (best first), within ``max_tokens`` (chunk text tokens).

    Observations (no chunk) and chunks identical to a retrieved fact are skipped, and so is a chunk too large
    for what is left of the budget (a smaller one further down may still fit). One store query."""
    if not hits or max_tokens <= 0:
        return []
    ids = [h.memory.id for h in hits]
    sources = {s.memory_id: s for s in store.memory_sources(bank_id, ids, documents=False)}
    fact_texts = {_normal(h.memory.text) for h in hits}
    order: list[str] = []
    texts: dict[str, str] = {}
    backing: dict[str, list[str]] = {}
    for hit in hits:
        source = sources.get(hit.memory.id)
        if source is None or source.chunk_id is None or not (source.chunk_text or "").strip():
            continue
        if source.chunk_id not in texts:
            order.append(source.chunk_id)
            texts[source.chunk_id] = source.chunk_text or ""
        backing.setdefault(source.chunk_id, []).append(hit.memory.id)
    chunks: list[SourceChunk] = []
    used = 0
    for chunk_id in order:
        text = texts[chunk_id]
        if _normal(text) in fact_texts:
            continue
        cost = count_tokens(text)
        if used + cost > max_tokens:
            continue
        used += cost
        chunks.append(SourceChunk(chunk_id=chunk_id, text=text, memory_ids=tuple(backing[chunk_id])))
    return chunks
