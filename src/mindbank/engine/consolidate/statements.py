"""What an offline observation says: a fact's informative statement, attributed, and the history of earlier values.

An observation formed without a model states the quotable part of one fact (the briefing's salience bar,
:func:`mindbank.engine.synthesis.salience.quote`: informative sentences kept, questions, greetings, thanks and
reactions dropped) with the fact's ``Name:`` speaker prefix, so it reads on its own ("Deborah: Max is my mother's
cat … I took him when my mother passed away."). A fact with nothing quotable forms no observation. Its dates are
the fact's (``occurred_start`` / ``mentioned_at``). A conversation turn is read with the other speaker's turn
before it, by the rules the briefing quotes by (``synthesis/exchange.py``): a reaction to that turn's news states
nothing, and a reply that leans on its question, or says little beside it, states the question in front
(:func:`stated`).

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
from mindbank.engine.synthesis.exchange import (
    asked_note,
    listener_of,
    question_of,
    question_words,
    reacts_to,
    split_asked_note,
)
from mindbank.engine.synthesis.salience import (
    NUMBER_WORDS,
    TIME_WORDS,
    Quote,
    content_words,
    plain_words,
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


def _specific(text: str, listener: str = "") -> bool:
    """Whether a statement names something checkable: a name or place (:func:`names`, a name it is addressed to
    left out: after a comma, or the ``listener``'s anywhere) or a number in digits ("Xavier lives in Paris.", "I
    ran 14 km.")."""
    text = _VOCATIVE.sub(r"\1", text)  # "Way to go, Maria!": the name is whom it is said to, not what it says
    return bool(names(text) - {listener}) or any(ch.isdigit() for ch in text)


def _fuller(fact_text: str, turn_before: str = "") -> str:
    """Every sentence of a fact that is neither a question, a request, scored below zero (glue) nor a reaction to
    the news of ``turn_before`` (``exchange.reacts_to``), with any photo description, verbatim and in order: what a
    short quotable statement says together with its turn. A sentence whose pronoun has lost its referent
    (``referents.py``) comes only right after the statement that may name it ("Congrats on your degree, John! It
    must have been quite the adventure." keeps neither as a statement)."""
    kept: list[str] = []
    previous = None
    for sentence in split_sentences(strip_speaker(fact_text)):
        scored = score_sentence(sentence)
        plain = scored.score >= 0 and not scored.question and not scored.request and scored.plain_words > 0
        reaction = bool(turn_before) and not sentence.startswith("[") and reacts_to(sentence, turn_before)
        plain = plain and not left_out(sentence) and not reaction
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


def _short(body: str, listener: str = "") -> bool:
    """Whether ``body`` says too little to read on its own (:data:`MIN_WORDS`, :data:`MIN_SPECIFIC_WORDS`; a
    statement to the listener needs :data:`MIN_WORDS` whatever it names: the name is often the listener's)."""
    specific = _specific(body, listener) and not to_listener(body)
    return len(content_words(body)) < (MIN_SPECIFIC_WORDS if specific else MIN_WORDS)


def _brief(body: str) -> bool:
    """Whether ``body`` has fewer than :data:`MIN_WORDS` content words: it may stand alone when it names something,
    but reads as a reply when the turn before asked what it answers."""
    return len(content_words(body)) < MIN_WORDS


def stated(fact_text: str, previous: str = "") -> tuple[str, bool] | None:
    """``(text, stands alone)`` of what a fact states (module docstring): its quotable sentences, or — when those
    say too little — every sentence of the turn that is not a question or glue (its photo description included),
    without a leading greeting or vocative, and without what :mod:`~mindbank.engine.consolidate.addressed` leaves
    out of an observation (names said to the listener, reactions, exhortations and compliments). A statement that is
    still short does not stand alone: it may repeat or update an observation, never form one; a short one said to
    the listener (:func:`~mindbank.engine.consolidate.addressed.to_listener`) states nothing. None when the fact
    has nothing quotable.

    ``previous``: the other speaker's turn just before this one (``exchange.previous_turns``; "" when unknown),
    read by the briefing's rules (``salience.quote``): a sentence reacting to its news states nothing; an answer
    leaning on its question opens with the question as an editorial note, and so does a statement of fewer than
    :data:`MIN_WORDS` content words answering a question that says something (a content word: what the briefing
    lets an answer borrow, ``exchange.question_words``):
    ``[Melanie asked: "What's your favorite childhood book?"] I loved reading "Charlotte's Web" as a kid.``. The
    question counts with it when deciding whether it stands alone; the other speaker's name in it is their
    address, not a name it gives."""
    speaker = speaker_of(fact_text)
    listener = listener_of(previous)
    body = without_addressee(strip_speaker(fact_text))
    turn = f"{speaker}: {body}" if speaker else body  # quote() strips the prefix it is given, and only that
    found = quote(turn, previous)
    note, quoted = split_asked_note(found.text) if found is not None else ("", "")
    said = observable(quoted) if found is not None else None
    if said is None:
        return None
    body = _addressless(said)
    if _brief(body) and not note:  # read with the rest of its turn (a note's answer leans on the question instead)
        fuller = _addressless(_fuller(turn, previous))
        more = len(content_words(fuller)) > len(content_words(body))
        if not _short(fuller, listener) and (more or _short(body, listener)):
            body = fuller
    if _short(body, listener) and to_listener(body):
        return None
    if not note and _brief(body) and question_words(previous):
        note = asked_note(previous)
    asked = question_of(previous) if note else ""
    alone = not _short(body, listener) or bool(asked and not _short(f"{asked} {body}", listener))
    return (f"{speaker}: {note}{body}" if speaker else f"{note}{body}"), alone


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
    """A :class:`Statement` of ``unit`` stating ``text`` (None when ``text`` says nothing). What it is compared by
    is what the speaker said: the quote of ``text`` without the question it may be said behind (``[Tim asked:
    "…"]``, :func:`stated`), or all of that when the answer is not quotable alone ("It's Shia Labeouf!")."""
    speaker = speaker_of(text)
    rest = split_asked_note(strip_speaker(text))[1]
    found = quote(f"{speaker}: {rest}" if speaker else rest)
    words = len(plain_words(rest))
    if found is None and words:
        found = Quote(rest, 0.0, words)
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
