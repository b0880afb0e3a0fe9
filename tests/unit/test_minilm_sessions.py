"""The bundled MiniLM embeds on two onnxruntime sessions (one intra-op thread per core for a retain's facts, and
for a query when the cores are idle; one thread for a query otherwise); a text must get the same vector whichever
path embeds it, or recall would rank a query against memories embedded by a slightly different computation."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder, core_to_spare

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


def test_a_text_gets_the_same_vector_alone_and_in_a_bulk_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = MiniLMEmbedder(threads=2, query_threads=1)
    bulk = embedder.embed(TEXTS)  # more than the interactive limit: the multi-threaded bulk session
    for idle in (True, False):  # an idle machine: the bulk session; a busy one: the single-threaded session
        monkeypatch.setattr(os, "getloadavg", lambda idle=idle: (0.0 if idle else 99.0, 0.0, 0.0))
        alone = MiniLMEmbedder(threads=2, query_threads=1)  # a fresh query cache: every text is embedded
        bulk_runs = _count_runs(alone)
        singles = np.stack([alone.embed([text])[0] for text in TEXTS])
        assert bulk.shape == singles.shape == (len(TEXTS), MiniLMEmbedder.dimension)
        np.testing.assert_array_equal(singles, bulk)
        assert bulk_runs == [len(TEXTS) if idle else 0]
        # the single-threaded session (its own copy of the weights) exists only once a query needed it
        assert (alone._query_session is None) is idle


def _count_runs(embedder: MiniLMEmbedder) -> list[int]:
    """Count the runs of ``embedder``'s multi-threaded session (a private attribute: which path ran is the
    point)."""
    runs = [0]
    session = embedder._session
    run = session.run

    def counted(*args: Any) -> Any:
        runs[0] += 1
        return run(*args)

    session.run = counted
    return runs


def test_a_query_takes_a_second_core_only_when_one_is_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    assert core_to_spare(0.3, 2)
    assert core_to_spare(1.4, 2)
    assert not core_to_spare(1.5, 2)  # on 2 cores a load of 1.5 leaves no whole core idle
    assert not core_to_spare(0.0, 1)
    assert core_to_spare(10.0, 16)

    def no_load_average() -> tuple[float, float, float]:
        raise OSError("no load average here")

    monkeypatch.setattr(os, "getloadavg", no_load_average)
    assert not core_to_spare(cores=2)


def test_a_small_batch_takes_the_query_path_and_keeps_input_order() -> None:
    embedder = MiniLMEmbedder(threads=2, query_threads=1)
    few = TEXTS[:3][::-1]
    together = embedder.embed(few)
    np.testing.assert_array_equal(together, np.stack([embedder.embed([text])[0] for text in few]))
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert not np.array_equal(together[0], together[1])
