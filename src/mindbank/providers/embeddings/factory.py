"""Build the server's embedder from settings (``MINDBANK_EMBEDDING_*``, docs/configuration.md "Embeddings")."""

from __future__ import annotations

from mindbank.config import EMBEDDING_PROVIDERS, Settings
from mindbank.providers.embeddings.base import Embedder

DEFAULT_OPENAI_MODEL = "text-embedding-3-small"


def build_embedder(settings: Settings) -> Embedder:
    """The embedder ``settings`` configure: the bundled MiniLM (``local``, the default) or an OpenAI-compatible
    server (``openai``). Raises ``ValueError`` naming the variable for an unknown provider or missing credentials,
    and :class:`~mindbank.errors.EmbeddingProviderError` when the server cannot be reached at start-up."""
    provider = (settings.embedding_provider or "local").strip().lower()
    if provider not in EMBEDDING_PROVIDERS:
        raise ValueError(
            f"MINDBANK_EMBEDDING_PROVIDER: unknown provider {provider!r} (expected {', '.join(EMBEDDING_PROVIDERS)})"
        )
    if provider == "openai":
        from mindbank.providers.embeddings.openai_compatible import OpenAIEmbedder

        return OpenAIEmbedder(
            model=(settings.embedding_model or "").strip() or DEFAULT_OPENAI_MODEL,
            api_key=settings.embedding_api_key,
            base_url=(settings.embedding_base_url or "").strip() or None,
            timeout=settings.embedding_timeout,
            max_retries=settings.embedding_max_retries,
            batch_size=settings.embedding_batch_size,
            dimension=settings.embedding_dimension,
            send_dimensions=settings.embedding_send_dimension,
        )
    from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder

    return MiniLMEmbedder()


def build_previous_embedder(settings: Settings, name: str, dimension: int) -> Embedder | None:
    """An embedder for ``name`` (``dimension`` wide), a bank's model that is not the configured one: the bundled
    MiniLM (always at hand) or ``MINDBANK_EMBEDDING_PREVIOUS_MODEL`` on the configured OpenAI-compatible server
    (the model a re-embedding moves banks away from). None when this server cannot make ``name``'s vectors. Raises
    :class:`~mindbank.errors.EmbeddingProviderError` when the previous model's server cannot be reached."""
    from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder

    if name == MiniLMEmbedder.name and dimension == MiniLMEmbedder.dimension:
        return MiniLMEmbedder()
    if name != (settings.embedding_previous_model or "").strip():
        return None
    from mindbank.providers.embeddings.openai_compatible import OpenAIEmbedder

    return OpenAIEmbedder(
        model=name,
        api_key=settings.embedding_api_key,
        base_url=(settings.embedding_base_url or "").strip() or None,
        timeout=settings.embedding_timeout,
        max_retries=settings.embedding_max_retries,
        batch_size=settings.embedding_batch_size,
        dimension=dimension,
    )
