"""Retain with the extractive engine: documents → chunks (turns / paragraphs) → facts → embeddings.

Every fact keeps its chunk, document, speaker metadata, tags and time. Facts said by an ``assistant`` speaker are
``experience`` (the agent's own), everything else ``world`` — the reference's rule for fact types.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from mindbank.domain.records import Chunk, NewMemory, RetainItem
from mindbank.domain.tags import normalize_tags
from mindbank.domain.text import split_chunks, split_facts
from mindbank.providers.embeddings.base import Embedder
from mindbank.store.base import DocumentWrite


def _fact_type(item: RetainItem) -> str:
    speaker = (item.metadata.get("speaker") or item.metadata.get("role") or "").strip().lower()
    return "experience" if speaker == "assistant" else "world"


def prepare_documents(items: Sequence[RetainItem], embedder: Embedder, *, now: datetime) -> list[DocumentWrite]:
    """Split, extract and embed ``items`` (one batched embedder call for all facts).

    Returns one :class:`DocumentWrite` per item; an item without ``document_id`` gets a fresh UUID.
    """
    drafts: list[tuple[RetainItem, str, list[Chunk], list[tuple[str, str]]]] = []
    texts: list[str] = []
    for item in items:
        document_id = item.document_id or str(uuid.uuid4())
        chunks: list[Chunk] = []
        facts: list[tuple[str, str]] = []
        for index, chunk_text in enumerate(split_chunks(item.content)):
            chunk = Chunk(id=uuid.uuid4().hex, document_id=document_id, index=index, text=chunk_text)
            chunks.append(chunk)
            for fact in split_facts(chunk_text):
                facts.append((chunk.id, fact))
                texts.append(fact)
        drafts.append((item, document_id, chunks, facts))
    vectors = embedder.embed(texts)
    out: list[DocumentWrite] = []
    cursor = 0
    for item, document_id, chunks, facts in drafts:
        when = item.timestamp or now
        memories = []
        for chunk_id, text in facts:
            memories.append(
                NewMemory(
                    text=text,
                    fact_type=_fact_type(item),  # type: ignore[arg-type]
                    embedding=vectors[cursor],
                    tags=normalize_tags(item.tags),
                    context=item.context,
                    metadata=dict(item.metadata),
                    document_id=document_id,
                    chunk_id=chunk_id,
                    occurred_start=item.timestamp,
                    occurred_end=item.timestamp,
                    mentioned_at=when,
                )
            )
            cursor += 1
        out.append(DocumentWrite(item=item, document_id=document_id, chunks=chunks, memories=memories))
    return out
