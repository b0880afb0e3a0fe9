"""Updates and repeats: is a newer fact a new value of an older one, or the same statement said again?

Both rules compare two quotable facts by the same speaker (the ``Name:`` prefix, or none for both) with the cosine
of their stored embeddings and the words they share. They run on the facts themselves, so they work the same in a
full refresh, in a delta against the facts a document already cites, and whatever the store later records about
repeats.

**Update**: the newer fact states the same attribute of the same subject with another
value — "Xavier lives in Paris." (January) then "Xavier moved to Berlin." (June); "my longest run is 12 km" then
"I ran 14 km, my longest run yet". It is decided when the two are related (cosine ≥ :data:`RELATED_COSINE`), the
newer one is strictly later, and either

* *a number changed*: both hold a number (digits or words) counting the same unit (the word after it: "12 km" /
  "14 km", "fourteen kilometres" / "eighteen kilometres") with different values, and either
  - both state a record ("my longest run so far" / "my longest run yet", "my best time", "now"), they speak of the
    same thing (a content word shared beside the unit: "run" / "ran"), and the newer value beats the older one
    (larger, for a maximum such as "longest"; any other value for "best", "record", "now"); or
  - the older fact states a standing value — it names no occasion of its own ("this morning", "on Sunday") — and
    the newer one repeats at least half of its other content words (the attribute);
  "I ran 8 km this morning" and "I ran 10 km this morning" are two runs, not an update; or
* *an attribute frame changed value*: both use words of one attribute frame (where someone lives, works, studies,
  whom they are with — :data:`FRAMES`) with a name right after it (within :data:`VALUE_WINDOW` words: "lives in
  Paris", "moved to Berlin", "works at Acme"), and the two name different things.

* *a frame changed by the newer statement's own word*: both use words of one frame (names, pets and preferences
  added to the frames: :data:`FRAMES`) and only the newer says it changed (:data:`CHANGE_WORDS`,
  :data:`CHANGE_PHRASES`: "now", "these days", quit, renamed, promoted …); or
* *a named thing ended*: the newer names a name the older names and says its state ended (:data:`ENDING_WORDS`:
  "Max passed away" after "two cats, Luna and Max").

Every rule needs the same subject (:func:`subject`): a statement opening on a relative or friend ("My brother lives
in Rome") is about them, never an update of the speaker's own. A number that changed on an occasion ("my rent went
up to 1000 euros a month") counts when the newer statement says it changed.

Bracketed annotations ("[shares a photo: two turtles on a log]") describe an attachment, not the speaker's
statement: they take no part in either rule.

Where it cannot decide: an attribute outside the frames stated without a number or a change word, a record
beaten without saying so ("my longest run, 14 km", then "I ran 18 km yesterday"), a change said only through
negation ("I don't run any more"), facts whose embeddings are far apart although they speak of
one attribute, and languages other than English (the frames are English words). Those facts stay side by side.

**Repeat**: the same statement in other words — cosine ≥ :data:`SAME_COSINE`, or cosine ≥
:data:`REPEAT_COSINE` with at least half of the shorter quote's content stems (and at least two) shared — that is
not an update and states no other action or occasion: the event verbs (started, finished, moved …), numbers and
time words of the two are the same ("the boat needs varnish" and "I finished varnishing the boat" are two
statements, however close their embeddings). Thresholds are on MiniLM (all-MiniLM-L6-v2) cosines of whole facts:
four paraphrases of "my dog is named Rex" score 0.86–0.99, two different statements on one topic by one speaker
0.75–0.85 (measured on LoCoMo speakers' turns, docs/architecture.md).
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache

from mindbank.engine.synthesis.salience import EVENT_VERBS, NUMBER_WORDS, TIME_WORDS, _tokens
from mindbank.engine.synthesis.selection import Candidate, stem, stems

RELATED_COSINE = 0.6
REPEAT_COSINE = 0.82
SAME_COSINE = 0.92
MIN_SHARED = 2
ATTRIBUTE_COVER = 0.5
VALUE_WINDOW = 4  # words after a frame word where its value (a name) is looked for

_NUMBER = re.compile(r"^\d+(?:[.,]\d+)?$")
# words that make a number a standing value rather than one occasion's ("my longest run", "so far", "now")
RECORD_WORDS = frozenset("longest best fastest highest biggest largest record total far now currently personal".split())
MAXIMA = frozenset("longest highest biggest largest farthest furthest most".split())  # a record beaten by more

# attribute frames: the words that say which attribute a statement is about ("lives", "moved" -> residence)
FRAMES: dict[str, frozenset[str]] = {
    "residence": frozenset(
        "live lives living lived move moved moving relocate relocated based home house apartment flat town city "
        "neighborhood neighbourhood".split()
    ),
    "work": frozenset(
        "work works working worked job jobs employed employer hired quit position role career company office "
        "promoted boss".split()
    ),
    "study": frozenset("study studies studying major degree school college university course enrolled".split()),
    "partner": frozenset(
        "dating married engaged single boyfriend girlfriend partner husband wife divorced relationship".split()
    ),
    "name": frozenset("name named names call calls called nickname renamed rename".split()),
    "pet": frozenset(
        "pet pets cat cats kitten dog dogs puppy snake parrot bird fish hamster rabbit horse turtle".split()
    ),
    "preference": frozenset("favourite favorite prefer prefers preferred vegan vegetarian pescatarian diet".split()),
}
# words that say a statement replaces an earlier state of the same attribute ("I work at Globex now", "Max passed
# away", "we renamed our puppy", "I quit Acme"): with a shared frame and subject they mark an update
CHANGE_WORDS = frozenset(
    """now nowadays anymore quit left moved renamed changed switched transferred promoted passed died lost adopted
    divorced engaged split became becoming""".split()
)
CHANGE_PHRASES = ("these days", "no longer", "any more", "went up", "went down", "went fully")
# words that end what a name stood for ("Max passed away", "we lost Kiwi", "I quit Acme"): a later statement naming
# the same name with one of them supersedes the older statement about it, whatever frame words either uses
ENDING_WORDS = frozenset("passed died lost quit left divorced split renamed sold".split())
# a statement about a relative or friend ("My brother lives in Rome") is about another subject than the speaker
OTHERS = frozenset(
    """brother brothers sister sisters mother mom mum dad father parents husband wife partner boyfriend girlfriend
    roommate flatmate neighbour neighbor friend friends boss son daughter kids cousin aunt uncle grandma grandpa
    grandmother grandfather coworker colleague colleagues team teacher coach""".split()
)


_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
NUMBER_VALUES: dict[str, float] = {w: float(i) for i, w in enumerate(_UNITS)} | {k: float(v) for k, v in _TENS.items()}
NUMBER_VALUES |= {"hundred": 100.0, "thousand": 1000.0}


def _value(token: str) -> float | None:
    if _NUMBER.match(token):
        return float(token.replace(",", ""))
    return NUMBER_VALUES.get(token)


@lru_cache(maxsize=16384)
def _numbers(text: str) -> dict[str, float]:  # cached: callers must not change the dict
    """``unit stem -> value`` for each number (digits or a number word) followed by a word ("12 km" ->
    ``{"km": 12.0}``, "fourteen kilometres" -> ``{"kilometr": 14.0}``); the first number of a unit wins."""
    tokens = [t.lower() for t in _tokens(text)]
    found: dict[str, float] = {}
    for i, token in enumerate(tokens[:-1]):
        value = _value(token)
        if value is not None and _value(tokens[i + 1]) is None:
            found.setdefault(stem(tokens[i + 1]), value)
    return found


@lru_cache(maxsize=16384)
def _occasion(text: str) -> frozenset[str]:
    """What makes a statement one action on one occasion: its event verbs, numbers and time words (stemmed)."""
    words = [t.lower() for t in _tokens(text)]
    marks = {stem(w) for w in words if w in EVENT_VERBS or w in TIME_WORDS or w in NUMBER_WORDS}
    return frozenset(marks | {w for w in words if _value(w) is not None})


@lru_cache(maxsize=16384)
def _occasion_words(text: str) -> frozenset[str]:
    return frozenset({t.lower() for t in _tokens(text)} & TIME_WORDS)


@lru_cache(maxsize=16384)
def _records(text: str) -> frozenset[str]:
    return frozenset({t.lower() for t in _tokens(text)} & RECORD_WORDS)


@lru_cache(maxsize=16384)
def _frame_values(text: str) -> dict[str, frozenset[str]]:  # cached: callers must not change the dict
    """Per attribute frame used in ``text``, the names within :data:`VALUE_WINDOW` words after a frame word
    ("Xavier lives in Paris." -> ``{"residence": {"paris"}}``); frames with no name there are left out."""
    values: dict[str, set[str]] = {}
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        tokens = _tokens(sentence)
        for i, token in enumerate(tokens):
            for frame, vocabulary in FRAMES.items():
                if token.lower() not in vocabulary:
                    continue
                names = {t.lower() for t in tokens[i + 1 : i + 1 + VALUE_WINDOW] if t[:1].isupper() and t != "I"}
                if names:
                    values.setdefault(frame, set()).update(names)
    return {k: frozenset(v) for k, v in values.items()}


def _statement(text: str) -> str:
    """``text`` without bracketed annotations (what an attachment shows is not what the speaker states)."""
    return re.sub(r"\[[^\]]*\]", " ", text)


def _later(a: datetime | None, b: datetime | None) -> bool:
    return a is not None and b is not None and a > b


@lru_cache(maxsize=16384)
def subject(text: str) -> str:
    """Whom a statement is about: the relative or friend it opens on ("My brother lives in Rome" -> ``"brother"``,
    "Our neighbour's cat …" -> ``"neighbour"``; one adjective allowed: "my best friend"), else ``"self"`` (the
    speaker, or a subject the two statements compare by their words)."""
    words = [t.lower().removesuffix("'s").removesuffix("’s") for t in _tokens(text)[:4]]
    if words[:1] in (["my"], ["our"]):
        for word in words[1:3]:
            if word in OTHERS:
                return word
    return "self"


@lru_cache(maxsize=16384)
def _frames(text: str) -> frozenset[str]:
    """The attribute frames whose words ``text`` uses."""
    words = {t.lower() for t in _tokens(text)}
    return frozenset(f for f, vocabulary in FRAMES.items() if words & vocabulary)


@lru_cache(maxsize=16384)
def _changes(text: str) -> bool:
    """Whether ``text`` says something replaced an earlier state (:data:`CHANGE_WORDS`, :data:`CHANGE_PHRASES`)."""
    lower = text.lower()
    return bool({t.lower() for t in _tokens(text)} & CHANGE_WORDS) or any(p in lower for p in CHANGE_PHRASES)


def updates(newer: Candidate, older: Candidate, cosine: float) -> bool:
    """Whether ``newer`` states a new value of what ``older`` said (module docstring)."""
    if newer.speaker != older.speaker or not _later(newer.when, older.when) or cosine < RELATED_COSINE:
        return False
    new_text, old_text = _statement(newer.quote.text), _statement(older.quote.text)
    if subject(new_text) != subject(old_text):
        return False  # "My brother lives in Rome" says nothing new about where the speaker lives
    if _number_changed(new_text, old_text):
        return True
    new_values, old_values = _frame_values(new_text), _frame_values(old_text)
    if any(not (new_values[f] & old_values[f]) for f in new_values.keys() & old_values.keys()):
        return True
    if _changes(old_text) or not _changes(new_text):
        return False
    # the same attribute frame, and the newer statement says it changed ("now", "quit", "passed away", …); or the
    # same name, and the newer statement says its state ended ("Max passed away" after "two cats, Luna and Max")
    if _frames(new_text) & _frames(old_text):
        return True
    ended = {t.lower() for t in _tokens(new_text)} & ENDING_WORDS
    return bool(ended and _names(new_text) & _names(old_text))


@lru_cache(maxsize=16384)
def _names(text: str) -> frozenset[str]:
    """Capitalised words of ``text`` other than a sentence's first word and "I" (lowercased)."""
    out: set[str] = set()
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        out.update(t.lower() for t in _tokens(sentence)[1:] if t[:1].isupper() and t != "I")
        first = _tokens(sentence)[:1]
        out.update(t.lower() for t in first if t[:1].isupper() and t != "I" and t.lower() not in _COMMON_OPENERS)
    return frozenset(out)


_COMMON_OPENERS = frozenset("my our we the a an it he she they this that there so and but we're it's".split())


def _number_changed(new_text: str, old_text: str) -> bool:
    """The numeric half of :func:`updates` (module docstring)."""
    new_numbers, old_numbers = _numbers(new_text), _numbers(old_text)
    changed = [u for u in new_numbers.keys() & old_numbers.keys() if new_numbers[u] != old_numbers[u]]
    if not changed:
        return False
    attribute = {w for w in stems(old_text) - set(old_numbers) if _value(w) is None}
    shared = attribute & stems(new_text)
    records = _records(old_text)
    if records:
        if not _records(new_text):
            return False  # "I ran 18 km yesterday" may beat "my longest run, 14 km", but it does not say so
        maxima = bool(records & MAXIMA)
        return bool(shared) and any(not maxima or new_numbers[u] > old_numbers[u] for u in changed)
    if not attribute:
        return False
    if _occasion_words(old_text) and not (_changes(new_text) and not _changes(old_text)):
        return False  # "8 km this morning" is one occasion, unless the newer says the value changed ("went up")
    return len(shared) / len(attribute) >= ATTRIBUTE_COVER


def repeats(a: Candidate, b: Candidate, cosine: float) -> bool:
    """Whether ``a`` and ``b`` are the same statement in other words (module docstring)."""
    if a.speaker != b.speaker or cosine < REPEAT_COSINE:
        return False
    occasions = _occasion(_statement(a.quote.text)) != _occasion(_statement(b.quote.text))
    if occasions or updates(a, b, cosine) or updates(b, a, cosine):
        return False
    if cosine >= SAME_COSINE:
        return True
    sa, sb = stems(a.quote.text), stems(b.quote.text)
    shared = len(sa & sb)
    return shared >= MIN_SHARED and shared / max(1, min(len(sa), len(sb))) >= 0.5
