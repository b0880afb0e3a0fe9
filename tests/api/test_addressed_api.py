"""Who a sentence is about, end to end through HTTP on both stores: a sentence one speaker says to the other in the
second person tells of the listener's life, so a question about the listener may quote it — shown as said to them
("Tomas, to Priya: …"), in a full refresh and in a delta — while what the speaker says of their own life stays out;
and a question naming both speakers is ranked without their names (the refresh's recall query shows it)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

BANK = "addressed"
START = datetime(2024, 6, 1, 18, 0, tzinfo=UTC)
QUESTION = "What does Priya think about the classes at her climbing gym?"

TURNS: list[tuple[str, str]] = [
    ("Priya", "I work night shifts as a nurse on the cardiology ward at the hospital."),
    ("Tomas", "I finished stripping the hallway wallpaper, all four layers, and painted the walls green."),
    ("Priya", "The race is the Riverside Half on the 4th of May, and I run four days a week around my shifts."),
    ("Tomas", "I sold my first twelve mugs at the pottery studio market near the station."),
    ("Priya", "I joined the climbing gym downtown and they run bouldering, yoga and spin classes."),
]
LATER: list[tuple[str, str]] = [
    ("Tomas", "Mixing bouldering with yoga sounds like a smart way to balance your training - I might try it too!"),
    ("Tomas", "My brother and I are driving to the coast next weekend to surf for the first time."),
]


def _items(turns: list[tuple[str, str]], first: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "content": f"{speaker}: {text}",
            "timestamp": (START + timedelta(seconds=first + i)).isoformat(),
            "context": "addressed session 1",
        }
        for i, (speaker, text) in enumerate(turns)
    ]


def _ok(response: Any) -> dict[str, Any]:
    assert response.status_code < 300, response.text
    return response.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ["full", "delta"])
def test_a_sentence_said_to_priya_answers_a_question_about_her_as_said_to_her(
    served: Callable[..., Any], mode: str
) -> None:
    s = served()
    path = f"/v1/default/banks/{BANK}"
    if mode == "full":
        _ok(s.http.post(f"{path}/memories", json={"items": _items(TURNS + LATER)}))
    else:
        _ok(s.http.post(f"{path}/memories", json={"items": _items(TURNS)}))
    s.mb.run_pending()
    body = {"name": "gym", "source_query": QUESTION, "trigger": {"mode": mode}}
    model_id = _ok(s.http.post(f"{path}/mental-models", json=body))["mental_model_id"]
    s.mb.run_pending()
    if mode == "delta":
        # the remark arrives after the model's first refresh: the delta reads whom it was said to from the turn before
        _ok(s.http.post(f"{path}/memories", json={"items": _items(LATER, first=len(TURNS))}))
        s.mb.run_pending()
        dry = _ok(s.http.post(f"{path}/mental-models/{model_id}/dry-run-refresh"))
        assert dry["effective_mode"] == "delta"
        reasons = {e["reason"] for e in dry["left_out"]}
        assert any(r.startswith("about another person: said by Tomas") for r in reasons), dry["left_out"]
        _ok(s.http.post(f"{path}/mental-models/{model_id}/refresh"))
        s.mb.run_pending()
    content = str(_ok(s.http.get(f"{path}/mental-models/{model_id}"))["content"])
    assert "Tomas, to Priya: Mixing bouldering with yoga" in content, content
    assert "Tomas: Mixing" not in content
    assert "surf" not in content and "wallpaper" not in content  # Tomas's own life does not answer it


def test_a_question_naming_both_speakers_is_ranked_without_their_names(served: Callable[..., Any]) -> None:
    s = served()
    path = f"/v1/default/banks/{BANK}"
    _ok(s.http.post(f"{path}/memories", json={"items": _items(TURNS + LATER)}))
    s.mb.run_pending()
    body = {"name": "both", "source_query": "What sports do Priya and Tomas do?", "trigger": {"mode": "full"}}
    model_id = _ok(s.http.post(f"{path}/mental-models", json=body))["mental_model_id"]
    s.mb.run_pending()
    dry = _ok(s.http.post(f"{path}/mental-models/{model_id}/dry-run-refresh"))
    queries = [c["input"]["query"] for c in dry["trace"]["tool_calls"] if c.get("tool") == "recall"]
    assert queries == ["What sports do and do?"], dry["trace"]["tool_calls"]
    assert "Riverside Half" in dry["preview_content"]


def test_a_delta_trace_keeps_what_an_earlier_refresh_left_out_and_why(served: Callable[..., Any]) -> None:
    s = served()
    path = f"/v1/default/banks/{BANK}"
    _ok(s.http.post(f"{path}/memories", json={"items": _items(TURNS)}))
    s.mb.run_pending()
    trigger = {"mode": "delta", "keep_trace": True}
    body = {"name": "gym", "source_query": QUESTION, "trigger": trigger}
    model_id = _ok(s.http.post(f"{path}/mental-models", json=body))["mental_model_id"]
    s.mb.run_pending()

    def refresh_with(turns: list[tuple[str, str]], first: int) -> list[dict[str, Any]]:
        _ok(s.http.post(f"{path}/memories", json={"items": _items(turns, first=first)}))
        s.mb.run_pending()
        _ok(s.http.post(f"{path}/mental-models/{model_id}/refresh"))
        s.mb.run_pending()
        model = _ok(s.http.get(f"{path}/mental-models/{model_id}"))
        return list(model["reflect_response"]["trace"]["left_out"])

    about_tomas = "about another person: said by Tomas, the question asks about Priya"
    first = refresh_with([LATER[1]], len(TURNS))
    # the fact itself (an observation restating it may be listed beside it, for its own reason)
    ids = [e["id"] for e in first if "surf" in e["text"] and e["reason"] == about_tomas]
    assert len(ids) == 1, first
    later = refresh_with([("Priya", "The climbing gym added a beginners' lead class on Wednesday nights.")], 40)
    kept = [e for e in later if e["id"] == ids[0]]
    assert len(kept) == 1 and kept[0]["reason"] == about_tomas
    assert kept[0]["recorded_at"]  # when the earlier refresh gave the reason
    # a memory deleted since is no longer listed
    _ok(s.http.delete(f"{path}/memories/{ids[0]}"))
    s.mb.run_pending()
    gone = refresh_with([("Priya", "I bought new climbing shoes for the lead class at the gym.")], 80)
    assert not [e for e in gone if e["id"] == ids[0]]
