"""Retain with the extractive engine: documents → chunks (turns / paragraphs) → facts → embeddings.

Every fact keeps its chunk, document, speaker metadata, tags and time. Facts said by an ``assistant`` speaker are
``experience`` (the agent's own), everything else ``world`` — the reference's rule for fact types.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import Chunk, FactType, NewMemory, RetainItem
from mindbank.domain.repeats import repeat_key
from mindbank.domain.tags import normalize_tags
from mindbank.domain.text import split_chunks, split_facts
from mindbank.providers.embeddings.base import Embedder, embed_texts
from mindbank.store.base import DocumentWrite


def _fact_type(item: RetainItem) -> FactType:
    speaker = (item.metadata.get("speaker") or item.metadata.get("role") or "").strip().lower()
    return "experience" if speaker == "assistant" else "world"


# an LLM fact extractor (engine/retain/llm.py): (item, chunk texts) -> per chunk [(fact, type or None)]
Extractor = Callable[[RetainItem, Sequence[str]], list[list[tuple[str, FactType | None]]]]


def prepare_documents(
    items: Sequence[RetainItem],
    embedder: Embedder,
    *,
    now: datetime,
    extract: Extractor | None = None,
    restate: Collection[int] = (),
) -> list[DocumentWrite]:
    """Split, extract and embed ``items`` (one batched embedder call for all facts).

    ``extract`` replaces the sentence splitter (a fact it types None gets the item's rule). Returns one
    :class:`DocumentWrite` per item; an item without ``document_id`` gets a fresh UUID. Items whose index is in
    ``restate`` (a stored document with the same content) are neither split nor embedded: their write is a
    restatement (``DocumentWrite.restate``).
    """
    drafts: list[tuple[RetainItem, str, list[Chunk], list[tuple[str, str, FactType | None]]]] = []
    texts: list[str] = []
    for position, item in enumerate(items):
        if position in restate and item.document_id is not None:
            drafts.append((item, item.document_id, [], []))
            continue
        document_id = item.document_id or str(uuid.uuid4())
        chunks: list[Chunk] = []
        facts: list[tuple[str, str, FactType | None]] = []
        chunk_texts = split_chunks(item.content)
        found = extract(item, chunk_texts) if extract else [[(f, None) for f in split_facts(t)] for t in chunk_texts]
        for index, chunk_text in enumerate(chunk_texts):
            chunk = Chunk(id=uuid.uuid4().hex, document_id=document_id, index=index, text=chunk_text)
            chunks.append(chunk)
            for fact, kind in found[index]:
                facts.append((chunk.id, fact, kind))
                texts.append(fact)
        drafts.append((item, document_id, chunks, facts))
    vectors = embed_texts(embedder, texts)
    out: list[DocumentWrite] = []
    cursor = 0
    for position, (item, document_id, chunks, facts) in enumerate(drafts):
        memories = []
        for chunk_id, text, kind in facts:
            memories.append(new_memory(item, text, kind, vectors[cursor], document_id, chunk_id, now))
            cursor += 1
        out.append(
            DocumentWrite(item=item, document_id=document_id, chunks=chunks, memories=memories,
                          restate=position in restate and item.document_id is not None)
        )  # fmt: skip
    return out


def new_memory(
    item: RetainItem,
    text: str,
    kind: FactType | None,
    vector: npt.NDArray[np.float32],
    document_id: str,
    chunk_id: str,
    now: datetime,
) -> NewMemory:
    """One fact of ``item`` as a memory to write: the item's tags, context, metadata and time (``now`` is the mention
    time of an item without a timestamp); ``kind`` None takes the item's rule (assistant turns are experience). A
    fact of an item without ``document_id`` carries its repeat key (:mod:`mindbank.domain.repeats`)."""
    fact_type = kind or _fact_type(item)
    tags = normalize_tags(item.tags)
    return NewMemory(
        text=text,
        fact_type=fact_type,
        embedding=vector,
        tags=tags,
        context=item.context,
        metadata=dict(item.metadata),
        document_id=document_id,
        chunk_id=chunk_id,
        occurred_start=item.timestamp,
        occurred_end=item.timestamp,
        mentioned_at=item.timestamp or now,
        repeat_key=None if item.document_id is not None else repeat_key(text, fact_type, tags, item.metadata),
    )
