"""Topics: a briefing's sections are clusters of its facts, each titled by a key phrase drawn from its own facts.

The blocks' facts (:func:`topic_vectors`: embeddings centred on their mean, beside
their words) are grouped by spherical k-means (cosine; k =
⌈√n⌉, at most :data:`MAX_SECTIONS`), seeded deterministically: the weightiest block first, then each time
the block least similar to every seed so far (farthest-first, Gonzalez 1985), so a rerun on the same facts gives
the same sections. A section's weight is the sum of its facts' salience; sections are ordered by weight, blocks
within a section by date.

Headings. Candidates are the 1–3-word phrases of the section's quotes that start and end on a content word
(inner "of", "and", "for" … allowed) and never cross punctuation. A candidate is never a stopword, never holds a
speaker's name (the ``Name:`` prefixes, and names used to address someone: "Thanks, Melanie!"), never starts or
ends on a weak word ("great", "time", "went" …), and every content word of it is found in at least two of the
section's facts: a heading names what facts share, so a section of one fact takes no title of its own (the phrase
of a lone fact names something it mentions — "People holding", "Lamppost" — not what it is about), unless the
whole document is that one fact (``lone``). Candidates are ranked by how many of the
section's facts hold their rarest word times how specific their words are to this section (inverse frequency
across the document's facts: c-TF-IDF, Grootendorst 2022), with a bonus per extra word (a phrase says more) and a
discount for a phrase never used as a noun (never after a determiner or preposition, never a name); a single word
never so used ("tough", "joining") is no candidate;
then, when an embedder is at hand, the best few are re-ranked KeyBERT-style by the cosine of the phrase's
embedding to the section's centroid (Grootendorst 2020). A section with no candidate is merged into its nearest
section.

A block sits under a heading only when it says what the heading names (:func:`fits`: its quote holds a content
word of the heading, stems compared): clustering by embedding can put "My first bowl collapsed …" beside kitchen
facts, and a reader would find it under "Kitchen floor".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from mindbank.domain.text import STOPWORDS
from mindbank.engine.synthesis.salience import FILLER, NUMBER_WORDS, REACTIONS, TIME_WORDS, split_sentences
from mindbank.engine.synthesis.selection import lexical_vectors, stem

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]

MAX_SECTIONS = 8
KMEANS_ROUNDS = 20
RERANK = 6  # candidates per section re-ranked by embedding (each costs one short MiniLM pass)
KEYBERT_WEIGHT = 1.0
EXTRA_WORD_BONUS = 0.3
MAX_PHRASE_WORDS = 3
LEXICAL_SHARE = 0.5  # share of the clustering similarity that comes from shared words rather than embeddings
_INNER = frozenset("of and for with in on to the a".split())
# words after which a phrase is used as a noun ("my painting", "the dog park", "about adoption")
NOUN_MARKERS = frozenset(
    "a an the my our your his her their its this that these those some any every each another no of in at about "
    "for with on from into".split()
)
UNMARKED_FACTOR = 0.6  # a candidate never seen after a determiner or preposition is less likely a topic noun
# words that say nothing as a section title, at its start or end
WEAK = frozenset(
    """about actually again already always back bad better big day days doing done else even every feel feeling
    felt first fun going gonna good great happy hard here just keep keeping know last little long look looks lots
    made make making many maybe much need new next nice part pretty right said same says see sound sounds still
    super sure take tell thing things think thought time times told totally try trying want wanted way well went
    whole year years love loved loves enjoy enjoyed enjoying hope hoping glad excited proud getting get got
    lately recently today yesterday tomorrow tonight week weeks weekend month months ago since bit kind sort
    stuff means mean meant helps help helped share shared sharing found find wait thankful grateful lucky special
    moment moments awesome amazing cool nice lovely wonderful fantastic incredible takes taking took taken give
    gives giving gave goes come comes coming came put puts keeps let lets say says saying tell tells telling show
    shows showing bring brings bringing brought seeing seems spend spending spent makes use using used remind
    reminds reminded reminder around different ready hand picture pictures photo photos pic pics""".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")
_CHUNK = re.compile(r"[,;:()\[\]\"“”!?.…]|\s[-–—]\s|\s[-–—]|[-–—]\s")
_VOCATIVE = re.compile(
    r"(?:^|[,.!?]\s+|\b(?:hey|hi|hello|thanks|thank you|wow|congrats|bye|yeah|yes|oh|sorry|aww|haha|cheers)[,!]?\s+)"
    r"([A-Z][a-z]+)(?=\s*[,.!?])",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Phrase:
    """A heading candidate: its surface text, its stemmed content words, and its score."""

    text: str
    stems: tuple[str, ...]
    score: float


def section_count(n: int) -> int:
    """How many clusters ``n`` blocks are split into: ⌈√n⌉, between 1 and :data:`MAX_SECTIONS` (a cluster whose
    facts share no title is merged into its nearest titled one afterwards, so this is an upper bound)."""
    return max(1, min(MAX_SECTIONS, math.ceil(math.sqrt(n))))


def topic_vectors(vectors: npt.NDArray[np.float32], texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """What clustering compares: each embedding minus the mean of all of them (the direction every fact of one
    speaker or source shares, which otherwise outweighs topic: Mu & Viswanath 2018, "All-but-the-top"),
    renormalised, beside a bag of the fact's content stems at weight :data:`LEXICAL_SHARE` (facts that share
    words can share a heading). Unit rows."""
    if not len(vectors):
        return np.asarray(vectors, dtype=np.float32)
    dense = np.asarray(vectors, dtype=np.float64)
    dense = dense - dense.mean(axis=0)
    dense /= np.clip(np.linalg.norm(dense, axis=1, keepdims=True), 1e-12, None)
    lexical = lexical_vectors(texts).astype(np.float64)
    joined = np.hstack([math.sqrt(1 - LEXICAL_SHARE) * dense, math.sqrt(LEXICAL_SHARE) * lexical])
    joined /= np.clip(np.linalg.norm(joined, axis=1, keepdims=True), 1e-12, None)
    return joined.astype(np.float32)


def cluster(vectors: npt.NDArray[np.float32], weights: Sequence[float], k: int) -> list[list[int]]:
    """Spherical k-means of unit ``vectors`` into at most ``k`` groups (module docstring); groups of row indices,
    none empty, in no particular order."""
    n = len(vectors)
    if n == 0:
        return []
    k = max(1, min(k, n))
    matrix = np.asarray(vectors, dtype=np.float64)
    seeds = [int(np.argmax(np.asarray(weights)))]
    nearest = matrix @ matrix[seeds[0]]
    while len(seeds) < k:
        candidate = int(np.argmin(np.where(np.isin(np.arange(n), seeds), np.inf, nearest)))
        seeds.append(candidate)
        nearest = np.maximum(nearest, matrix @ matrix[candidate])
    centroids = matrix[seeds]
    labels = np.full(n, -1)
    for _ in range(KMEANS_ROUNDS):
        new = np.argmax(matrix @ centroids.T, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        for c in range(len(centroids)):
            members = matrix[labels == c]
            if len(members):
                mean = members.sum(axis=0)
                centroids[c] = mean / max(float(np.linalg.norm(mean)), 1e-12)
    return [list(map(int, np.flatnonzero(labels == c))) for c in range(len(centroids)) if (labels == c).any()]


def speaker_names(texts: Sequence[str]) -> set[str]:
    """Lowercased names a heading must not use: the ``Name:`` prefixes of ``texts`` and the names their sentences
    address someone by ("Thanks, Melanie!", "Hey Mel, …")."""
    names: set[str] = set()
    for text in texts:
        head, sep, body = text.partition(": ")
        if sep and re.fullmatch(r"[A-Z][\w .'-]{0,40}", head):
            names.update(w.lower() for w in head.split())
        else:
            body = text
        names.update(m.group(1).lower() for m in _VOCATIVE.finditer(body))
    return names


@lru_cache(maxsize=65536)
def _content(word: str) -> bool:
    lower = word.lower().replace("’", "'")
    return (
        len(lower) > 2
        and lower not in STOPWORDS
        and lower not in FILLER
        and lower not in REACTIONS
        and not lower.endswith(("'s", "'t", "'m", "'re", "'ve", "'ll", "'d"))
    )


@lru_cache(maxsize=65536)
def _edge(word: str) -> bool:
    """Whether a title may start or end on ``word``: a content word, not weak, not a time word, not a number word
    ("three kilometres" is a quantity, not what the section is about), and not a lower-case past tense ("called",
    "worked": a title names a thing, not what happened to it)."""
    lower = word.lower()
    past = word.islower() and len(word) > 4 and word.endswith("ed")
    return _content(word) and lower not in WEAK and lower not in TIME_WORDS and lower not in NUMBER_WORDS and not past


def phrases_of(quote: str, banned: set[str]) -> list[tuple[str, tuple[str, ...], bool]]:
    """Candidate phrases of one quote (:func:`_phrases`, cached per quote and banned names)."""
    return _phrases(quote, frozenset(banned))


@lru_cache(maxsize=16384)
def _phrases(quote: str, banned: frozenset[str]) -> list[tuple[str, tuple[str, ...], bool]]:
    """Candidate phrases of one quote: ``(surface text, stems of its content words, whether a determiner or
    preposition stands before it)``, in order of appearance."""
    out: list[tuple[str, tuple[str, ...], bool]] = []
    # a bracketed annotation ("[shares a photo: …]") describes an attachment, not what the speaker talks about
    for sentence in split_sentences(re.sub(r"\[[^\]]*\]", " ", quote)):
        opening = (_WORD.findall(sentence) or [""])[0]
        for chunk in _CHUNK.split(sentence):
            words = _WORD.findall(chunk)
            for start in range(len(words)):
                for size in range(1, MAX_PHRASE_WORDS + 1):
                    span = words[start : start + size]
                    if len(span) < size or not (_edge(span[0]) and _edge(span[-1])):
                        continue
                    if any(w.lower() in WEAK or (not _content(w) and w.lower() not in _INNER) for w in span[1:-1]):
                        continue
                    if any(w.lower() in banned for w in span):
                        continue
                    stems = tuple(stem(w.lower()) for w in span if _content(w))
                    # "a pottery class": after a determiner, and not modifying a noun after it ("a tough week")
                    after = words[start + size] if start + size < len(words) else ""
                    marked = start > 0 and words[start - 1].lower() in NOUN_MARKERS and not _content(after)
                    # a capitalised word inside a sentence is a name ("Harry Potter", "Door Dash")
                    named = span[0][:1].isupper() and not (start == 0 and span[0] == opening)
                    out.append((" ".join(span), stems, marked or named))
    return out


def rank_phrases(
    quotes: Sequence[str], frequency: dict[str, int], total: int, banned: set[str], *, lone: bool = True
) -> list[Phrase]:
    """Heading candidates of one section's ``quotes``, best first (module docstring, without the embedding step).

    ``frequency``: per stem, how many facts of the whole document hold it; ``total``: how many facts it has;
    ``lone``: whether a section of one quote may take a phrase of it (else it has no candidate)."""
    holders: list[set[str]] = []
    found: dict[tuple[str, ...], str] = {}
    nouns: set[tuple[str, ...]] = set()
    for text in quotes:
        phrases = phrases_of(text, banned)
        holders.append({s for _, stems, _ in phrases for s in stems})
        for surface, stems, marked in phrases:
            found.setdefault(stems, surface)
            if marked:
                nouns.add(stems)
    need = 2 if len(quotes) >= 2 or not lone else 1
    ranked: list[Phrase] = []
    for stems, surface in found.items():
        covers = [sum(1 for h in holders if s in h) for s in stems]
        if not stems or min(covers) < need:
            continue
        specificity = sum(math.log((1 + total) / (1 + frequency.get(s, 0))) + 1 for s in stems) / len(stems)
        score = math.log(1 + min(covers)) * specificity * (1 + EXTRA_WORD_BONUS * (len(stems) - 1))
        if stems not in nouns:
            if len(stems) == 1:
                continue  # a lone word never used as a noun ("tough", "interesting") names no topic
            score *= UNMARKED_FACTOR
        ranked.append(Phrase(surface, stems, score))
    ranked.sort(key=lambda p: (-p.score, p.text))
    # one surface per stem set, and no phrase that is a mere part of a better one
    kept: list[Phrase] = []
    for phrase in ranked:
        if any(set(phrase.stems) < set(k.stems) for k in kept):
            continue
        kept.append(phrase)
    return kept


def heading_stems(text: str) -> frozenset[str]:
    """The stems of the content words of ``text`` (a heading, or a quote with its bracketed notes and photo
    descriptions left out, as headings are drawn without them): what :func:`fits` compares."""
    body = re.sub(r"\[[^\]]*\]", " ", text)
    return frozenset(stem(w.lower()) for w in _WORD.findall(body) if _content(w))


def fits(heading: str, quotes: Sequence[str]) -> bool:
    """Whether a block whose shown ``quotes`` are these belongs under ``heading``: they hold a content word of it
    (stems compared: "Kitchen floor" holds "the kitchen tiles arrived", not "My first bowl collapsed …")."""
    wanted = heading_stems(heading)
    return any(wanted & heading_stems(q) for q in quotes)


def title(phrase: str) -> str:
    """A phrase as a heading: its first letter upper-cased, the rest as written (names keep their capitals)."""
    return phrase[:1].upper() + phrase[1:]


def _keybert(
    ranked: list[list[Phrase]], vectors: npt.NDArray[np.float32], centroids: npt.NDArray[np.float32]
) -> list[list[Phrase]]:
    """Re-rank each section's candidates by their cheap score (scaled to the best one) plus
    :data:`KEYBERT_WEIGHT` × the cosine of their embedding (``vectors``, candidates in order) to the centroid."""
    out: list[list[Phrase]] = []
    row = 0
    for i, options in enumerate(ranked):
        block = vectors[row : row + len(options)]
        row += len(options)
        if not options:
            out.append([])
            continue
        cosine = block @ np.asarray(centroids[i], dtype=np.float32)
        top = max(p.score for p in options) or 1.0
        rescored = [
            Phrase(p.text, p.stems, p.score / top + KEYBERT_WEIGHT * float(c))
            for p, c in zip(options, cosine, strict=True)
        ]
        out.append(sorted(rescored, key=lambda p: (-p.score, p.text)))
    return out


def headings(
    sections: Sequence[Sequence[str]],
    centroids: npt.NDArray[np.float32],
    *,
    banned: set[str],
    embed: Embed | None = None,
    lone: bool = True,
) -> list[str | None]:
    """A heading per section (``sections``: each a list of quotes, heaviest section first), ``None`` where no
    candidate qualifies (``lone``: whether a section of one quote may be titled by it: :func:`rank_phrases`).

    The embedding re-rank (when ``embed`` is given) embeds at most :data:`RERANK` candidates per section, in one
    batch for the whole document."""
    frequency: dict[str, int] = {}
    for quotes in sections:
        for text in quotes:
            for s in {s for _, stems, _ in phrases_of(text, banned) for s in stems}:
                frequency[s] = frequency.get(s, 0) + 1
    total = sum(len(q) for q in sections)
    ranked = [rank_phrases(quotes, frequency, total, banned, lone=lone)[:RERANK] for quotes in sections]
    if embed is not None and any(ranked) and len(centroids) == len(sections):
        vectors = embed([p.text.lower() for options in ranked for p in options])
        if vectors.shape[1] == np.asarray(centroids).shape[1]:  # not against centroids of stand-in vectors
            ranked = _keybert(ranked, vectors, centroids)
    taken: set[str] = set()
    out: list[str | None] = []
    for options in ranked:
        # two titles never share a word, nor forms of one ("Dance studio" / "Dancing"): sections come heaviest
        # first, so the weightier section keeps the word
        choice = next((p for p in options if not taken & set(p.stems)), None)
        if choice is None:
            out.append(None)
            continue
        taken.update(choice.stems)
        out.append(title(choice.text))
    return out
