"""Text splitting for the extractive engine: documents into chunks, chunks into facts, queries into terms."""

from __future__ import annotations

import itertools
import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'_-]*")
_TURN = re.compile(r"^[A-Z][\w .'-]{0,40}:\s")

# Words that carry no topic: dropped from keyword queries so BM25 weighs content terms.
_FUNCTION_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "did",
        "does",
        "also",
        "ever",
        "us",
        "let",
        "like",
        "get",
        "go",
        "goes",
        "going",
        "got",
        "really",
        "yeah",
        "oh",
        "hey",
        "hi",
        "wow",
        "thanks",
        "thank",
        "sure",
        "kind",
        "one",
        "much",
        "many",
        "lot",
    ]
)
# Contractions other than 's (which keyword_terms strips: "it's" -> "it"): as FTS5 phrases they would match the
# meaningless fragments "don"/"t", "i"/"m" ... and count as content words when judging whether a fact says anything.
_CONTRACTIONS = frozenset(
    f"{stem}'{tail}"
    for stem, tails in {
        "i": ("m", "ve", "d", "ll"),
        "you": ("re", "ve", "d", "ll"),
        "we": ("re", "ve", "d", "ll"),
        "they": ("re", "ve", "d", "ll"),
        "he": ("d", "ll"),
        "she": ("d", "ll"),
        "it": ("d", "ll"),
        "that": ("d", "ll"),
        "there": ("d", "ll"),
    }.items()
    for tail in tails
) | frozenset(
    w + "n't" for w in "do does did is are was were have has had would could should ca wo ai must need".split()
)
STOPWORDS = _FUNCTION_WORDS | _CONTRACTIONS


def split_chunks(content: str) -> list[str]:
    """Split a document into chunks: one per dialogue turn (``Name: ...`` lines) or per paragraph.

    Lines of a paragraph stay together unless each line starts a new speaker turn. Empty chunks are dropped.
    """
    chunks: list[str] = []
    for paragraph in re.split(r"\n\s*\n", content.replace("\r\n", "\n")):
        lines = [ln.strip() for ln in paragraph.split("\n") if ln.strip()]
        if not lines:
            continue
        if len(lines) > 1 and all(_TURN.match(ln) for ln in lines):
            chunks.extend(lines)
        else:
            chunks.append(" ".join(lines))
    return chunks


def split_facts(chunk: str, *, max_words: int = 80) -> list[str]:
    """Split a chunk into fact texts: whole sentences grouped so each fact stays under ``max_words`` words.

    A chunk that already fits is one fact, so short turns keep their meaning together. A leading speaker
    prefix (``Name: ``) is repeated on every fact of the chunk so each fact says who said it.
    """
    text = chunk.strip()
    if not text:
        return []
    if len(text.split()) <= max_words:
        return [text]
    prefix = ""
    m = _TURN.match(text)
    if m:
        prefix, text = m.group(0), text[m.end() :]
    facts: list[str] = []
    current: list[str] = []
    count = 0
    for sentence in _SENTENCE_END.split(text):
        words = len(sentence.split())
        if current and count + words > max_words:
            facts.append(prefix + " ".join(current))
            current, count = [], 0
        current.append(sentence)
        count += words
    if current:
        facts.append(prefix + " ".join(current))
    return facts


def keyword_terms(query: str) -> list[str]:
    """Content words of a query: lowercased, possessive ``'s`` dropped, stopwords removed, order kept, no duplicates.

    ``"What is Caroline's identity?"`` -> ``["caroline", "identity"]``. Typographic apostrophes count as ``'``.
    A possessive is reduced to its owner (``caroline's``, ``parents'``), because FTS5 would read ``caroline's`` as
    the phrase "caroline s", which misses every plain "Caroline". Hyphenated words stay whole (``self-care``): as a
    phrase they are more precise than their parts. Single characters are dropped.
    """
    return list(dict.fromkeys(w for w in _query_words(query) if w is not None))


def query_phrases(query: str) -> list[str]:
    """Pairs of content words said next to each other in a query, as two-word phrases, in order, no duplicates.

    ``"Where is the LGBTQ support group Caroline goes to?"`` -> ``["lgbtq support", "support group",
    "group caroline", "caroline goes"]``. A stopword between two words breaks the pair ("goes to" is none), so a
    pair is two words the asker wrote side by side, not two terms that merely follow each other once stopwords are
    gone. The lexical arm adds them to the query's terms, so a memory that says the phrase outranks one where the
    words lie apart.
    """
    words = _query_words(query)
    return list(dict.fromkeys(f"{a} {b}" for a, b in itertools.pairwise(words) if a and b))


def _query_words(query: str) -> list[str | None]:
    """Each word of ``query`` as :func:`keyword_terms` normalises it, or None where it is a stopword or one
    character (kept in place so adjacency survives)."""
    words: list[str | None] = []
    for word in _WORD.findall(query.lower().replace("\u2019", "'")):
        word = word.strip("'")
        if word.endswith("'s"):
            word = word[:-2]
        words.append(word if len(word) > 1 and word not in STOPWORDS else None)
    return words


_SPEAKER_PREFIX = re.compile(r"^([A-Z][\w .'-]{0,40}):\s")


def speaker_prefix(text: str) -> str | None:
    """The speaker a fact's leading ``Name: `` prefix names (``"Caroline: hi"`` -> ``"Caroline"``), else None."""
    found = _SPEAKER_PREFIX.match(text.strip())
    return found.group(1) if found else None


def strip_speaker(text: str) -> str:
    """A fact without its leading ``Name: `` speaker prefix (names dominate sentence embeddings of short turns)."""
    return _SPEAKER_PREFIX.sub("", text.strip(), count=1)
