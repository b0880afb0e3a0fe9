"""The relevance gate (beyond the reference): an automatic refresh whose new memories are all unrelated to the
model runs no synthesis.

Issue 5 / DESIGN.md "Relevance-gated refresh": the reference spends tokens on refreshes that change nothing. A new
memory is related when its cosine similarity (speaker prefixes stripped: names dominate the embeddings of short
turns) to the source query, or to a fact the document already rests on, reaches the threshold
(``MINDBANK_REFRESH_RELEVANCE_THRESHOLD``, per bank ``refresh_relevance_threshold``). Manual refreshes are never
gated; the refresh pipeline also skips the gate when a cited memory was edited or left the scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from mindbank.domain.records import MentalModel
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.text import strip_speaker
from mindbank.providers.embeddings.base import Embedder
from mindbank.store.base import Store

BODY_CACHE_SIZE = 50_000  # texts; about 75 MB of float32 vectors at most
NEW_MEMORIES_READ = 64  # the gate looks at this many of the memories written since the watermark
CITED_ANCHORS = 64


class RelevanceGate:
    """Decides whether the memories written since a model's watermark are related to it; caches embeddings."""

    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._vectors: dict[str, np.ndarray] = {}

    def irrelevant(self, model: MentalModel, window: MemoryFilter, threshold: float, cited: Sequence[str]) -> bool:
        """True when no memory of ``window`` written since the model's watermark (at most 64 read) is related to
        the model (see :meth:`relevance`); ``threshold`` is a cosine in [-1, 1], ``cited`` the texts of the facts
        the document rests on."""
        since = model.last_memory_seen_at or model.last_refreshed_at
        new, _ = self.store.list_memories(
            model.bank_id, replace(window, updated_after=since), query=None, limit=NEW_MEMORIES_READ, offset=0
        )
        return max(self.relevance(model.source_query, cited, [m.text for m in new]), default=0.0) < threshold

    def relevance(self, source_query: str, cited: Sequence[str], texts: Sequence[str]) -> list[float]:
        """Each text's best cosine similarity to the source query or to one of the ``cited`` fact texts."""
        if not texts:
            return []
        anchors = [source_query, *cited[:CITED_ANCHORS]]
        vectors = self._body_vectors([*anchors, *texts])
        similarity = vectors[len(anchors) :] @ vectors[: len(anchors)].T
        return [float(x) for x in similarity.max(axis=1)]

    def _body_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of texts with speaker prefixes stripped, cached: cited facts recur in every refresh."""
        bodies = [strip_speaker(t) for t in texts]
        missing = list(dict.fromkeys(b for b in bodies if b not in self._vectors))
        if missing:
            if len(self._vectors) > BODY_CACHE_SIZE:
                self._vectors.clear()
            self._vectors.update(zip(missing, self.embedder.embed(missing), strict=True))
        return np.stack([self._vectors[b] for b in bodies])
