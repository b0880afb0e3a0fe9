"""The bundled MiniLM embeds queries and bulk batches on separate onnxruntime sessions (one intra-op thread for a
query, one per core for a retain's facts); a text must get the same vector whichever path embeds it, or recall
would rank a query against memories embedded by a slightly different computation."""

from __future__ import annotations

import numpy as np

from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder

TEXTS = [
    "Ada repaired the old piano last weekend (note 3)",
    "What did Bo do with a red bicycle on Monday?",
    "Cleo planted tomato seedlings in March",
    "Dev sold a vintage camera after work",
    "Eli found a wool scarf during the storm",
    "Fay cooked lemon cake on her birthday",
    "Gus borrowed a sailing boat before the trip",
    "Hana visited the garden shed this morning",
    "Ivo lost a mountain map yesterday",
    "a much longer memory about the kitchen table, " * 12,
]


def test_a_text_gets_the_same_vector_alone_and_in_a_bulk_batch() -> None:
    embedder = MiniLMEmbedder(threads=2, query_threads=1)
    bulk = embedder.embed(TEXTS)  # more than the interactive limit: the multi-threaded bulk session
    alone = np.stack([embedder.embed([text])[0] for text in TEXTS])  # one text each: the query session
    assert bulk.shape == (len(TEXTS), MiniLMEmbedder.dimension)
    np.testing.assert_array_equal(alone, bulk)


def test_a_small_batch_takes_the_query_path_and_keeps_input_order() -> None:
    embedder = MiniLMEmbedder(threads=2, query_threads=1)
    few = TEXTS[:3][::-1]
    together = embedder.embed(few)
    np.testing.assert_array_equal(together, np.stack([embedder.embed([text])[0] for text in few]))
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert not np.array_equal(together[0], together[1])
