"""Named entities of a fact, offline: the people, places, organisations and named things its text names.

No registry package ships an English NER model with its weights (``../shared/reference/dependencies.md``), so the
extraction is a documented heuristic over capitalisation, the same signal a reader uses:

* a run of capitalised words (``New York``, ``Golden Gate Bridge``; ``of``/``the``/``de`` may join two capitalised
  words: ``Bank of America``) is one name; all-capital acronyms count (``LGBTQ``);
* a possessive ``'s`` is dropped (``Caroline's`` -> ``Caroline``);
* a leading ``Name:`` speaker prefix names its speaker;
* a capitalised word that only starts a sentence is a name only when the text also capitalises it elsewhere, it is
  the speaker, or it reads as a subject (:func:`_subject`: ``Alice moved``, ``Golden Gate``); words with no topic
  (``I``, ``The``, ``She``, ``Thanks``: :data:`mindbank.domain.text.STOPWORDS`) and common sentence openers
  (``Yes``, ``Yesterday``, ``Wow``) never are.

Names come back in order of first appearance, each once (case-sensitive: ``Paris`` and ``PARIS`` are two). The
entity id of a name within a bank is a UUID derived from both (:func:`entity_id`), so it is stable across calls.
"""

from __future__ import annotations

import re
import uuid
from functools import lru_cache

from mindbank.domain.text import STOPWORDS, speaker_prefix

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'\u2019&.-]*")
_JOINERS = frozenset({"of", "the", "de", "du", "la", "van", "von", "and"})
_SENTENCE_END = re.compile(r"[.!?:;\"()\[\]]\s*$")
# capitalised only because they open a sentence or an exclamation in conversation; never names on their own
_OPENERS = frozenset(
    "yes yeah yep no nope ok okay oh hey hi hello wow thanks thank sure well so just really also totally definitely "
    "absolutely maybe great awesome cool nice good sounds glad sorry congrats congratulations haha lol anyway "
    "yesterday today tomorrow last next this that these those what where when why how who which".split()
)
CACHE_TEXTS = 16_384  # texts whose names are kept
CACHE_MAX_CHARS = 1_000  # longer texts are not cached (so the cache holds at most about 16 MB of keys)
_NOT_NAME_ENDINGS = ("ing", "ly", "ed")
_NAMESPACE = uuid.UUID("5d0c3f6e-6f7a-4a51-9d55-2b8f1e0c7a11")


def _clean(word: str) -> str:
    word = word.replace("\u2019", "'").rstrip(".'-&")
    return word[:-2] if word.endswith("'s") else word


def _capitalised(word: str) -> bool:
    return word[:1].isupper()


def extract_entities(text: str) -> tuple[str, ...]:
    """The names ``text`` mentions, in order of first appearance, each once (see the module for the rules).

    Cached by text up to ``CACHE_MAX_CHARS`` characters: recall shapes the same memories again and again, and the
    result depends on the text alone (a longer text is worked out each time, so the cache stays a few MB)."""
    return _cached(text) if len(text) <= CACHE_MAX_CHARS else _extract(text)


@lru_cache(maxsize=CACHE_TEXTS)
def _cached(text: str) -> tuple[str, ...]:
    return _extract(text)


def _extract(text: str) -> tuple[str, ...]:
    speaker = speaker_prefix(text)
    body = text.strip()
    names: list[str] = []
    if speaker:
        names.append(speaker)
        body = body[len(speaker) + 1 :]
    words = [(m.group(0), m.start()) for m in _WORD.finditer(body)]
    # words capitalised somewhere other than a sentence start: evidence that a sentence-initial one is a name too
    inner = {_clean(w) for i, (w, at) in enumerate(words) if _capitalised(w) and not _opens(body, at)}
    run: list[str] = []
    for index, (word, at) in enumerate(words):
        clean = _clean(word)
        lowered = clean.lower()
        joiner = bool(run) and lowered in _JOINERS and index + 1 < len(words) and _capitalised(words[index + 1][0])
        named = _capitalised(clean) and lowered not in STOPWORDS and lowered not in _OPENERS and len(clean) > 1
        if named and _opens(body, at) and clean not in inner and clean != speaker:
            named = _subject(clean, _clean(words[index + 1][0]) if index + 1 < len(words) else "")
        if named or joiner:
            run.append(clean)
            if clean != word.replace("\u2019", "'") and not joiner:  # a possessive or trailing dot ends the name
                _flush(run, names)
            continue
        _flush(run, names)
    _flush(run, names)
    return tuple(names)


def _subject(word: str, following: str) -> bool:
    """Whether a capitalised word that only opens a sentence reads as a name: followed by another capitalised word
    (``Golden Gate``), or by a lowercase verb in the past or third person (``Alice moved``, ``Dana leads``) while it
    has no verb or adverb ending itself (``Painting helps``, ``Finally decided``)."""
    if following[:1].isupper():
        return True
    if not following or word.lower().endswith(_NOT_NAME_ENDINGS) or following.lower() in STOPWORDS:
        return False
    return following.endswith(("ed", "s")) and not following.endswith(("ss", "us"))


def _opens(body: str, at: int) -> bool:
    """Whether the word at ``at`` starts ``body`` or a sentence in it."""
    before = body[:at].rstrip()
    return not before or bool(_SENTENCE_END.search(before))


def _flush(run: list[str], names: list[str]) -> None:
    while run and run[-1].lower() in _JOINERS:
        run.pop()
    if run:
        name = " ".join(run)
        if name not in names:
            names.append(name)
    run.clear()


@lru_cache(maxsize=CACHE_TEXTS)
def entity_id(bank_id: str, name: str) -> str:
    """A stable id for ``name`` within ``bank_id`` (a UUID derived from both; cached: every recall response maps
    the names of its results, and a SHA-1 per name was a visible share of shaping one)."""
    return str(uuid.uuid5(_NAMESPACE, f"{bank_id}\x00{name}"))
