"""The ``openai`` embedding provider: any OpenAI-compatible ``POST {base_url}/embeddings`` through the official SDK.

OpenAI itself, Ollama (``http://localhost:11434/v1``), llama.cpp's server, vLLM and Text Embeddings Inference all
speak it. Texts go in batches of ``batch_size``; the SDK retries a transient failure (408/409/429, 5xx, timeouts,
connection errors) ``max_retries`` times with exponential backoff and honours ``Retry-After``; every request has a
``timeout``. Vectors are L2-normalised here (not every server normalises), so a dot product stays a cosine.
When no dimension is configured the first call (a probe at construction) reads it from the server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import openai

from mindbank.errors import EmbeddingProviderError, EmbeddingUnavailableError
from mindbank.providers.embeddings.cache import QueryCache
from mindbank.providers.openai_key import NO_KEY, openai_key

_PROBE = "dimension probe"


class OpenAIEmbedder:
    """Embeds through ``openai.OpenAI(...).embeddings.create``. Thread-safe (the SDK client is).

    ``name`` is the model name, the identity a bank's vectors are recorded under; ``dimension`` is the vector width
    (configured, else probed). Raises ``ValueError`` at construction without a key for the public endpoint, and
    :class:`~mindbank.errors.EmbeddingProviderError` when the probe fails or a configured dimension disagrees with
    the server's vectors.
    """

    provider = "openai"

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        batch_size: int = 64,
        dimension: int | None = None,
        send_dimensions: bool = False,
    ) -> None:
        key = openai_key(api_key, base_url, setting="EMBEDDING")
        if batch_size < 1:
            raise ValueError(f"MINDBANK_EMBEDDING_BATCH_SIZE must be at least 1, got {batch_size}")
        self.name = model
        self.base_url = base_url
        self._key = key
        self._batch_size = batch_size
        # OpenAI's text-embedding-3 models shorten their vectors when asked; other servers may refuse the field
        self._dimensions_param = dimension if send_dimensions else None
        self._client = openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=max_retries)
        self._recent = QueryCache()
        self.dimension = 0  # unknown until the probe: its reply is checked against the configured width below
        probed = self._request([_PROBE]).shape[1]
        if dimension and probed != dimension:
            raise EmbeddingProviderError(
                f"embedding model {model!r} returns {probed}-dimension vectors, MINDBANK_EMBEDDING_DIMENSION says "
                f"{dimension}"
            )
        self.dimension = probed

    def __repr__(self) -> str:  # never the key
        return f"OpenAIEmbedder(model={self.name!r}, base_url={self.base_url!r}, dimension={self.dimension})"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``: ``(len(texts), dimension)`` float32 unit vectors, in input order.

        Raises :class:`~mindbank.errors.EmbeddingUnavailableError` (retry later: HTTP 503) when the server stays
        unreachable, times out or keeps answering 429/5xx, and :class:`~mindbank.errors.EmbeddingProviderError`
        (HTTP 502) when it refuses the request or answers with something that is not one vector per text."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        if QueryCache.cacheable(texts):
            out[0] = self._recent.get_or_embed(texts[0], lambda text: self._request([text])[0])
            return out
        for start in range(0, len(texts), self._batch_size):
            out[start : start + self._batch_size] = self._request(list(texts[start : start + self._batch_size]))
        return out

    def _request(self, batch: list[str]) -> npt.NDArray[np.float32]:
        # an empty string is refused by OpenAI ("input cannot be empty"); a space embeds as nearly nothing
        inputs = [text if text.strip() else " " for text in batch]
        kwargs: dict[str, Any] = {"model": self.name, "input": inputs, "encoding_format": "float"}
        if self._dimensions_param:
            kwargs["dimensions"] = self._dimensions_param
        try:
            response = self._client.embeddings.create(**kwargs)
        except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as exc:
            raise EmbeddingUnavailableError(self._message(exc)) from None
        except openai.APIStatusError as exc:
            if exc.status_code in (408, 409) or exc.status_code >= 500:
                raise EmbeddingUnavailableError(self._message(exc)) from None
            raise EmbeddingProviderError(self._message(exc)) from None
        except openai.OpenAIError as exc:  # a body that is not an embeddings list
            raise EmbeddingProviderError(self._message(exc)) from None
        return self._vectors(response, len(inputs))

    def _vectors(self, response: Any, count: int) -> npt.NDArray[np.float32]:
        data = sorted(getattr(response, "data", None) or [], key=lambda item: item.index)
        if len(data) != count:
            raise EmbeddingProviderError(f"embedding server returned {len(data)} vectors for {count} texts")
        try:
            matrix = np.asarray([item.embedding for item in data], dtype=np.float32)
        except (TypeError, ValueError):
            matrix = np.zeros((0, 0, 0), np.float32)  # ragged: lists of different lengths or depths
        if matrix.ndim != 2:
            # llama.cpp without a pooling type answers one vector per token: a list of lists per text
            raise EmbeddingProviderError(
                f"embedding server did not return one flat vector per text for model {self.name!r} (a server "
                "without pooling returns one vector per token: set its pooling type to mean)"
            )
        if self.dimension and matrix.shape[1] != self.dimension:
            width = matrix.shape[1]
            raise EmbeddingProviderError(
                f"embedding model {self.name!r} returned {width}-dimension vectors, expected {self.dimension}"
            )
        if not np.isfinite(matrix).all():
            raise EmbeddingProviderError(f"embedding model {self.name!r} returned a non-finite value")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = (matrix / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit

    def _message(self, exc: Exception) -> str:
        text = f"embedding provider ({self.name} at {self.base_url or 'api.openai.com'}): {exc}"
        return text.replace(self._key, "***") if self._key != NO_KEY else text
