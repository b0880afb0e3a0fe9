"""A bounded LRU of recent query vectors, shared by the embedders.

Agents repeat recall queries and a mental model's refreshes re-embed its source query, so a single short text is
served from memory when it repeats. The cache belongs to one embedder instance, hence to one model: a vector is never
served for a text embedded by another model.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

# 4,096 entries of 384 floats are 6 MiB; of 3,072 floats (the largest common models) 48 MiB
CACHE_ENTRIES = 4096
CACHE_MAX_CHARS = 1000  # longer texts are documents, not queries: not worth keeping


class QueryCache:
    """Thread-safe LRU mapping a text to its vector; ``get_or_embed(text, embed_one)`` computes a miss."""

    def __init__(self, entries: int = CACHE_ENTRIES) -> None:
        self._entries = entries
        self._recent: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def cacheable(texts: Sequence[str]) -> bool:
        """Whether a call embeds one short text (a query) that the cache should serve."""
        return len(texts) == 1 and len(texts[0]) <= CACHE_MAX_CHARS

    def get_or_embed(self, text: str, embed_one: Callable[[str], npt.NDArray[np.float32]]) -> npt.NDArray[np.float32]:
        """The cached vector of ``text``, or ``embed_one(text)`` kept for next time."""
        with self._lock:
            vector = self._recent.get(text)
            if vector is not None:
                self._recent.move_to_end(text)
                return vector
        vector = embed_one(text)
        with self._lock:
            self._recent[text] = vector
            if len(self._recent) > self._entries:
                self._recent.popitem(last=False)
        return vector
