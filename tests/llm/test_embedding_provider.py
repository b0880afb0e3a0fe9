"""The openai embedding provider through the real OpenAI SDK against a fake ``/v1/embeddings`` on 127.0.0.1:
batching and order, normalisation, the probed dimension, retries of 429/5xx with backoff, timeouts, refusals (the key
never leaked), per-token replies from a server without pooling, and the settings that build it."""

from __future__ import annotations

import numpy as np
import pytest
from fake_servers import Reply, Seen, embeddings_reply, error_reply, hashed_embeddings, scripted, serving

from mindbank.config import Settings
from mindbank.errors import EmbeddingProviderError, EmbeddingUnavailableError, TransientError
from mindbank.providers.embeddings.factory import build_embedder
from mindbank.providers.embeddings.openai_compatible import OpenAIEmbedder

KEY = "sk-embed-secret-4242"
FAST_RETRY = {"retry-after-ms": "5"}  # the SDK honours it, so retry tests do not sleep for its default backoff


def embedder_for(url: str, **kwargs: object) -> OpenAIEmbedder:
    options: dict[str, object] = {"model": "fake-embed", "api_key": KEY, "base_url": url + "/v1", "timeout": 5.0}
    return OpenAIEmbedder(**{**options, **kwargs})  # type: ignore[arg-type]


def test_batches_keep_input_order_and_vectors_are_unit_length() -> None:
    with serving(hashed_embeddings(8)) as server:
        emb = embedder_for(server.url, batch_size=3)
        texts = [f"text number {i} about boats" for i in range(7)]
        out = emb.embed(texts)
        again = emb.embed(["text number 2 about boats", "x"])[0]
    assert emb.dimension == 8 and emb.name == "fake-embed"
    assert out.shape == (7, 8) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0)
    batches = [s.body["input"] for s in server.seen[1:4]]  # the first request is the start-up probe
    assert batches == [texts[0:3], texts[3:6], texts[6:7]]
    assert all(s.path == "/v1/embeddings" and s.body["model"] == "fake-embed" for s in server.seen)
    assert all(s.headers["authorization"] == f"Bearer {KEY}" for s in server.seen)
    assert np.allclose(out[2], again)


def test_reply_order_is_read_from_each_items_index() -> None:
    def shuffled(seen: Seen) -> Reply:
        n = len(seen.body["input"])
        return embeddings_reply([[float(i + 1), 1.0] for i in range(n)], shuffle=True)

    with serving(shuffled) as server:
        out = embedder_for(server.url).embed(["a", "b", "c"])
    expected = np.array([[1, 1], [2, 1], [3, 1]], dtype=np.float32)
    assert np.allclose(out, expected / np.linalg.norm(expected, axis=1, keepdims=True))


def test_a_repeated_query_is_served_from_the_cache() -> None:
    with serving(hashed_embeddings(4)) as server:
        emb = embedder_for(server.url)
        first = emb.embed(["where is the boat"])
        again = emb.embed(["where is the boat"])
    assert np.array_equal(first, again)
    assert len(server.seen) == 2  # the probe and one query


def test_empty_input_is_sent_as_a_space_and_no_texts_is_no_request() -> None:
    with serving(hashed_embeddings(4)) as server:
        emb = embedder_for(server.url)
        assert emb.embed([]).shape == (0, 4)
        emb.embed(["", "words"])
    assert server.seen[-1].body["input"] == [" ", "words"] and len(server.seen) == 2


def test_429_and_503_are_retried_by_the_sdk_then_succeed() -> None:
    ok = hashed_embeddings(4)
    responder = scripted(
        ok,  # the probe
        error_reply(429, "slow down", **FAST_RETRY),
        error_reply(503, "busy", **FAST_RETRY),
        ok,
    )
    with serving(responder) as server:
        out = embedder_for(server.url, max_retries=3).embed(["one", "two"])
    assert out.shape == (2, 4) and len(server.seen) == 4


def test_a_server_still_failing_after_the_retries_is_transient() -> None:
    with serving(scripted(hashed_embeddings(4), error_reply(500, "down", **FAST_RETRY))) as server:
        emb = embedder_for(server.url, max_retries=2)
        with pytest.raises(EmbeddingUnavailableError) as caught:
            emb.embed(["one", "two"])
    assert isinstance(caught.value, TransientError)
    assert len(server.seen) == 1 + 3  # the probe, then one try and two retries
    assert "fake-embed" in str(caught.value)


def test_a_timeout_is_transient() -> None:
    slow = Reply(embeddings_reply([[1.0, 0.0]]).body, delay=1.0)
    with serving(scripted(embeddings_reply([[1.0, 0.0]]), slow)) as server:
        emb = embedder_for(server.url, timeout=0.2, max_retries=0)
        with pytest.raises(EmbeddingUnavailableError):
            emb.embed(["one", "two"])


def test_a_refusal_is_permanent_and_never_shows_the_key() -> None:
    with serving(scripted(hashed_embeddings(4), error_reply(401, f"bad key {KEY}"))) as server:
        emb = embedder_for(server.url, max_retries=3)
        with pytest.raises(EmbeddingProviderError) as caught:
            emb.embed(["one", "two"])
    assert not isinstance(caught.value, TransientError)
    assert KEY not in str(caught.value) and KEY not in repr(emb)
    assert len(server.seen) == 2  # a 401 is not retried


def test_per_token_vectors_from_a_server_without_pooling_are_refused_clearly() -> None:
    def per_token(seen: Seen) -> Reply:
        n = len(seen.body["input"])
        return embeddings_reply([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]][: i + 1] for i in range(n)])  # type: ignore[misc]

    with serving(per_token) as server, pytest.raises(EmbeddingProviderError, match="pooling"):
        embedder_for(server.url).embed(["a", "bb"])


def test_a_wrong_count_or_width_is_refused() -> None:
    one = embeddings_reply([[1.0, 0.0]])
    with serving(scripted(one, one)) as server, pytest.raises(EmbeddingProviderError, match="1 vectors for 2 texts"):
        embedder_for(server.url).embed(["a", "b"])
    wide = embeddings_reply([[1.0, 0.0, 0.0]])
    with serving(scripted(one, wide)) as server, pytest.raises(EmbeddingProviderError, match="3-dimension vectors"):
        embedder_for(server.url).embed(["a"])


def test_a_configured_dimension_is_checked_against_the_server_and_can_be_sent() -> None:
    with serving(hashed_embeddings(8)) as server:
        with pytest.raises(EmbeddingProviderError, match="returns 8-dimension vectors, MINDBANK_EMBEDDING_DIMENSION"):
            embedder_for(server.url, dimension=16)
        assert "dimensions" not in server.seen[-1].body
        emb = embedder_for(server.url, dimension=8, send_dimensions=True)
    assert emb.dimension == 8 and server.seen[-1].body["dimensions"] == 8


def test_settings_build_the_provider_and_refuse_bad_ones() -> None:
    with serving(hashed_embeddings(6)) as server:
        settings = Settings.from_env(
            {
                "MINDBANK_EMBEDDING_PROVIDER": "openai",
                "MINDBANK_EMBEDDING_MODEL": "nomic-embed-text",
                "MINDBANK_EMBEDDING_BASE_URL": server.url + "/v1",
                "MINDBANK_EMBEDDING_BATCH_SIZE": "2",
            }
        )
        emb = build_embedder(settings)
        emb.embed(["a", "b", "c"])
    assert isinstance(emb, OpenAIEmbedder) and emb.dimension == 6 and emb.name == "nomic-embed-text"
    assert server.seen[0].headers["authorization"] == "Bearer not-needed"  # a local server needs no key
    assert [len(s.body["input"]) for s in server.seen[1:]] == [2, 1]
    with pytest.raises(ValueError, match="MINDBANK_EMBEDDING_PROVIDER: unknown provider 'bert'"):
        build_embedder(Settings(embedding_provider="bert"))
    with pytest.raises(ValueError, match="MINDBANK_EMBEDDING_BATCH_SIZE"):
        build_embedder(Settings(embedding_provider="openai", embedding_base_url=server.url, embedding_batch_size=0))


def test_the_public_endpoint_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="MINDBANK_EMBEDDING_API_KEY"):
        build_embedder(Settings(embedding_provider="openai"))


def test_an_unreachable_server_fails_at_start_up() -> None:
    with serving(hashed_embeddings(4)) as server:
        url = server.url
    with pytest.raises(EmbeddingUnavailableError, match="fake-embed"):
        embedder_for(url, max_retries=0)
