"""The Embedder port: text in, L2-normalised float32 vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors so that a dot product is a cosine similarity.

    ``embed(texts)`` returns a ``float32`` array of shape ``(len(texts), dimension)``; an empty input gives
    shape ``(0, dimension)``.
    """

    dimension: int
    name: str

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


def embed_texts(embedder: Embedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """``embedder.embed(texts)``, shape ``(len(texts), dimension)``; no texts gives an empty ``(0, dimension)``
    array without calling the embedder (a remote one is never asked to embed nothing)."""
    if not texts:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    return embedder.embed(texts)
