"""Breadth: which facts a briefing quotes, by maximal marginal relevance over the facts' embeddings.

A standing question such as "what matters to X" is answered from the whole scope it covers (the refresh pipeline
reads it, bounded: ``engine/refresh/runner.py``), not from the top recall hits, and the briefing should cover many
topics rather than variations of one. Each quotable fact (``salience.quote``) has a worth::

    worth = salience + RELEVANCE_WEIGHT * relevance        relevance: cosine of the fact to the standing question,
                                                           both centred on the facts' mean, floored at 0

and facts are taken greedily by maximal marginal relevance (Carbonell & Goldstein, SIGIR 1998)::

    next = argmax  LAMBDA * worth / max(worth)  -  (1 - LAMBDA) * max cosine to the facts already taken

Cosines here are between embeddings centred on the pool's mean (every fact of one speaker shares a direction that
says nothing about topic: Mu & Viswanath 2018); a fact whose raw cosine to one already taken reaches
:data:`VARIATION_COSINE` is a variation of it ("I ran 8 km along the canal …", "I ran 10 km along the canal …")
and is not taken at all.

Only quotable facts enter (``salience.quote``: informative sentences, never questions or small talk), so a briefing
is not padded with glue when the scope has little to say; the same bar decides what a delta refresh appends.
Vectors are the stored memory embeddings (unit length, so a dot product is a cosine); without them (a caller that
has none) a hashed bag-of-stems vector stands in, so the rule still runs offline in tests.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import ScoredMemory
from mindbank.domain.text import speaker_prefix, strip_speaker
from mindbank.engine.synthesis.salience import Quote, content_words, plain_quote, quote, speaks_to_listener

Vector = npt.NDArray[np.float32]

RELEVANCE_WEIGHT = 3.0  # a fact squarely on the question (centred cosine ~0.5) gains what two more specifics give
LAMBDA = 0.8  # weight of worth against redundancy; 1.0 would be a plain ranking
VARIATION_COSINE = 0.9  # a fact this close (raw cosine) to one already taken is a variation of it: never taken
LEXICAL_DIMENSION = 1024


@dataclass(frozen=True, slots=True)
class Candidate:
    """A quotable fact: the hit, what a briefing would quote of it, its embedding and its relevance."""

    hit: ScoredMemory
    quote: Quote
    vector: Vector
    relevance: float
    # the other speaker the quote speaks to in the second person ("" when it does not, or nobody is known): what it
    # says is about their life too, so it is shown as said to them and never titles a section (``compose.py``)
    listener: str = ""

    @property
    def id(self) -> str:
        """The memory id."""
        return self.hit.memory.id

    @property
    def when(self) -> datetime | None:
        """When the fact happened (else when it was said)."""
        return self.hit.memory.moment

    @property
    def speaker(self) -> str:
        """The ``Name:`` prefix of the fact's text ("" when none)."""
        text = self.hit.memory.text.strip()
        body = strip_speaker(text)
        return text[: len(text) - len(body)].strip().rstrip(":") if body != text else ""

    @property
    def worth(self) -> float:
        """Salience plus weighted relevance (module docstring)."""
        return self.quote.salience + RELEVANCE_WEIGHT * self.relevance


# common irregular past forms, so "ran" meets "run" and "went" meets "go" when quotes are compared
IRREGULAR = {
    "ran": "run", "went": "go", "gone": "go", "swam": "swim", "rode": "ride", "ridden": "ride", "wrote": "write",
    "written": "write", "ate": "eat", "eaten": "eat", "bought": "buy", "taught": "teach", "made": "make",
    "took": "take", "taken": "take", "gave": "give", "given": "give", "saw": "see", "seen": "see", "met": "meet",
    "began": "begin", "begun": "begin", "won": "win", "lost": "lose", "left": "leave", "felt": "feel",
    "built": "build", "sold": "sell", "flew": "fly", "flown": "fly", "drove": "drive", "driven": "drive",
}  # fmt: skip


def stem(word: str) -> str:
    """A light suffix stripper (plural, -ing, -ed, a final -e), enough to match "paintings" with "painting",
    "runs" with "run" and "dance" with "dancing" when comparing the words of short quotes (irregular past forms
    through :data:`IRREGULAR`)."""
    if word in IRREGULAR:
        return IRREGULAR[word]
    for suffix in ("ings", "ing", "ies", "ied", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                word += "y"
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # running -> runn -> run
    elif len(word) >= 4 and word.endswith("e") and not word.endswith("ee"):
        word = word[:-1]  # dance / dancing -> danc
    return word


@lru_cache(maxsize=65536)
def stems(text: str) -> frozenset[str]:
    """The stemmed content words of ``text`` (cached: the same quotes are compared again and again)."""
    return frozenset(stem(w) for w in content_words(text))


def lexical_vectors(texts: Sequence[str]) -> Vector:
    """Unit bag-of-stems vectors (hashed into :data:`LEXICAL_DIMENSION` buckets): the stand-in when no stored
    embeddings are at hand."""
    out = np.zeros((len(texts), LEXICAL_DIMENSION), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in stems(strip_speaker(text)):
            bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
            out[row, bucket % LEXICAL_DIMENSION] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.asarray(out / np.clip(norms, 1e-12, None), dtype=np.float32)


def candidates(
    hits: Sequence[ScoredMemory],
    vectors: Mapping[str, Vector] | None = None,
    query_vector: Vector | None = None,
    scores: Mapping[str, float] | None = None,
    previous: Mapping[str, str] | None = None,
    advice: bool = False,
) -> list[Candidate]:
    """The quotable facts among ``hits`` (an observation whose sources are all there is left out, any other speaks
    for those of its sources that are there), each with its vector and relevance. The same text retained twice is
    two candidates: the briefing shows it once, as a repeat (``updates.repeats``).

    Relevance is, with ``scores`` (memory id -> hybrid recall score for the source query over the whole scope:
    ``ScopeRead.relevance``), the fact's score divided by the best score of the scope, floored at 0 — the ranking
    ``/recall`` returns, on a 0…1 scale; else the cosine to ``query_vector`` (both centred on the candidates' mean,
    floored at 0), else the hit's dense score, else 0. When a hit has no stored vector every candidate gets a
    lexical one, so all cosines share one space. ``previous`` (memory id -> the other speaker's turn just before
    it: ``ScopeRead.previous``) is what a fact's quote is read against (``salience.quote``: reactions, answers)
    and names whom a quote in the second person speaks to (``Candidate.listener``);
    ``advice`` (a question asking what someone said or advised: ``answer.asks_speech``) quotes a request to the
    listener as a statement."""
    present = {h.memory.id for h in hits}
    # a fact speaks for itself: an observation whose sources are all among the hits is left out (it would cite the
    # same statement twice); any other observation speaks for those of its sources that are there — when it has
    # something quotable to say: one that has not leaves its sources to be quoted themselves
    stated = {
        h.memory.id for h in hits
        if h.memory.fact_type == "observation" and set(h.memory.source_memory_ids or ("",)) <= present
    }  # fmt: skip
    turns_before = previous or {}
    said = {
        h.memory.id: quote(h.memory.text, turns_before.get(h.memory.id, ""), advice) for h in hits
        if h.memory.fact_type == "observation" and h.memory.id not in stated
    }  # fmt: skip
    covered = {
        s for h in hits if said.get(h.memory.id) is not None for s in (h.memory.source_memory_ids or ())
    }  # fmt: skip
    kept: list[tuple[ScoredMemory, Quote]] = []
    for hit in hits:
        if hit.memory.id in covered or hit.memory.id in stated:
            continue
        memory_id = hit.memory.id
        found = (
            said[memory_id] if memory_id in said else quote(hit.memory.text, turns_before.get(memory_id, ""), advice)
        )
        if found is not None:
            kept.append((hit, found))
    if not kept:
        # nothing in scope passes the salience bar (a scope of a few short statements: "I am learning the cello."):
        # quote its plain statements rather than leave the model empty; questions and small talk stay out
        kept = [
            (h, q) for h in hits
            if h.memory.id not in covered | stated and (q := plain_quote(h.memory.text)) is not None
        ]  # fmt: skip
    if not kept:
        return []
    stored = vectors or {}
    if all(h.memory.id in stored for h, _ in kept):
        matrix = np.stack([np.asarray(stored[h.memory.id], dtype=np.float32) for h, _ in kept])
    else:
        matrix = lexical_vectors([h.memory.text for h, _ in kept])
    if scores:
        best = max(max(scores.values()), 1e-9)
        relevance = np.array([max(0.0, scores.get(h.memory.id, 0.0)) / best for h, _ in kept], dtype=np.float64)
    elif query_vector is not None and matrix.shape[1] == len(query_vector):
        # centred on the facts' mean, like the redundancy in mmr_order: the direction every fact of the scope
        # shares (the speaker, the register) would otherwise make every fact look about as relevant
        center = matrix.mean(axis=0)
        relevance = (
            _unit((matrix - center).astype(np.float64))
            @ _unit((np.asarray(query_vector, dtype=np.float64) - center)[None, :])[0]
        )
        relevance = np.maximum(relevance, 0.0)  # an unrelated fact is not worth less than an unasked one
    else:
        relevance = np.array([h.semantic or 0.0 for h, _ in kept], dtype=np.float32)
    return [
        Candidate(h, q, matrix[i], float(relevance[i]), _listener(h, q, turns_before.get(h.memory.id, "")))
        for i, (h, q) in enumerate(kept)
    ]


def _listener(hit: ScoredMemory, found: Quote, previous: str) -> str:
    """Whom ``found`` (the quote of ``hit``) speaks to: the speaker of the turn before (``previous``), when the quote
    holds a second-person word (``salience.speaks_to_listener``) and that speaker is another; else ""."""
    listener = speaker_prefix(previous) or ""
    if not listener or listener == speaker_prefix(hit.memory.text) or not speaks_to_listener(found.text):
        return ""
    return listener


def matrix_of(cands: Sequence[Candidate]) -> Vector:
    """The candidates' vectors as one ``(n, d)`` matrix."""
    if not cands:
        return np.zeros((0, 1), dtype=np.float32)
    matrix: Vector = np.stack([c.vector for c in cands])
    return matrix


def _unit(rows: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``rows`` scaled to unit length (a zero row stays zero)."""
    unit: npt.NDArray[np.float64] = rows / np.clip(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12, None)
    return unit


def mmr_order(
    cands: Sequence[Candidate], *, lam: float | None = None, exclude: set[int] | None = None
) -> Iterator[int]:
    """Indices of ``cands`` in maximal-marginal-relevance order (module docstring; ``lam`` defaults to
    :data:`LAMBDA`). A generator: the caller stops taking when its budget is spent; indices it adds to ``exclude``
    meanwhile (facts it folded into a block already taken) are never yielded."""
    exclude = exclude if exclude is not None else set()
    lam = LAMBDA if lam is None else lam
    if not cands:
        return
    worth = np.array([c.worth for c in cands], dtype=np.float64)
    worth = worth / max(float(worth.max()), 1e-9)
    raw = matrix_of(cands).astype(np.float64)
    centred = _unit(raw - raw.mean(axis=0))
    redundancy = np.zeros(len(cands))  # centred cosine to the nearest fact taken so far
    closest = np.full(len(cands), -1.0)  # raw cosine to the nearest fact taken so far
    alive = np.ones(len(cands), dtype=bool)
    while True:
        alive[list(exclude)] = False
        alive &= closest < VARIATION_COSINE
        if not alive.any():
            return
        best = int(np.argmax(np.where(alive, lam * worth - (1 - lam) * redundancy, -np.inf)))
        alive[best] = False
        yield best
        redundancy = np.maximum(redundancy, centred @ centred[best])
        closest = np.maximum(closest, raw @ raw[best])
