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

from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from mindbank.domain.records import MemoryUnit, ScoredMemory
from mindbank.domain.text import strip_speaker
from mindbank.engine.synthesis.salience import Quote, quote
from mindbank.engine.synthesis.selection import Candidate

MAX_HISTORY = 3
HISTORY_OPEN = " (earlier, "


def speaker_of(text: str) -> str:
    """The ``Name`` of a ``Name: …`` prefix ("" when the text has none)."""
    text = text.strip()
    body = strip_speaker(text)
    return text[: len(text) - len(body)].strip().rstrip(":") if body != text else ""


def statement_of(fact_text: str) -> str | None:
    """The observation text a fact states (module docstring), or None when it says nothing worth keeping."""
    found = quote(fact_text)
    if found is None:
        return None
    speaker = speaker_of(fact_text)
    return f"{speaker}: {found.text}" if speaker else found.text


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
