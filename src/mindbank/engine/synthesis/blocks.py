"""The briefing block: one quoted fact, its repeats and its earlier values, as one markdown list item.

Shape (one block of the structured document; the nested line only when the fact updated an earlier one)::

    - (14 Jun 2025) Xavier: I moved to Berlin. (mentioned 2 times, last 2 Jul 2025) [mem:b] [mem:c]
      - earlier (12 Jan 2025): I live in Paris. [mem:a]

* the date is when the quoted fact happened (else when it was said), the speaker prefix is the fact's own; a quote
  in the second person names whom it was said to (``Maria, to John: … your exercise routine …``:
  ``selection.Candidate.listener``), since it tells of the listener's life, not only the speaker's;
* the quote is what ``salience.quote`` keeps of the fact, verbatim;
* "(mentioned N times, last D)" appears when N ≥ 2 facts say the same thing (``updates.repeats``); the block
  cites all of them, the quoted one first;
* each "earlier" line is an older value of the same attribute (``updates.updates``), newest first.

:func:`read_block` reads a block back (count, last date, citations), which is all the delta editor needs to add a
repeat to a block without touching its quote. Everything else of a block is opaque text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from mindbank.domain.document import format_citation
from mindbank.engine.synthesis.selection import Candidate

MENTION_WEIGHT = 0.5  # worth a block gains per natural-log unit of mentions: what is said again matters more
_NOTE = re.compile(r" \(mentioned (\d+) times, last (\d{1,2} [A-Z][a-z]{2} \d{4})\)")
_CITATIONS = re.compile(r"(?: \[mem:[A-Za-z0-9_-]+\])+$")


def day(when: datetime | None) -> str:
    """``4 May 2025`` (empty for no date)."""
    return f"{when.day} {when:%b %Y}" if when else ""


@dataclass(slots=True)
class Unit:
    """What one block says: the current fact, the facts that repeat it, and its earlier values (newest first)."""

    current: Candidate
    repeats: list[Candidate] = field(default_factory=list)
    earlier: list[Candidate] = field(default_factory=list)

    @property
    def members(self) -> list[Candidate]:
        """Every fact the block cites."""
        return [self.current, *self.repeats, *self.earlier]

    @property
    def mentions(self) -> int:
        """How many times the current statement was said: each fact saying it (the current fact and its repeats)
        counts as often as it was retained (``MemoryUnit.mention_count``, the repeats recorded at retain time)."""
        return sum(max(1, c.hit.memory.mention_count) for c in (self.current, *self.repeats))

    @property
    def worth(self) -> float:
        """The current fact's worth (``selection.Candidate.worth``), plus :data:`MENTION_WEIGHT` × ln(mentions)."""
        return self.current.worth + MENTION_WEIGHT * math.log(self.mentions)

    @property
    def last(self) -> datetime | None:
        """The newest date among the current fact and its repeats, a repeat recorded at retain time included
        (``MemoryUnit.last_mentioned_at``)."""
        members = (self.current, *self.repeats)
        dates = [c.when for c in members if c.when is not None]
        dates += [m for c in members if c.hit.memory.mention_count > 1 and (m := c.hit.memory.last_mentioned_at)]
        return max(dates) if dates else None


def mention_note(count: int, last: datetime | None) -> str:
    """`` (mentioned 3 times, last 4 May 2025)`` for a count of 2 or more, else ``""``."""
    if count < 2:
        return ""
    return f" (mentioned {count} times, last {day(last)})" if last else f" (mentioned {count} times)"


def _line(candidate: Candidate, *, speaker: bool) -> str:
    # a sentence said to the other speaker is theirs as much as the speaker's: "Maria, to John: … your routine …"
    said = f"{candidate.speaker}, to {candidate.listener}" if candidate.listener else candidate.speaker
    prefix = f"{said}: " if speaker and candidate.speaker else ""
    return f"{prefix}{candidate.quote.text}"


def render_unit(unit: Unit) -> str:
    """The block text of ``unit`` (module docstring)."""
    current = unit.current
    date = f"({day(current.when)}) " if current.when else ""
    cited = " ".join(format_citation(c.id) for c in (current, *unit.repeats))
    lines = [f"- {date}{_line(current, speaker=True)}{mention_note(unit.mentions, unit.last)} {cited}"]
    for older in unit.earlier:
        when = f" ({day(older.when)})" if older.when else ""
        lines.append(f"  - earlier{when}: {_line(older, speaker=False)} {format_citation(older.id)}")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class BlockInfo:
    """What the delta editor reads of an existing block: its first line split into the quote part, the mention
    count (1 without a note), the last-mentioned date text, the citations of that line, and the rest (earlier
    lines) verbatim."""

    head: str
    count: int
    last: str
    cited: tuple[str, ...]
    rest: str


def read_block(text: str) -> BlockInfo:
    """Split a block into :class:`BlockInfo`; a block not written by :func:`render_unit` reads as one mention."""
    first, _, rest = text.partition("\n")
    citations = _CITATIONS.search(first)
    cited = tuple(re.findall(r"\[mem:([A-Za-z0-9_-]+)\]", citations.group(0))) if citations else ()
    head = first[: citations.start()] if citations else first
    note = _NOTE.search(head)
    count, last = (int(note.group(1)), note.group(2)) if note else (1, "")
    if note:
        head = head[: note.start()] + head[note.end() :]
    return BlockInfo(head=head, count=count, last=last, cited=cited, rest=rest)


def add_repeats(text: str, extra: Sequence[Candidate], last: datetime | None) -> str:
    """``text`` (a block) with ``extra`` facts cited as repeats: the count grows by ``len(extra)``, the last date
    becomes ``last`` when later than the block's; the quote and earlier lines are kept as they are."""
    info = read_block(text)
    count = info.count + len(extra)
    known = _parse_day(info.last)
    newest = max((d for d in (known, last) if d is not None), default=None)
    cited = [*info.cited, *(c.id for c in extra if c.id not in info.cited)]
    note = mention_note(count, newest)
    first = f"{info.head}{note} {' '.join(format_citation(i) for i in cited)}"
    return first + ("\n" + info.rest if info.rest else "")


def _parse_day(text: str) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.strptime(text, "%d %b %Y").replace(tzinfo=UTC)
    except ValueError:
        return None
