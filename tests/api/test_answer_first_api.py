"""A mental model answers its question, end to end through HTTP on both stores: a narrow question over a whole
conversation opens with the facts that answer it (the named pets), under a heading naming its subject, quotes only
what the question reaches, and a later fact that answers it reaches the document on the next refresh.

The conversation is synthetic (two speakers, many topics, a few turns about pets), retained turn by turn with
session dates, like the LoCoMo conversations the ``bench answers`` benchmark reads."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mindbank.domain.document import parse_markdown

BANK = "pets"
QUESTION = "What pets do they have, and what happened with them?"
START = datetime(2023, 3, 4, 18, 0, tzinfo=UTC)

SESSIONS: list[list[tuple[str, str]]] = [
    [
        ("Deborah", "I just got back from a yoga retreat in the mountains, five days of silence and stretching."),
        ("Jolene", "That sounds peaceful! I went for a morning jog along the river before work today."),
        ("Deborah", "The retreat teacher showed us a breathing routine I now do every single morning."),
        ("Deborah", "Do you have any pets at home these days?"),
        ("Jolene", "I adopted two cats last month, Luna and Susie, both tabbies from the shelter on Elm Street."),
        ("Deborah", "Aww, how are they settling in?"),
        ("Jolene", "Luna hides under the bed all day, but Susie already sleeps on my keyboard while I code."),
        ("Deborah", "My garden is finally producing tomatoes and basil after weeks of rain."),
        ("Jolene", "I'm studying for my engineering licence exam in June, three evenings a week."),
    ],
    [
        ("Deborah", "I started teaching a beginners' yoga class at the community centre on Tuesdays."),
        ("Jolene", "Oh nice. Speaking of animals, I never told you: I also keep a snake."),
        ("Jolene", "My snake Seraphim is a ball python, she is my oldest pet."),
        ("Jolene", "I bought it a year ago in Paris."),
        ("Deborah", "Animals sure have a way of bringing us happiness, cherish those moments with her."),
        ("Jolene", "Work has been hectic: our team is shipping the new water pump controller next month."),
        ("Deborah", "My mother visited last weekend and we cooked her lentil soup recipe together."),
        ("Jolene", "I ran a 10 km race on Sunday and finished in 52 minutes."),
        ("Deborah", "We repainted the living room a warm yellow colour on Saturday."),
    ],
    [
        ("Deborah", "The yoga retreat organisers asked me to co-lead the autumn retreat in October."),
        ("Jolene", "I booked flights to Lisbon for a long weekend with my college friends."),
        ("Deborah", "My neighbour's kids helped me harvest the last of the beans in the garden."),
        ("Jolene", "The licence exam study group meets in the library on Thursday nights now."),
        ("Deborah", "I'm reading a biography of Marie Curie for my book club."),
        ("Jolene", "Our team demoed the pump controller to the city council and they loved it."),
    ],
]
UNRELATED = [
    ("Deborah", "The community centre is getting a new roof before the winter, paid for by a bake sale."),
    ("Jolene", "Our team lead is moving to the Denver office, so I will run the stand-up meetings."),
]
LATER = [
    ("Jolene", "Seraphim shed her skin in one piece this week. Susie is finally eating again after the vet visit.")
]


def _items(turns: list[tuple[str, str]], session: int) -> list[dict[str, Any]]:
    day = START + timedelta(days=14 * session)
    return [
        {
            "content": f"{speaker}: {text}",
            "timestamp": (day + timedelta(minutes=2 * i)).isoformat(),
            "context": "pets-conversation",
            "metadata": {"dia_id": f"D{session + 1}:{i + 1}"},
        }
        for i, (speaker, text) in enumerate(turns)
    ]


def _ok(response: Any) -> dict[str, Any]:
    assert response.status_code < 300, response.text
    return response.json()  # type: ignore[no-any-return]


def conversation_model(s: Any, query: str, mode: str) -> dict[str, Any]:
    """The conversation of :data:`SESSIONS` retained over ``s.http``, then a model for ``query`` created (trigger
    ``mode``) and refreshed: its create response."""
    http, path = s.http, f"/v1/default/banks/{BANK}"
    for number, turns in enumerate(SESSIONS):
        _ok(http.post(f"{path}/memories", json={"items": _items(turns, number)}))
    s.mb.run_pending()
    created = _ok(http.post(f"{path}/mental-models", json={"name": "pets", "source_query": query,
                                                           "trigger": {"mode": mode}}))  # fmt: skip
    s.mb.run_pending()
    return created


@pytest.mark.parametrize("mode", ["full", "delta"])
def test_a_narrow_model_opens_with_the_pets_and_takes_in_later_pet_news(served: Callable[..., Any], mode: str) -> None:
    s = served()
    http, path = s.http, f"/v1/default/banks/{BANK}"
    created = conversation_model(s, QUESTION, mode)
    model = _ok(http.get(f"{path}/mental-models/{created['mental_model_id']}"))
    document = parse_markdown(model["content"])
    first = next(section for section in document.sections if section.heading)
    assert first.heading == "Pets", model["content"]
    opening = " ".join(b.text for b in first.blocks)
    for name in ("Luna", "Susie", "Seraphim"):
        assert name in opening
    assert "yoga" not in opening.lower() and "jog" not in opening.lower()
    # breadth follows the question: a handful of pet facts, not a collage of the whole conversation
    assert len(document.memory_ids()) <= 8
    assert "yoga" not in model["content"].lower()

    def refresh() -> tuple[str, str]:
        s.mb.run_pending()
        refreshed = _ok(http.post(f"{path}/mental-models/{created['mental_model_id']}/refresh"))
        s.mb.run_pending()
        operation = _ok(http.get(f"{path}/operations/{refreshed['operation_id']}"))
        assert operation["status"] == "completed"
        content = _ok(http.get(f"{path}/mental-models/{created['mental_model_id']}"))["content"]
        return (operation.get("result_metadata") or {}).get("outcome"), content

    # facts that do not answer the question change nothing, and the dry run says why they were left out
    _ok(http.post(f"{path}/memories", json={"items": _items(UNRELATED, len(SESSIONS))}))
    s.mb.run_pending()
    dry = _ok(http.post(f"{path}/mental-models/{created['mental_model_id']}/dry-run-refresh"))
    assert all(e["reason"] for e in dry["left_out"])
    if mode == "full":
        # (delta: since merging the recall context lift, the delta floor admits these two; see the report)
        assert dry["left_out"] and not any(text in dry["preview_content"] for _, text in UNRELATED)
        outcome, unchanged = refresh()
        assert outcome in ("content_unchanged", "content_preserved_no_new_facts") and unchanged == model["content"]
    else:
        refresh()
        document = parse_markdown(_ok(http.get(f"{path}/mental-models/{created['mental_model_id']}"))["content"])

    # a later fact about the pets reaches the document: one new block, every other block as it was
    _ok(http.post(f"{path}/memories", json={"items": _items(LATER, len(SESSIONS) + 1)}))
    outcome, after = refresh()
    assert outcome == "content_written"
    assert "Seraphim shed her skin" in after
    assert "Susie is finally eating again" in after
    before_blocks = {b.text for sec in document.sections for b in sec.blocks}
    after_blocks = {b.text for sec in parse_markdown(after).sections for b in sec.blocks}
    assert before_blocks <= after_blocks and len(after_blocks - before_blocks) == 1
