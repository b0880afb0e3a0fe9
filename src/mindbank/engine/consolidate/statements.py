"""What an offline observation says: a fact's informative statement, attributed, and the history of earlier values.

An observation formed without a model states the quotable part of one fact (the briefing's salience bar,
:func:`mindbank.engine.synthesis.salience.quote`: informative sentences kept, questions, greetings, thanks and
reactions dropped) with the fact's ``Name:`` speaker prefix, so it reads on its own ("Deborah: Max is my mother's
cat … I took him when my mother passed away."). A fact with nothing quotable forms no observation. Its dates are
the fact's (``occurred_start`` / ``mentioned_at``).

When a later fact updates the attribute an observation states, the observation states the new value and keeps the
earlier ones as history, newest first, after the statement: ``"Xavier: I moved to Berlin. (earlier, 3 January
2024: I live in Paris.)"`` — at most :data:`MAX_HISTORY` entries. History is part of the text, so every surface
that shows an observation (recall, pages, reflect, the control plane) shows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from mindbank.domain.records import MemoryUnit, ScoredMemory
from mindbank.domain.text import strip_speaker
from mindbank.engine.consolidate.addressed import left_out, observable, to_listener, without_addressee
from mindbank.engine.synthesis.salience import (
    NUMBER_WORDS,
    TIME_WORDS,
    Quote,
    content_words,
    quote,
    score_sentence,
    split_sentences,
    without_opener,
)
from mindbank.engine.synthesis.selection import Candidate

MAX_HISTORY = 3
# words (not stopwords) an observation states at least, speaker prefix aside: fewer do not read on their own
# without the conversation around them ("Family time matters to me.", "They're my biggest motivation.")
MIN_WORDS = 6
# ... unless it names something (a name, a place, a number): "Xavier lives in Paris." says enough
MIN_SPECIFIC_WORDS = 3
_VOCATIVE = re.compile(r",\s*[A-Z][a-z]+\s*([.!?])")
_NOT_NAMES = frozenset({"I", "I'm", "I've", "I'd", "I'll", "OK", "Ok"})
HISTORY_OPEN = " (earlier, "


def speaker_of(text: str) -> str:
    """The ``Name`` of a ``Name: …`` prefix ("" when the text has none)."""
    text = text.strip()
    body = strip_speaker(text)
    return text[: len(text) - len(body)].strip().rstrip(":") if body != text else ""


def _specific(text: str) -> bool:
    """Whether a statement names something checkable: a name or place (:func:`names`, a name it is addressed to
    left out) or a number in digits ("Xavier lives in Paris.", "I ran 14 km.")."""
    text = _VOCATIVE.sub(r"\1", text)  # "Way to go, Maria!": the name is whom it is said to, not what it says
    return bool(names(text)) or any(ch.isdigit() for ch in text)


def _fuller(fact_text: str) -> str:
    """Every sentence of a fact that is neither a question, a request nor scored below zero (glue), with any photo
    description, verbatim and in order: what a short quotable statement says together with its turn. A sentence
    whose pronoun has lost its referent (``referents.py``) comes only right after the statement that may name it
    ("Congrats on your degree, John! It must have been quite the adventure." keeps neither as a statement)."""
    kept: list[str] = []
    previous = None
    for sentence in split_sentences(strip_speaker(fact_text)):
        scored = score_sentence(sentence)
        plain = scored.score >= 0 and not scored.question and not scored.request and scored.plain_words > 0
        plain = plain and not left_out(sentence)
        if plain and (not scored.referring or (previous is not None and previous.antecedent and kept)):
            kept.append(sentence)
            previous = scored
        else:
            previous = None
    return " ".join(kept)


def _addressless(body: str) -> str:
    """``body`` without leading openers: an observation states knowledge, not the address to the other person
    ("Hey Maria, since we last chatted, I …" -> "Since we last chatted, I …")."""
    for _ in range(2):
        body = without_opener(body)
    return body


def _short(body: str) -> bool:
    """Whether ``body`` says too little to read on its own (:data:`MIN_WORDS`, :data:`MIN_SPECIFIC_WORDS`; a
    statement to the listener needs :data:`MIN_WORDS` whatever it names: the name is often the listener's)."""
    specific = _specific(body) and not to_listener(body)
    return len(content_words(body)) < (MIN_SPECIFIC_WORDS if specific else MIN_WORDS)


def stated(fact_text: str) -> tuple[str, bool] | None:
    """``(text, stands alone)`` of what a fact states (module docstring): its quotable sentences, or — when those
    say too little — every sentence of the turn that is not a question or glue (its photo description included),
    without a leading greeting or vocative, and without what :mod:`~mindbank.engine.consolidate.addressed` leaves
    out of an observation (names said to the listener, reactions, exhortations and compliments). A statement that is
    still short does not stand alone: it may repeat or update an observation, never form one; a short one said to
    the listener (:func:`~mindbank.engine.consolidate.addressed.to_listener`) states nothing. None when the fact
    has nothing quotable."""
    speaker = speaker_of(fact_text)
    body = without_addressee(strip_speaker(fact_text))
    turn = f"{speaker}: {body}" if speaker else body  # quote() strips the prefix it is given, and only that
    found = quote(turn)
    said = observable(found.text) if found is not None else None
    if said is None:
        return None
    body = _addressless(said)
    if _short(body):
        fuller = _addressless(_fuller(turn))
        body = fuller if not _short(fuller) else body
    if _short(body) and to_listener(body):
        return None
    return (f"{speaker}: {body}" if speaker else body), not _short(body)


def day(when: datetime | None) -> str:
    """``3 January 2024`` (``"undated"`` for None): how a history entry is dated."""
    return f"{when.day} {when:%B %Y}" if when is not None else "undated"


def split_history(text: str) -> tuple[str, list[tuple[str, str]]]:
    """An observation's text as ``(current statement, [(date, earlier statement without speaker), …])``, newest
    entry first; a text without history gives an empty list."""
    entries: list[tuple[str, str]] = []
    while text.endswith(")") and (at := text.rfind(HISTORY_OPEN)) >= 0:
        when, sep, said = text[at + len(HISTORY_OPEN) : -1].partition(": ")
        if not sep:
            break
        entries.insert(0, (when, said))
        text = text[:at]
    return text, entries


def with_history(current: str, history: list[tuple[str, str]]) -> str:
    """The stored text: ``current`` followed by its history entries (newest first, at most :data:`MAX_HISTORY`)."""
    return current + "".join(f"{HISTORY_OPEN}{when}: {said})" for when, said in history[:MAX_HISTORY])


@dataclass(slots=True)
class Statement:
    """A statement being compared: its unit (text = the current statement, dates of its fact), vector and quote."""

    unit: MemoryUnit
    vector: np.ndarray
    quoted: Quote

    @property
    def candidate(self) -> Candidate:
        """The shape the update and repeat rules of :mod:`mindbank.engine.synthesis.updates` compare."""
        return Candidate(ScoredMemory(self.unit, 0.0), self.quoted, self.vector, 0.0)


def statement(unit: MemoryUnit, text: str, vector: np.ndarray) -> Statement | None:
    """A :class:`Statement` of ``unit`` stating ``text`` (None when ``text`` has nothing quotable)."""
    found = quote(text)
    return None if found is None else Statement(replace(unit, text=text), vector, found)


def numbers(text: str) -> frozenset[str]:
    """The numbers a statement gives, digits or number words ("seven-year-old" gives "seven")."""
    words = re.findall(r"[A-Za-z0-9]+", text.lower())
    return frozenset(w for w in words if w.isdigit() or w in NUMBER_WORDS)


def _time_word(word: str) -> bool:
    lower = word.lower()
    return lower in TIME_WORDS or lower[:-1] in TIME_WORDS  # "Sundays"


def names(text: str) -> frozenset[str]:
    """The names a statement gives: capitalised words after the first word of each sentence (not "I", not days
    and months: "on Sundays" and "every Sunday" name no one)."""
    found: set[str] = set()
    for sentence in re.split(r"(?<=[.!?])\s+", strip_speaker(text)):
        words = re.findall(r"[A-Za-z][\w'’-]*", sentence)[1:]
        found.update(w for w in words if w[0].isupper() and w not in _NOT_NAMES and not _time_word(w))
    return frozenset(found)
