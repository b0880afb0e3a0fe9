"""Time cues in text: does a query ask *when*, does a memory say *when*?

Conversational memories date events relative to the moment they were said ("yesterday", "last weekend", "two
weeks ago") or by name ("in May", "on Friday", "2022"). A question about time ("When did ...", "How long ago ...",
"What year ...") is answered by such a memory, so recall favours memories that carry a cue when the query asks for
one. Both tests are word lookups over fixed vocabularies. A query that names a calendar period ("in July 2022")
is parsed by ``dateutil`` (:func:`named_period`), and recall favours memories dated inside it.
"""

from __future__ import annotations

import calendar
import functools
import re
from datetime import UTC, datetime

from dateutil import parser as date_parser

_MONTHS = "january february march april may june july august september october november december"
_DAYS = "monday tuesday wednesday thursday friday saturday sunday"
_RELATIVE = (
    "yesterday today tonight tomorrow ago recently lately weekend week weeks month months year years "
    "morning evening night afternoon earlier later last next since before after during summer winter spring autumn "
    "fall christmas birthday anniversary holiday holidays vacation weekday"
)
# the calendar's proper names ("May", "Saturdays", "Christmas"): capitalised, yet naming no one and nothing a fact
# is about
CALENDAR_NAMES = frozenset(f"{_MONTHS} {_DAYS} christmas easter".split()) | frozenset(d + "s" for d in _DAYS.split())
_CUE_WORDS = frozenset(f"{_MONTHS} {_DAYS} {_RELATIVE}".split()) - {"may"}  # "may" is mostly the verb
_WORD = re.compile(r"[a-z]+|\d{4}")
# phrases that open or carry a question about time
_ASKS = re.compile(
    r"^\s*when\b|\bhow long\b|\bhow many (?:years|months|weeks|days)\b|\bwhat (?:year|month|day|date|time)\b|"
    r"\bwhich (?:year|month|day|date)\b|\bsince when\b",
    re.IGNORECASE,
)


def asks_when(query: str) -> bool:
    """Whether ``query`` asks about time: opens with "when", or asks "how long", "what year/month/day/date/time",
    "which year/month/day/date", "how many years/months/weeks/days" or "since when"."""
    return bool(_ASKS.search(query))


@functools.lru_cache(maxsize=16384)
def says_when(text: str) -> bool:
    """Whether ``text`` names a time: a month or weekday, a relative expression ("yesterday", "last week", "ago",
    "this weekend", ...), a season or dated occasion, or a four-digit year. Memoised by text: recall asks it of the
    same candidates query after query (and twice per query, once per fusion)."""
    for word in _WORD.findall(text.lower()):
        if word in _CUE_WORDS or (len(word) == 4 and word.isdigit() and "1900" <= word <= "2099"):
            return True
    return False


_FIRST = datetime(1, 1, 1, tzinfo=UTC)
_SECOND = datetime(2, 2, 2, tzinfo=UTC)
_PUNCTUATION = re.compile(r"[?!;\"()]")
_YEAR = re.compile(r"\b(19|20)\d{2}\b")


def named_period(query: str) -> tuple[datetime, datetime] | None:
    """The calendar period ``query`` names, as an inclusive ``(start, end)`` in UTC: a day, a month or a year.

    Parsed by ``dateutil`` (fuzzy: the other words are skipped). The query must name a four-digit year (``"in July
    2022"``, ``"on 7 May 2023"``, ``"in 2022"``); a bare month or weekday names no single period, and a number alone
    is not read as a date. What the text fixed is found by parsing twice with two different defaults: a field that
    comes out the same both times was in the text. None when no period is named or the text does not parse.
    """
    if not _YEAR.search(query):
        return None
    text = _PUNCTUATION.sub(" ", query)  # dateutil reads "2022?" as no year
    try:
        first = date_parser.parse(text, fuzzy=True, default=_FIRST)
        second = date_parser.parse(text, fuzzy=True, default=_SECOND)
    except (ValueError, OverflowError):
        return None
    if first.year != second.year or str(first.year) not in query:
        return None
    if first.month != second.month:
        return datetime(first.year, 1, 1, tzinfo=UTC), datetime(first.year, 12, 31, 23, 59, 59, tzinfo=UTC)
    if first.day != second.day:
        last = calendar.monthrange(first.year, first.month)[1]
        start = datetime(first.year, first.month, 1, tzinfo=UTC)
        return start, datetime(first.year, first.month, last, 23, 59, 59, tzinfo=UTC)
    start = datetime(first.year, first.month, first.day, tzinfo=UTC)
    return start, start.replace(hour=23, minute=59, second=59)
