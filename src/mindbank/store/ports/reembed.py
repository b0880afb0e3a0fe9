"""Re-embedding: the staging area of the operation that moves a bank to another embedding model, and its switch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class ReembedCounts:
    """How far a bank's re-embedding is: ``total`` memories (facts and observations), ``staged`` of them with a
    current vector under the target model."""

    total: int
    staged: int


class ReembedStore(Protocol):
    """Staged vectors per memory under a target model, and the one transaction that switches the bank to them.

    Until :meth:`commit_reembed` the bank's vectors and recorded model are untouched: recall reads them as before."""

    def reembed_begin(self, bank_id: str, model: str) -> None: ...
    def reembed_pending(self, bank_id: str, model: str, limit: int, *, after: str = "") -> list[tuple[str, str]]: ...
    def reembed_counts(self, bank_id: str, model: str) -> ReembedCounts: ...
    def reembed_stage(
        self, bank_id: str, model: str, rows: Sequence[tuple[str, str, npt.NDArray[np.float32]]]
    ) -> None: ...
    def commit_reembed(self, bank_id: str, model: str, dimension: int) -> bool: ...
    def reembed_discard(self, bank_id: str) -> None: ...
