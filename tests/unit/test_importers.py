"""Importers: LoCoMo conversations, the bundled sample conversation, and JSON Lines chat files."""

from __future__ import annotations

import itertools
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mindbank.importers import (
    detect_format,
    load_items,
    load_jsonl_chat,
    load_locomo,
    locomo_items,
    sample_conversation_path,
    split_halves,
)
from mindbank.importers.locomo import parse_locomo_date, split_evidence

LOCOMO_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo"
CONV26 = LOCOMO_DIR / "conv-26.json"
SAMPLE = sample_conversation_path()
ANSWER_KEY = re.compile(r"session_\d+_(observation|summary)|event_summary|events_session_\d+")

needs_locomo = pytest.mark.skipif(not CONV26.exists(), reason="LoCoMo data directory not present")


def _raw(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _answer_texts(value: Any) -> list[str]:
    """Every string nested anywhere inside an answer-carrying field."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _answer_texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in _answer_texts(item)]
    return []


def _write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------- LoCoMo


@needs_locomo
def test_conv26_counts_and_sessions() -> None:
    conv = load_locomo(CONV26)
    assert conv.sample_id == "conv-26"
    assert conv.speakers == ("Caroline", "Melanie")
    assert [s.number for s in conv.sessions] == list(range(1, 20))  # 20..35 have a date but no turns
    assert conv.turn_count == 419
    items = locomo_items(conv)
    assert len(items) == 419
    assert conv.sessions[0].date == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert conv.sessions[15].date == datetime(2023, 9, 13, 0, 9, tzinfo=UTC)  # "12:09 am"


@needs_locomo
def test_conv26_never_ingests_answer_fields() -> None:
    raw = _raw(CONV26)
    answer_keys = [key for key in raw if ANSWER_KEY.fullmatch(key)]
    assert any(k.endswith("_summary") for k in answer_keys)
    assert any(k.endswith("_observation") for k in answer_keys)
    answer_texts = {t.strip() for key in answer_keys for t in _answer_texts(raw[key]) if len(t.strip()) > 20}
    assert answer_texts

    items = locomo_items(load_locomo(CONV26))
    contents = [item.content for item in items]
    for item in items:
        body = item.content.split(": ", 1)[1]
        assert item.content not in answer_texts
        assert body not in answer_texts
        assert all(v not in answer_texts for v in item.metadata.values())
        assert item.context is not None and len(item.context) < 60

    # Total ingested length equals exactly what the turns alone produce.
    expected = 0
    for key, turns in raw.items():
        if re.fullmatch(r"session_\d+", key):
            for turn in turns:
                expected += len(f"{turn['speaker']}: {turn['text']}")
                if turn.get("blip_caption"):
                    expected += len(f" [shares a photo: {turn['blip_caption']}]")
    assert sum(map(len, contents)) == expected
    summaries = sum(len(raw[k]) for k in answer_keys if k.endswith("_summary"))
    assert summaries > 0
    assert sum(map(len, contents)) != expected + summaries


@needs_locomo
def test_conv26_item_shape_and_order() -> None:
    conv = load_locomo(CONV26)
    items = locomo_items(conv)
    first = items[0]
    assert first.content == "Caroline: Hey Mel! Good to see you! How have you been?"
    assert first.timestamp == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert first.context == "conv-26 session 1, 8 May 2023"
    assert first.metadata == {
        "dia_id": "D1:1",
        "speaker": "Caroline",
        "session": "1",
        "conversation": "conv-26",
    }
    assert first.document_id == "conv-26:D1:1"
    assert first.tags == ("speaker:caroline",)
    assert first.update_mode == "replace"

    photo = next(item for item in items if item.metadata["dia_id"] == "D1:5")
    assert photo.content.endswith(" [shares a photo: a photo of a dog walking past a wall with a painting of a woman]")
    assert photo.timestamp == datetime(2023, 5, 8, 13, 56, 4, tzinfo=UTC)

    expected_ids = [turn.dia_id for session in conv.sessions for turn in session.turns]
    assert [item.metadata["dia_id"] for item in items] == expected_ids
    assert len({item.document_id for item in items}) == len(items)
    stamps = [item.timestamp for item in items]
    assert all(a is not None and b is not None and a < b for a, b in itertools.pairwise(stamps))
    assert {item.tags for item in items} == {("speaker:caroline",), ("speaker:melanie",)}
    for item in items:
        assert item.metadata["speaker"] == item.content.split(": ", 1)[0]
        assert item.metadata["dia_id"].startswith(f"D{item.metadata['session']}:")
        assert item.timestamp is not None and item.timestamp.tzinfo is not None


@needs_locomo
def test_conv26_qa_and_evidence_split() -> None:
    conv = load_locomo(CONV26)
    assert len(conv.qa) == len(_raw(CONV26)["qa"])
    split = [q for q in conv.qa if q.evidence == ("D8:6", "D9:17")]
    assert len(split) == 1
    assert all(";" not in e and " " not in e for q in conv.qa for e in q.evidence)
    assert conv.qa[0].answer == "7 May 2023" and conv.qa[0].category == 2
    assert conv.qa[1].answer == "2022"  # integer answer in the file is kept as text
    adversarial = [q for q in conv.qa if q.category == 5]
    assert adversarial and all(q.adversarial_answer is not None for q in adversarial)


@needs_locomo
def test_conv26_halves_and_session_filter() -> None:
    conv = load_locomo(CONV26)
    first, second = split_halves(conv)
    assert first == list(range(1, 11))
    assert second == list(range(11, 20))
    items_first = locomo_items(conv, sessions=first)
    items_second = locomo_items(conv, sessions=second)
    assert len(items_first) + len(items_second) == 419
    assert {i.metadata["session"] for i in items_first} == {str(n) for n in first}
    assert max(i.timestamp for i in items_first) < min(i.timestamp for i in items_second)  # type: ignore[type-var]
    with pytest.raises(ValueError, match=r"\[25\]"):
        locomo_items(conv, sessions=[1, 25])


@pytest.mark.skipif(not LOCOMO_DIR.is_dir(), reason="LoCoMo data directory not present")
def test_every_locomo_file_loads() -> None:
    for path in sorted(LOCOMO_DIR.glob("*.json")):
        conv = load_locomo(path)
        raw = _raw(path)
        turns = sum(len(v) for k, v in raw.items() if re.fullmatch(r"session_\d+", k) and v)
        assert len(locomo_items(conv)) == turns, path
        assert detect_format(path) == "locomo"


def test_wrapped_shape_and_sorting(tmp_path: Path) -> None:
    body = {
        "speaker_a": "Ann Lee",
        "speaker_b": "Bo",
        "session_10_date_time": "9:00 am on 2 January, 2024",
        "session_10": [{"speaker": "Bo", "dia_id": "D10:1", "text": "later"}],
        "session_2_date_time": "11:30 pm on 1 January, 2024",
        "session_2": [
            {"speaker": "Ann Lee", "dia_id": "D2:1", "text": "earlier"},
            {"speaker": "Bo", "dia_id": "D2:2", "text": "reply", "blip_caption": "a cat"},
        ],
        "session_3_date_time": "1:00 pm on 5 January, 2024",
        "session_2_summary": "SECRET SUMMARY",
        "session_2_observation": {"Bo": [["SECRET OBSERVATION", "D2:2"]]},
    }
    path = tmp_path / "wrapped.json"
    path.write_text(
        json.dumps(
            {
                "sample_id": "w-1",
                "conversation": body,
                "qa": [{"question": "q?", "answer": "a", "evidence": ["D2:1 ;D10:1", ""], "category": 1}],
                "event_summary": {"events_session_2": {"Bo": ["SECRET EVENT"]}},
            }
        ),
        encoding="utf-8",
    )
    assert detect_format(path) == "locomo"
    conv = load_locomo(path)
    assert conv.sample_id == "w-1"
    assert [s.number for s in conv.sessions] == [2, 10]
    assert conv.qa[0].evidence == ("D2:1", "D10:1")
    items = load_items(path)
    assert [i.content for i in items] == [
        "Ann Lee: earlier",
        "Bo: reply [shares a photo: a cat]",
        "Bo: later",
    ]
    assert items[0].tags == ("speaker:ann-lee",)
    assert items[1].timestamp == datetime(2024, 1, 1, 23, 30, 1, tzinfo=UTC)
    assert items[2].context == "w-1 session 10, 2 January 2024"
    assert not any("SECRET" in i.content or "SECRET" in (i.context or "") for i in items)
    assert split_halves(conv) == ([2], [10])


def test_sample_id_defaults_to_stem(tmp_path: Path) -> None:
    path = tmp_path / "my-conv.json"
    path.write_text(
        json.dumps(
            {
                "speaker_a": "A",
                "speaker_b": "B",
                "session_1_date_time": "12:05 pm on 3 Mar, 2024",
                "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
            }
        ),
        encoding="utf-8",
    )
    conv = load_locomo(path)
    assert conv.sample_id == "my-conv"
    assert conv.qa == []
    assert conv.sessions[0].date == datetime(2024, 3, 3, 12, 5, tzinfo=UTC)
    assert locomo_items(conv)[0].document_id == "my-conv:D1:1"


def test_not_locomo_shaped_raises(tmp_path: Path) -> None:
    cases = {
        "list.json": "[1, 2]",
        "nospeakers.json": json.dumps({"session_1": []}),
        "nosessions.json": json.dumps({"speaker_a": "A", "speaker_b": "B"}),
        "broken.json": "{not json",
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=re.escape(name)):
            load_locomo(path)
    nodate = tmp_path / "nodate.json"
    nodate.write_text(
        json.dumps(
            {
                "speaker_a": "A",
                "speaker_b": "B",
                "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "x"}],
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="session_1_date_time"):
        load_locomo(nodate)


def test_parse_locomo_date_and_evidence() -> None:
    assert parse_locomo_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_locomo_date("12:09 am on 13 September, 2023") == datetime(2023, 9, 13, 0, 9, tzinfo=UTC)
    assert parse_locomo_date("12:30 PM on 2 March 2025") == datetime(2025, 3, 2, 12, 30, tzinfo=UTC)
    assert parse_locomo_date("2025-03-02T12:30:00Z") == datetime(2025, 3, 2, 12, 30, tzinfo=UTC)
    for bad in (
        "yesterday",
        "13:00 pm on 1 May, 2023",
        "1:00 pm on 31 February, 2023",
        "1:00 pm on 1 Mai, 2023",
    ):
        with pytest.raises(ValueError):
            parse_locomo_date(bad)
    assert split_evidence(["D8:6; D9:17", "D1:3", " ", "D9:1 D4:4"]) == (
        "D8:6",
        "D9:17",
        "D1:3",
        "D9:1",
        "D4:4",
    )


# ------------------------------------------------------------------------------------ sample conversation


def test_sample_conversation_shape() -> None:
    raw = _raw(SAMPLE)
    assert not [key for key in raw if ANSWER_KEY.fullmatch(key)]
    conv = load_locomo(SAMPLE)
    assert conv.sample_id == "sample"
    assert conv.speakers == ("Priya", "Tomas")
    assert [s.number for s in conv.sessions] == [1, 2, 3, 4, 5, 6]
    dates = [s.date for s in conv.sessions]
    assert all(d.year == 2025 for d in dates)
    assert dates == sorted(dates) and dates[-1] - dates[0] > timedelta(days=60)
    all_ids: set[str] = set()
    for session in conv.sessions:
        assert 12 <= len(session.turns) <= 16
        assert [t.dia_id for t in session.turns] == [f"D{session.number}:{i}" for i in range(1, len(session.turns) + 1)]
        assert {t.speaker for t in session.turns} == {"Priya", "Tomas"}
        all_ids.update(t.dia_id for t in session.turns)
    assert 6 <= len(conv.qa) <= 10
    assert {q.category for q in conv.qa} == {1, 2, 3, 4}
    for question in conv.qa:
        assert question.answer and question.evidence
        assert set(question.evidence) <= all_ids, question.question


def test_sample_conversation_items_and_halves() -> None:
    conv = load_locomo(SAMPLE)
    first, second = split_halves(conv)
    assert (first, second) == ([1, 2, 3], [4, 5, 6])
    items = load_items(SAMPLE)
    assert len(items) == conv.turn_count
    assert {i.tags for i in items} == {("speaker:priya",), ("speaker:tomas",)}
    later = " ".join(i.content for i in locomo_items(conv, sessions=second))
    earlier = " ".join(i.content for i in locomo_items(conv, sessions=first))
    # Later sessions carry new developments that the first half does not mention.
    for new_fact in ("Porto", "grant", "trail", "web app"):
        assert new_fact in later and new_fact not in earlier
    assert any("[shares a photo:" in i.content for i in items)


# ------------------------------------------------------------------------------------------ JSON Lines


def test_jsonl_speaker_and_role(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "chat.jsonl",
        [
            json.dumps({"speaker": "Ana Maria", "content": "Hello there", "timestamp": "2025-01-02T03:04:05Z"}),
            "",
            json.dumps({"role": "assistant", "content": "Hi!", "channel": "web", "score": 3, "line": "x"}),
            "   ",
            json.dumps({"role": "user", "content": "Bye", "timestamp": "2025-01-02T05:04:05+02:00"}),
        ],
    )
    assert detect_format(path) == "jsonl"
    items = load_jsonl_chat(path)
    assert [i.content for i in items] == ["Ana Maria: Hello there", "assistant: Hi!", "user: Bye"]
    assert [i.tags for i in items] == [("speaker:ana-maria",), ("speaker:assistant",), ("speaker:user",)]
    assert [i.document_id for i in items] == ["chat:1", "chat:3", "chat:5"]
    assert items[0].metadata == {"speaker": "Ana Maria", "line": "1"}
    assert items[1].metadata == {"channel": "web", "speaker": "assistant", "line": "3"}
    assert items[0].timestamp == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert items[1].timestamp is None
    assert items[2].timestamp == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert [i.document_id for i in load_jsonl_chat(path, source="s")] == ["s:1", "s:3", "s:5"]
    assert load_items(path) == items


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    good = json.dumps({"speaker": "a", "content": "ok"})
    cases = {
        "badjson": ([good, "", "{oops"], "line 3"),
        "nocontent": ([good, json.dumps({"speaker": "a"})], "line 2"),
        "emptycontent": ([json.dumps({"speaker": "a", "content": "  "})], "line 1"),
        "nospeaker": ([good, good, json.dumps({"content": "x"})], "line 3"),
        "notobject": ([json.dumps(["a"])], "line 1"),
        "badtime": ([good, json.dumps({"role": "a", "content": "x", "timestamp": "soon"})], "line 2"),
    }
    for name, (lines, where) in cases.items():
        path = _write_jsonl(tmp_path / f"{name}.jsonl", lines)
        with pytest.raises(ValueError, match=where):
            load_jsonl_chat(path)


def test_detect_format_sniffs_unknown_extensions(tmp_path: Path) -> None:
    chat = _write_jsonl(tmp_path / "chat.txt", [json.dumps({"role": "u", "content": "x"})])
    assert detect_format(chat) == "jsonl"
    locomo = tmp_path / "conv.data"
    locomo.write_text(SAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    assert detect_format(locomo) == "locomo"
    other = tmp_path / "other.json"
    other.write_text("[1, 2, 3]", encoding="utf-8")
    with pytest.raises(ValueError, match="neither"):
        detect_format(other)
