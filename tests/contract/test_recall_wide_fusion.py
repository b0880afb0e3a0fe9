"""Hybrid recall's two orders on both backends: the precise fusion places the first result and scores every
place, the wide fusion (cosine divided by the best cosine, divided BM25 raised to a power) orders the places after
it (``engine/head_tail.py``)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import numpy.typing as npt
from test_memory_neighbours import T0, turn

from mindbank.engine.recall import FusionParams, RecallRequest, recall
from mindbank.store.base import Store

QUERY = np.array([1, 0, 0, 0], np.float32)


def _towards(cosine: float) -> npt.NDArray[np.float32]:
    """A unit vector at ``cosine`` to the query's."""
    return np.array([cosine, float(np.sqrt(1 - cosine**2)), 0, 0], np.float32)


class _QueryEmbedder:
    dimension = 4
    name = "query"

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return np.tile(QUERY, (len(texts), 1))


def _bank(store: Store) -> None:
    """Turns in sessions of their own (no neighbour lifts): lexical matches of several strengths with little of
    the query's meaning, and paraphrases with none of its words."""
    day = timedelta(days=1)
    texts = [
        ("Ann: the garden, the garden at last", 0.9),
        ("Bo: a garden", 0.1),
        ("Cy: my neighbour mentioned a garden once while we were talking about the weather and the bus", 0.05),
        ("Di: the roses by the fence came up red this spring", 0.7),
        ("Ed: we planted tulips and dug a vegetable bed", 0.6),
        ("Fay: the bus was late again", 0.0),
    ]
    store.write_documents(
        "b",
        [turn(text, T0 + n * day, context=f"session {n}", vector=_towards(c)) for n, (text, c) in enumerate(texts)],
    )


def _ranked(store: Store, fusion: FusionParams) -> list[tuple[str, float]]:
    hits = recall(store, _QueryEmbedder(), "b", RecallRequest(query="garden"), fusion=fusion)  # type: ignore[arg-type]
    return [(h.memory.text, h.final) for h in hits]


def test_the_precise_fusion_places_the_first_result_and_scores_every_place(store: Store) -> None:
    _bank(store)
    shipped = _ranked(store, FusionParams(wide=True))
    precise = _ranked(store, FusionParams())
    wide = _ranked(store, FusionParams(wide=True, head=0))
    assert shipped[0][0] == precise[0][0] == "Ann: the garden, the garden at last"
    assert [text for text, _ in shipped[1:]] == [text for text, _ in wide if text != shipped[0][0]]
    assert [score for _, score in shipped] == [score for _, score in precise]  # place by place
    assert sorted(text for text, _ in shipped) == sorted(text for text, _ in precise)


def test_a_floor_on_the_final_score_keeps_as_many_results_as_with_the_precise_fusion_alone(store: Store) -> None:
    _bank(store)
    precise = _ranked(store, FusionParams())
    floor = (precise[1][1] + precise[2][1]) / 2  # between the second and the third score
    request = RecallRequest(query="garden", min_final=floor)
    cut = recall(store, _QueryEmbedder(), "b", request, fusion=FusionParams(wide=True))  # type: ignore[arg-type]
    assert len(cut) == 2 and cut[0].memory.text == precise[0][0]
    assert all(hit.final >= floor for hit in cut)
