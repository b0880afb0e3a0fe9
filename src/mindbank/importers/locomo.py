"""Load LoCoMo-style conversation files and turn their dialogue into retain items.

A LoCoMo file is a JSON object holding ``speaker_a``, ``speaker_b``, numbered ``session_N`` turn lists with
``session_N_date_time`` strings, and a ``qa`` list. It may instead wrap those conversation fields in a
``conversation`` key next to a top-level ``sample_id`` (and ``qa``).

Only the dialogue turns are ever read into retain items. The fields that carry the benchmark's answers
(``session_N_observation``, ``session_N_summary``, ``event_summary``, ``events_session_N``) are ignored
entirely: they are never copied into any record produced here.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mindbank.domain.records import RetainItem
from mindbank.domain.timeutil import parse_timestamp

__all__ = [
    "LocomoConversation",
    "LocomoQuestion",
    "LocomoSession",
    "LocomoTurn",
    "is_locomo_shaped",
    "load_locomo",
    "locomo_from_dict",
    "locomo_items",
    "parse_locomo_date",
    "speaker_tag",
    "split_evidence",
    "split_halves",
]

_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_TIME = re.compile(
    r"^\s*(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<ampm>[ap]\.?m\.?)\s+on\s+"
    r"(?P<day>\d{1,2})\s+(?P<month>[A-Za-z]+)\.?,?\s+(?P<year>\d{4})\s*$",
    re.IGNORECASE,
)
_MONTHS = {
    name: index
    for index, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}


@dataclass(frozen=True, slots=True)
class LocomoTurn:
    """One dialogue turn. ``image_caption`` is the turn's ``blip_caption`` when it shared a photo."""

    dia_id: str
    speaker: str
    text: str
    image_caption: str | None = None


@dataclass(frozen=True, slots=True)
class LocomoSession:
    """One numbered session: its start time (aware UTC) and its turns in spoken order."""

    number: int
    date: datetime
    turns: list[LocomoTurn] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LocomoQuestion:
    """One benchmark question.

    ``answer`` is the reference answer as text (``""`` when the file gives none, as for the adversarial
    category 5); ``adversarial_answer`` keeps the file's distractor answer when present.
    """

    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int
    adversarial_answer: str | None = None


@dataclass(frozen=True, slots=True)
class LocomoConversation:
    """A whole conversation: speakers, sessions ordered by number, and its questions."""

    sample_id: str
    speakers: tuple[str, ...]
    sessions: list[LocomoSession]
    qa: list[LocomoQuestion] = field(default_factory=list)

    @property
    def turn_count(self) -> int:
        """Total number of dialogue turns across all sessions."""
        return sum(len(session.turns) for session in self.sessions)

    def session(self, number: int) -> LocomoSession:
        """The session numbered ``number``. Raises ``KeyError`` when there is none."""
        for candidate in self.sessions:
            if candidate.number == number:
                return candidate
        raise KeyError(f"conversation {self.sample_id!r} has no session {number}")


def parse_locomo_date(value: str) -> datetime:
    """Parse a LoCoMo ``date_time`` such as ``"1:56 pm on 8 May, 2023"`` into an aware UTC datetime.

    The wall-clock time is taken as UTC. ISO-8601 strings are accepted as a fallback.
    Raises ``ValueError`` for anything else.
    """
    match = _DATE_TIME.match(value)
    if match is None:
        try:
            parsed = parse_timestamp(value)
        except ValueError:
            parsed = None
        if parsed is None:
            raise ValueError(f"unrecognised LoCoMo date_time {value!r}")
        return parsed
    month = _MONTHS.get(match["month"].lower())
    if month is None:
        raise ValueError(f"unrecognised month in LoCoMo date_time {value!r}")
    hour = int(match["hour"])
    if not 1 <= hour <= 12:
        raise ValueError(f"hour out of range in LoCoMo date_time {value!r}")
    hour = hour % 12 + (12 if match["ampm"].lower().startswith("p") else 0)
    try:
        return datetime(int(match["year"]), month, int(match["day"]), hour, int(match["minute"]), tzinfo=UTC)
    except ValueError as exc:
        raise ValueError(f"invalid date in LoCoMo date_time {value!r}: {exc}") from exc


def split_evidence(entries: Iterable[Any]) -> tuple[str, ...]:
    """Flatten evidence entries into dia_ids: each entry is split on ``;`` and whitespace, empties dropped.

    ``["D8:6; D9:17", "D1:3"]`` -> ``("D8:6", "D9:17", "D1:3")``. Non-string entries are stringified.
    """
    out: list[str] = []
    for entry in entries:
        out.extend(part for part in re.split(r"[;\s]+", str(entry)) if part)
    return tuple(out)


def speaker_tag(speaker: str) -> str:
    """The tag for a speaker: ``"speaker:"`` + lowercased name, whitespace runs replaced by ``-``."""
    return "speaker:" + "-".join(speaker.lower().split())


def _conversation_body(data: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = data.get("conversation")
    if isinstance(inner, Mapping):
        return inner
    return data


def is_locomo_shaped(data: Any) -> bool:
    """True when ``data`` (parsed JSON) looks like a LoCoMo conversation, flat or ``conversation``-wrapped."""
    if not isinstance(data, Mapping):
        return False
    body = _conversation_body(data)
    if not ("speaker_a" in body and "speaker_b" in body):
        return False
    return any(_SESSION_KEY.fullmatch(key) for key in body)


def _as_str(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _parse_turn(raw: Any, session: int, index: int) -> LocomoTurn:
    where = f"session_{session} turn {index}"
    if not isinstance(raw, Mapping):
        raise ValueError(f"LoCoMo {where} is not an object")
    for key in ("speaker", "dia_id", "text"):
        if not isinstance(raw.get(key), str):
            raise ValueError(f"LoCoMo {where} has no string {key!r}")
    caption = raw.get("blip_caption")
    caption = caption.strip() if isinstance(caption, str) and caption.strip() else None
    return LocomoTurn(dia_id=raw["dia_id"], speaker=raw["speaker"], text=raw["text"], image_caption=caption)


def _parse_question(raw: Any, index: int) -> LocomoQuestion:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("question"), str):
        raise ValueError(f"LoCoMo qa entry {index} has no string 'question'")
    evidence = raw.get("evidence") or []
    if isinstance(evidence, str):
        evidence = [evidence]
    try:
        category = int(raw.get("category", 0))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"LoCoMo qa entry {index} has a non-integer category") from exc
    answer = raw.get("answer")
    adversarial = raw.get("adversarial_answer")
    return LocomoQuestion(
        question=raw["question"],
        answer="" if answer is None else _as_str(answer),
        evidence=split_evidence(evidence),
        category=category,
        adversarial_answer=None if adversarial is None else _as_str(adversarial),
    )


def locomo_from_dict(data: Any, *, default_sample_id: str = "conversation") -> LocomoConversation:
    """Build a conversation from parsed LoCoMo JSON (flat or ``conversation``-wrapped).

    Sessions with a date but no (or an empty) turn list are skipped. ``sample_id`` comes from the data
    (top level, then the wrapped body) or else ``default_sample_id``.
    Raises ``ValueError`` when the data is not LoCoMo-shaped or a session/turn/question is malformed.
    """
    if not is_locomo_shaped(data):
        raise ValueError(
            "not a LoCoMo conversation: expected an object with 'speaker_a', 'speaker_b' and 'session_N' "
            "lists (optionally wrapped in a 'conversation' key)"
        )
    body = _conversation_body(data)
    sample_id = data.get("sample_id", body.get("sample_id"))
    sample_id = default_sample_id if sample_id in (None, "") else _as_str(sample_id)
    speakers = (_as_str(body["speaker_a"]), _as_str(body["speaker_b"]))

    sessions: list[LocomoSession] = []
    numbers = sorted(int(m.group(1)) for key in body if (m := _SESSION_KEY.fullmatch(key)))
    for number in numbers:
        raw_turns = body[f"session_{number}"]
        if raw_turns is None or raw_turns == []:
            continue
        if not isinstance(raw_turns, list):
            raise ValueError(f"LoCoMo session_{number} is not a list of turns")
        raw_date = body.get(f"session_{number}_date_time")
        if not isinstance(raw_date, str):
            raise ValueError(f"LoCoMo session_{number} has turns but no session_{number}_date_time")
        turns = [_parse_turn(raw, number, i) for i, raw in enumerate(raw_turns)]
        sessions.append(LocomoSession(number=number, date=parse_locomo_date(raw_date), turns=turns))

    raw_qa = data.get("qa", body.get("qa")) or []
    if not isinstance(raw_qa, list):
        raise ValueError("LoCoMo 'qa' is not a list")
    qa = [_parse_question(raw, i) for i, raw in enumerate(raw_qa)]
    return LocomoConversation(sample_id=sample_id, speakers=speakers, sessions=sessions, qa=qa)


def load_locomo(path: str | Path) -> LocomoConversation:
    """Read a LoCoMo JSON file. ``sample_id`` is the file's ``sample_id`` or else the file stem.

    Raises ``ValueError`` for invalid JSON or a file that is not LoCoMo-shaped, ``OSError`` if unreadable.
    """
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{file}: not valid JSON ({exc})") from exc
    try:
        return locomo_from_dict(data, default_sample_id=file.stem)
    except ValueError as exc:
        raise ValueError(f"{file}: {exc}") from exc


def _format_day(value: datetime) -> str:
    return f"{value.day} {value:%B %Y}"


def locomo_items(conv: LocomoConversation, sessions: Iterable[int] | None = None) -> list[RetainItem]:
    """One ``RetainItem`` per dialogue turn, in conversation order.

    Each item: content ``"{speaker}: {text}"`` (plus ``" [shares a photo: {caption}]"`` for photo turns),
    timestamp = session date + the turn's 0-based index in its session as seconds, context
    ``"{sample_id} session {n}, {d Month YYYY}"``, metadata keys ``dia_id``, ``speaker``, ``session`` and
    ``conversation``, document_id ``"{sample_id}:{dia_id}"`` and tags ``("speaker:<name>",)``.
    ``sessions`` restricts output to those session numbers; raises ``ValueError`` naming any number that is
    not a session of the conversation.
    """
    wanted: set[int] | None = None
    if sessions is not None:
        wanted = set(sessions)
        missing = wanted - {session.number for session in conv.sessions}
        if missing:
            raise ValueError(f"conversation {conv.sample_id!r} has no session(s) {sorted(missing)}")
    items: list[RetainItem] = []
    for session in conv.sessions:
        if wanted is not None and session.number not in wanted:
            continue
        context = f"{conv.sample_id} session {session.number}, {_format_day(session.date)}"
        for index, turn in enumerate(session.turns):
            content = f"{turn.speaker}: {turn.text}"
            if turn.image_caption:
                content += f" [shares a photo: {turn.image_caption}]"
            items.append(
                RetainItem(
                    content=content,
                    timestamp=session.date + timedelta(seconds=index),
                    context=context,
                    metadata={
                        "dia_id": turn.dia_id,
                        "speaker": turn.speaker,
                        "session": str(session.number),
                        "conversation": conv.sample_id,
                    },
                    document_id=f"{conv.sample_id}:{turn.dia_id}",
                    tags=(speaker_tag(turn.speaker),),
                )
            )
    return items


def split_halves(conv: LocomoConversation) -> tuple[list[int], list[int]]:
    """Session numbers of the first half (the first ceil(n/2) sessions) and of the second half."""
    numbers = [session.number for session in conv.sessions]
    cut = math.ceil(len(numbers) / 2)
    return numbers[:cut], numbers[cut:]
