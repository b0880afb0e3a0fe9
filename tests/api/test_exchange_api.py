"""A turn is read with the other speaker's turn before it, end to end through HTTP on both stores
(``engine/synthesis/exchange.py``): a reaction to the other speaker's news is not quoted as the speaker's own fact,
even in a per-speaker model that cannot see the turn it reacts to; an answer whose subject is only a pronoun is
quoted behind the question it answers instead of being dropped, in a full refresh and in a delta."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

BANK = "exchange"
START = datetime(2024, 5, 4, 18, 0, tzinfo=UTC)

TURNS: list[tuple[str, str]] = [
    ("Priya", "I ran the Riverside Half in 1:58 last Sunday. Biscuit and Anjali were waiting at the finish."),
    ("Tomas", "Biscuit in a bandana is the real winner here."),
    ("Priya", "I do fifteen minutes of Portuguese verbs on a language app during my break at the hospital."),
    ("Tomas", "Fifteen minutes of verbs on a nursing break is serious commitment."),
    ("Tomas", "I finished stripping the hallway wallpaper, all four layers, and painted the walls green."),
    ("Tomas", "My teammates gave me a signed basketball after the charity game on Saturday."),
    ("Priya", "That's so cool of your teammates. Did they sign it for a special reason?"),
    ("Tomas", "They signed it to show our friendship and appreciation."),
    ("Tomas", "I sold my first twelve mugs at the pottery studio market near the station."),
]


def _items(turns: list[tuple[str, str]], first: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "content": f"{speaker}: {text}",
            "timestamp": (START + timedelta(seconds=first + i)).isoformat(),
            "context": "exchange session 1",
            "tags": [f"speaker:{speaker.lower()}"],
        }
        for i, (speaker, text) in enumerate(turns)
    ]


def _ok(response: Any) -> dict[str, Any]:
    assert response.status_code < 300, response.text
    return response.json()  # type: ignore[no-any-return]


def _model(s: Any, name: str, query: str, tags: list[str], mode: str = "full") -> str:
    path = f"/v1/default/banks/{BANK}"
    body = {"name": name, "source_query": query, "tags": tags, "trigger": {"mode": mode}}
    created = _ok(s.http.post(f"{path}/mental-models", json=body))
    s.mb.run_pending()
    return str(created["mental_model_id"])


def _content(s: Any, model_id: str) -> str:
    return str(_ok(s.http.get(f"/v1/default/banks/{BANK}/mental-models/{model_id}"))["content"])


def test_a_reaction_to_the_other_speakers_news_is_not_the_speakers_fact(served: Callable[..., Any]) -> None:
    s = served()
    _ok(s.http.post(f"/v1/default/banks/{BANK}/memories", json={"items": _items(TURNS)}))
    s.mb.run_pending()
    # a per-speaker model reads only Tomas's turns; the turns he reacts to are Priya's, outside its scope
    content = _content(s, _model(s, "tomas", "What matters most to Tomas?", ["speaker:tomas"]))
    assert "wallpaper" in content and "mugs" in content
    assert "Biscuit in a bandana" not in content
    assert "serious commitment" not in content


@pytest.mark.parametrize("mode", ["full", "delta"])
def test_an_answer_leaning_on_the_question_before_it_is_quoted_behind_it(served: Callable[..., Any], mode: str) -> None:
    s = served()
    path = f"/v1/default/banks/{BANK}/memories"
    query = "Why did Tomas's teammates sign the basketball?"
    if mode == "full":
        _ok(s.http.post(path, json={"items": _items(TURNS)}))
        s.mb.run_pending()
        model_id = _model(s, "ball", query, [])
    else:
        # the answer arrives after the model's first refresh: the delta reads the question from the turn before
        _ok(s.http.post(path, json={"items": _items(TURNS[:7])}))
        s.mb.run_pending()
        model_id = _model(s, "ball", query, [], mode="delta")
        _ok(s.http.post(path, json={"items": _items(TURNS[7:], first=7)}))
        s.mb.run_pending()
        _ok(s.http.post(f"/v1/default/banks/{BANK}/mental-models/{model_id}/refresh"))
        s.mb.run_pending()
    content = _content(s, model_id)
    assert (
        'Tomas: [Priya asked: "Did they sign it for a special reason?"] They signed it to show our friendship'
        in content
    ), content
