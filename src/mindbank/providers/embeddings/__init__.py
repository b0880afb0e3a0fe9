"""Embedder port and its implementations."""

from mindbank.providers.embeddings.base import Embedder

__all__ = ["Embedder"]
