"""Offline consolidation on both stores: informative facts become attributed, dated observations; small talk never;
repeats merge with their proof count and last mention; an update keeps history; deleting a source retells or
retracts the observation; a knowledge page over freshly imported facts says consolidation is pending, then fills;
an extractive reflect quotes observations with their proof."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from api.conftest import Served

from mindbank.domain.records import MemoryUnit, RetainItem

BASE = "/v1/default/banks/b"
DAY0 = datetime(2024, 3, 1, 12, tzinfo=UTC)


def retain(s: Served, *texts: str, tags: tuple[str, ...] = ("user:eve",), start: int = 0) -> list[str]:
    """Each text retained on its own, a day after the previous one (``start`` days after DAY0)."""
    ids: list[str] = []
    for n, text in enumerate(texts):
        item = RetainItem(content=text, timestamp=DAY0 + timedelta(days=start + n), tags=tags)
        ids.extend(s.mb.retain("b", [item]).memory_ids)
    return ids


def observations(s: Served) -> list[dict[str, Any]]:
    """The bank's observations as the HTTP list returns them."""
    r = s.http.get(f"{BASE}/memories/list", params={"type": "observation", "limit": 100})
    assert r.status_code == 200, r.text
    return list(r.json()["items"])


def stored(s: Served) -> list[MemoryUnit]:
    return s.mb.list_memories("b", types=["observation"])[0]


def test_small_talk_never_becomes_an_observation(served: Callable[..., Served]) -> None:
    s = served()
    retain(s, "Caroline: Hey Mel! Long time no talk.", "Caroline: Thanks, Melanie! Your kind words mean a lot.",
           "Caroline: How have you been lately?", "Caroline: Wow, that's amazing!", "Caroline: Gotta run, bye!",
           "Caroline: I started volunteering at the LGBTQ support center last week.")  # fmt: skip
    s.mb.run_pending()
    assert s.mb.bank_stats("b")["pending_consolidation"] == 0
    (obs,) = stored(s)
    # attributed (the speaker's prefix), dated (the fact's own time), citing its fact
    assert obs.text == "Caroline: I started volunteering at the LGBTQ support center last week."
    assert obs.occurred_start == DAY0 + timedelta(days=5) and obs.proof_count == 1 and obs.tags == ("user:eve",)


def test_reactions_exhortations_and_compliments_form_no_observation(served: Callable[..., Served]) -> None:
    s = served()
    retain(s, "Maria: Cherish those family time moments!", "Maria: That's so cool! Weddings are definitely full of joy!",
           "Maria: Oof, John, so embarrassing!", "Maria: Obrigado, John! Your support means the world to me.",
           "Maria: Wow, John! Your hard work will definitely start conversations and create positive change.",
           "Maria: I'll make sure to keep you updated.", "Maria: I'll make sure to keep you updated.",
           "Maria: Wow, John! I started a weekly pottery class at the community center in May.")  # fmt: skip
    s.mb.run_pending()
    assert s.mb.bank_stats("b")["pending_consolidation"] == 0
    # the statement beside the reaction is the one observation, without the reaction and the name it is said to
    assert [o["text"] for o in observations(s)] == [
        "Maria: I started a weekly pottery class at the community center in May."
    ]


def test_requests_and_lost_referents_form_no_observation(served: Callable[..., Served]) -> None:
    s = served()
    retain(s, "Tomas: Send me pictures of the kitchen, and I'll send you pictures of Porto in return.",
           "Priya: Let me know how the pottery market goes next Saturday.",
           "Priya: Perfectly. Beatriz taught me that one early, she says I'll need it for all the toasts.",
           "Priya: Not yet. She's cutting my mileage for two weeks because of my sore shin.",
           "Priya: My physio found the problem with my shin. She's cutting my mileage for two weeks.")  # fmt: skip
    s.mb.run_pending()
    assert s.mb.bank_stats("b")["pending_consolidation"] == 0
    # only the pronoun whose antecedent is in its own turn forms one, and states it with that antecedent
    assert [o.text for o in stored(s)] == [
        "Priya: My physio found the problem with my shin. She's cutting my mileage for two weeks."
    ]


def test_paraphrases_merge_into_one_observation_with_proof_and_last_mention(served: Callable[..., Served]) -> None:
    s = served()
    ids = retain(s, "Maya: I adopted a rescue cat called Miso last spring.",
                 "Maya: Last spring I adopted Miso, a rescue cat.",
                 "Maya: Miso is the rescue cat I adopted last spring.")  # fmt: skip
    for _ in ids:
        s.mb.run_pending()
    (obs,) = observations(s)
    assert obs["text"] == "Maya: I adopted a rescue cat called Miso last spring."  # the first statement stands
    (unit,) = stored(s)
    assert set(unit.source_memory_ids or ()) == set(ids) and unit.proof_count == 3
    assert obs["mention_count"] == 3 and obs["last_mentioned_at"].startswith("2024-03-03")  # the newest source


def test_an_update_states_the_new_value_and_keeps_the_old_as_history(served: Callable[..., Served]) -> None:
    s = served()
    paris, berlin = retain(s, "Xavier: I live in Paris with my partner.", "Xavier: I moved to Berlin with my partner.")
    s.mb.run_pending()
    (obs,) = stored(s)
    assert (
        obs.text
        == "Xavier: I moved to Berlin with my partner. (earlier, 1 March 2024: I live in Paris with my partner.)"
    )
    assert obs.source_memory_ids == (paris, berlin) and obs.proof_count == 2
    assert obs.occurred_start == DAY0 + timedelta(days=1)  # dated by the current value
    # a different fact on the same topic stays its own observation
    retain(s, "Xavier: My partner and I bought a flat with a balcony in Berlin.", start=2)
    s.mb.run_pending()
    assert len(stored(s)) == 2


def test_deleting_a_source_retells_or_retracts_the_observation(served: Callable[..., Served]) -> None:
    s = served()
    paris, berlin = retain(s, "Xavier: I live in Paris with my partner.", "Xavier: I moved to Berlin with my partner.")
    s.mb.run_pending()
    stamp = s.mb.last_memory_write_at("b")
    assert s.http.delete(f"{BASE}/memories/{berlin}").status_code == 200
    s.mb.run_pending()
    (obs,) = stored(s)  # the current value's fact is gone: the remaining one states it, without history
    assert obs.text == "Xavier: I live in Paris with my partner." and obs.source_memory_ids == (paris,)
    assert obs.proof_count == 1 and obs.updated_at > stamp
    assert s.http.delete(f"{BASE}/memories/{paris}").status_code == 200
    s.mb.run_pending()
    assert stored(s) == []  # nothing left to rest on


def test_a_page_over_fresh_facts_says_consolidation_is_pending_then_answers(served: Callable[..., Served]) -> None:
    s = served()
    retain(s, "Alice leads the data platform team and owns its roadmap.",
           "Bob joined the data platform team in March as a backend engineer.",
           "Thanks, see you tomorrow!", tags=("team",))  # fmt: skip
    body = {"name": "Team", "source_query": "Who is on the data platform team?", "tags": ["team"]}
    r = s.http.post(f"{BASE}/knowledge-base/pages", json=body)
    assert r.status_code == 201, r.text
    created = r.json()
    (warning,) = created["warnings"]
    assert "3 facts in scope, consolidation pending" in warning and "trigger.fact_types" in warning
    preview = s.http.post(f"{BASE}/mental-models/scope-preview", json={"tags": ["team"], "trigger": {
        "fact_types": ["observation"]}}).json()  # fmt: skip
    assert preview["total"] == 0 and preview["pending_consolidation"] == 3
    s.mb.run_pending()  # the first refresh, consolidation, and the refresh consolidation triggers
    s.mb.run_pending()
    page = s.http.get(f"{BASE}/knowledge-base/pages/{created['page_id']}").json()
    assert "Alice leads the data platform team" in page["body"] and "Bob joined the data platform team" in page["body"]
    assert "see you tomorrow" not in page["body"]
    model = s.http.get(f"{BASE}/mental-models/{created['mental_model_id']}").json()
    assert model["is_stale"] is False
    after = s.http.post(f"{BASE}/mental-models/scope-preview", json={"tags": ["team"], "trigger": {
        "fact_types": ["observation"]}}).json()  # fmt: skip
    assert after["by_fact_type"]["observation"] == 2 and after["pending_consolidation"] == 0


def test_extractive_reflect_quotes_observations_with_their_proof(served: Callable[..., Served]) -> None:
    s = served()
    ids = retain(s, "Maya: I adopted a rescue cat called Miso last spring.",
                 "Maya: Last spring I adopted Miso, a rescue cat.", "Maya: I work as a nurse at the city hospital.")  # fmt: skip
    s.mb.run_pending()
    r = s.http.post(f"{BASE}/reflect", json={"query": "What pet did Maya adopt?", "include": {"facts": {}}})
    assert r.status_code == 200, r.text
    answer = r.json()["text"]
    (cat,) = [o for o in stored(s) if "Miso" in o.text]
    assert (
        f"Maya: I adopted a rescue cat called Miso last spring. (mentioned 2 times, last 2 Mar 2024) [mem:{cat.id}]"
        in answer
    )
    assert f"[mem:{ids[1]}]" not in answer  # the observation states it: the raw fact is not quoted again


CHAT = [
    ("Andrew", "We adopted two German Shepherds from the shelter in Portland last week."),
    ("Audrey", "German Shepherds are indeed awesome and loyal companions for hiking trips!"),
    ("Audrey", "What was your favorite book when you were a kid?"),
    ("Andrew", 'I loved reading "Charlotte\'s Web" as a kid.'),
    ("Andrew", "My teammates gave me a signed basketball after the charity game on Saturday."),
    ("Audrey", "That's so cool of your teammates. Did they sign it for a special reason?"),
    ("Andrew", "They signed it to show our friendship and appreciation."),
]


@pytest.mark.parametrize("arrival", ["one call", "turn by turn"])
def test_a_turn_is_read_with_the_turn_before_it(served: Callable[..., Served], arrival: str) -> None:
    s = served()
    items = [
        {"content": f"{who}: {text}", "timestamp": (DAY0 + timedelta(seconds=i)).isoformat(),
         "context": "chat session 1", "tags": [f"speaker:{who.lower()}"]}
        for i, (who, text) in enumerate(CHAT)
    ]  # fmt: skip
    for batch in [items] if arrival == "one call" else [[item] for item in items]:
        r = s.http.post(f"{BASE}/memories", json={"items": batch})
        assert r.status_code < 300, r.text
        s.mb.run_pending()  # turn by turn: the turn before was consolidated in an earlier round
    texts = sorted(o["text"] for o in observations(s))
    assert texts == sorted(
        [
            'Andrew: [Audrey asked: "Did they sign it for a special reason?"] They signed it to show our friendship '
            "and appreciation.",
            'Andrew: [Audrey asked: "What was your favorite book when you were a kid?"] I loved reading '
            '"Charlotte\'s Web" as a kid.',
            "Andrew: My teammates gave me a signed basketball after the charity game on Saturday.",
            "Andrew: We adopted two German Shepherds from the shelter in Portland last week.",
        ]
    )  # the reaction to Andrew's news forms none
