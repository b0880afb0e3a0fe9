"""Hybrid search over knowledge pages: BM25 over each page's text and cosine over its embedding, fused by reciprocal
rank (reference: ``GET /knowledge-base/search``, "BM25 + vector, RRF-fused").

A bank's pages are few (they are written by people or agents, one per standing question), so both arms score every
page in process: Okapi BM25 (k1 1.2, b 0.75) over the page name, question and body, and the cosine of L2-normalised
MiniLM vectors. The vector arm keeps pages at or above :data:`MIN_COSINE` (an unrelated page is not a hit just
because it is the nearest of a few). The fused score is normalised to 0..1, 1.0 meaning every arm ranked the page
first, so it says where a page ranked for this query, not how well it matched.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from mindbank.domain.text import STOPWORDS, keyword_terms
from mindbank.engine.recall import RRF_K, fuse

BM25_K1 = 1.2
BM25_B = 0.75
MIN_COSINE = 0.2  # MiniLM cosine below which a page is not a vector hit (unrelated texts score about 0-0.15)

_WORD = re.compile(r"[a-z0-9][a-z0-9'_-]*")


def tokens(text: str) -> list[str]:
    """The indexed words of a text, as :func:`~mindbank.domain.text.keyword_terms` reads a query (lowercased,
    possessive dropped, stopwords and single characters out) but with repeats kept, for term frequencies."""
    out = []
    for word in _WORD.findall(text.lower().replace("\u2019", "'")):
        word = word.strip("'")
        if word.endswith("'s"):
            word = word[:-2]
        if len(word) > 1 and word not in STOPWORDS:
            out.append(word)
    return out


@lru_cache(maxsize=8192)
def _bag(text: str) -> tuple[Counter[str], int]:
    """A text's term counts and length, cached: a page's text is the same from one search to the next until it
    changes, and tokenizing every page is most of a search's cost (treat the counter as read-only)."""
    words = tokens(text)
    return Counter(words), len(words)


def bm25(query: str, documents: Mapping[str, str]) -> list[tuple[str, float]]:
    """Okapi BM25 of ``query`` over ``documents`` (``{id: text}``); ids with a positive score, best first."""
    terms = keyword_terms(query)
    if not terms or not documents:
        return []
    counted = {doc_id: _bag(text) for doc_id, text in documents.items()}
    bags = {doc_id: bag for doc_id, (bag, _) in counted.items()}
    lengths = {doc_id: length for doc_id, (_, length) in counted.items()}
    average = (sum(lengths.values()) / len(bags)) or 1.0
    n = len(bags)
    scores: dict[str, float] = {}
    for term in terms:
        holders = [doc_id for doc_id, bag in bags.items() if term in bag]
        if not holders:
            continue
        idf = math.log(1 + (n - len(holders) + 0.5) / (len(holders) + 0.5))
        for doc_id in holders:
            tf = bags[doc_id][term]
            norm = tf + BM25_K1 * (1 - BM25_B + BM25_B * lengths[doc_id] / average)
            scores[doc_id] = scores.get(doc_id, 0.0) + idf * tf * (BM25_K1 + 1) / norm
    return sorted(((i, s) for i, s in scores.items() if s > 0), key=lambda kv: (-kv[1], kv[0]))


def nearest(
    query_vector: npt.NDArray[np.float32], vectors: Mapping[str, npt.NDArray[np.float32]]
) -> list[tuple[str, float]]:
    """Cosine of ``query_vector`` with each (normalised) page vector, pages at or above :data:`MIN_COSINE`, best
    first."""
    if not vectors:
        return []
    ids = sorted(vectors)
    matrix = np.stack([np.asarray(vectors[i], dtype=np.float32) for i in ids])
    cosines = matrix @ np.asarray(query_vector, dtype=np.float32)
    hits = [(ids[i], float(c)) for i, c in enumerate(cosines) if c >= MIN_COSINE]
    return sorted(hits, key=lambda kv: (-kv[1], kv[0]))


def rank_pages(
    query: str,
    query_vector: npt.NDArray[np.float32],
    texts: Mapping[str, str],
    vectors: Mapping[str, npt.NDArray[np.float32]],
) -> list[tuple[str, float]]:
    """Every page either arm found, with its fused score in 0..1, best first (ties by id)."""
    arms: Sequence[list[tuple[str, float]]] = (bm25(query, texts), nearest(query_vector, vectors))
    fused = fuse(arms, [1.0] * len(arms), k=RRF_K)
    best = len(arms) / (RRF_K + 1)  # every arm placing a page first
    return [(page_id, min(1.0, score / best)) for page_id, score in fused]
