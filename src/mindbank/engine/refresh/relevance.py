"""The relevance gate (beyond the reference): an automatic refresh whose new memories are all unrelated to the
model runs no synthesis.

Why: the reference spends tokens on refreshes that change nothing. A new
memory's score is its cosine similarity to the source query (speaker prefixes stripped: names dominate the
embeddings of short turns) plus the share of the query's content words it contains; it is related when the score
reaches the threshold (``MINDBANK_REFRESH_RELEVANCE_THRESHOLD``, per bank ``refresh_relevance_threshold``).

Both the signal and the default threshold are calibrated on a labelled LoCoMo set (``python -m bench
gate-calibration``, docs/benchmarks.md): the previous signal also took the best similarity to any fact the document
cites, and that maximum over dozens of anchors let unrelated memories through (a tax form scored 0.176 for a
cooking model through one cited fact) while gating fewer of them at the same loss of relevant ones. Manual
refreshes are never gated; the refresh pipeline also skips the gate when a cited memory was edited or left the
scope, or when facts are carried over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from mindbank.domain.records import MentalModel
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.text import keyword_terms, strip_speaker
from mindbank.providers.embeddings.base import Embedder
from mindbank.store.base import Store

BODY_CACHE_SIZE = 50_000  # texts; about 75 MB of float32 vectors at most
NEW_MEMORIES_READ = 64  # the gate looks at this many of the memories written since the watermark
_ENDINGS = ("ing", "ed", "es", "s")


def content_words(text: str) -> set[str]:
    """The content words of ``text`` (keyword terms, stop words out) with simple endings folded, so "cooking" and
    "cooked" meet "cook"."""
    out = set()
    for word in keyword_terms(text):
        for ending in _ENDINGS:
            if word.endswith(ending) and len(word) - len(ending) >= 3:
                word = word[: -len(ending)]
                break
        out.add(word)
    return out


class RelevanceGate:
    """Decides whether the memories written since a model's watermark are related to it; caches embeddings."""

    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        # keyed by (model name, text): a vector is only ever served for the model that made it
        self._vectors: dict[tuple[str, str], np.ndarray] = {}

    def irrelevant(self, model: MentalModel, window: MemoryFilter, threshold: float) -> bool:
        """True when no memory of ``window`` written since the model's watermark (at most 64 read) is related to
        the model: every :meth:`relevance` score is below ``threshold``."""
        since = model.last_memory_seen_at or model.last_refreshed_at
        new, _ = self.store.list_memories(
            model.bank_id, replace(window, updated_after=since), query=None, limit=NEW_MEMORIES_READ, offset=0
        )
        return max(self.relevance(model.source_query, [m.text for m in new]), default=0.0) < threshold

    def relevance(self, source_query: str, texts: Sequence[str]) -> list[float]:
        """Each text's gate score: cosine similarity to ``source_query`` (in [-1, 1]) plus the share of the query's
        content words (stop words out, simple plural/tense endings folded) the text contains (in [0, 1])."""
        if not texts:
            return []
        vectors = self._body_vectors([source_query, *texts])
        similarity = vectors[1:] @ vectors[0]
        wanted = content_words(source_query)
        share = [len(wanted & content_words(strip_speaker(t))) / len(wanted) if wanted else 0.0 for t in texts]
        return [float(s) + w for s, w in zip(similarity, share, strict=True)]

    def _body_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of texts with speaker prefixes stripped, cached: cited facts recur in every refresh."""
        name = self.embedder.name
        bodies = [strip_speaker(t) for t in texts]
        missing = list(dict.fromkeys(b for b in bodies if (name, b) not in self._vectors))
        if missing:
            if len(self._vectors) > BODY_CACHE_SIZE:
                self._vectors.clear()
            self._vectors.update(zip([(name, b) for b in missing], self.embedder.embed(missing), strict=True))
        return np.stack([self._vectors[(name, b)] for b in bodies])
