"""Recall's reads: vector, keyword and time-window searches over a scope, the memories said next to a hit, and the
scope's newest write."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import MemoryUnit
from mindbank.domain.scope import MemoryFilter


class RecallStore(Protocol):
    """Searches return ``(memory id, score)`` pairs, best first (higher is better); ``k`` caps the count."""

    def vector_search(
        self, bank_id: str, query: npt.NDArray[np.float32], k: int, flt: MemoryFilter
    ) -> list[tuple[str, float]]: ...
    def keyword_search(
        self, bank_id: str, terms: Sequence[str], k: int, flt: MemoryFilter
    ) -> list[tuple[str, float]]: ...
    def memories_in_window(
        self, bank_id: str, start: datetime, end: datetime, k: int, flt: MemoryFilter
    ) -> list[str]: ...
    def memory_neighbours(
        self, bank_id: str, anchors: Sequence[tuple[str, datetime]], window_s: float, flt: MemoryFilter
    ) -> list[MemoryUnit]: ...
    def scope_watermark(self, bank_id: str, flt: MemoryFilter) -> datetime | None: ...
