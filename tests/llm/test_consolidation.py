"""LLM consolidation: observations created and confirmed from the model's JSON, ids validated, the extractive
consolidator as fallback, transient errors left to the worker."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from llm_helpers import retain

from mindbank.config import Settings
from mindbank.providers.llm.base import ChatRequest, ChatResult, LLMTransientError
from mindbank.service.facade import MindBank
from mindbank.testing import ScriptedLLM, json_reply, text_reply

FACTS = [
    "Dana: I go sailing every Sunday morning.",
    "Dana: Sunday mornings are for the boat, always.",
    "Dana: I adopted a cat named Pixel.",
]


def observations(mb: MindBank) -> list[tuple[str, tuple[str, ...], int | None]]:
    return [(o.text, o.source_memory_ids or (), o.proof_count) for o in mb.store.list_observations("b")]  # type: ignore[attr-defined]


def consolidate(mb: MindBank) -> str:
    op_id, _ = mb.consolidate("b")
    mb.run_pending()
    return mb.get_operation("b", op_id).status


def test_creates_and_updates_from_the_llm(open_bank: Callable[..., MindBank]) -> None:
    def first(request: ChatRequest) -> ChatResult:
        facts = json.loads(request.messages[1]["content"])["new_facts"]
        sailing = [f["id"] for f in facts if "Sunday" in f["text"]]
        return json_reply({"creates": [{"text": "Dana sails every Sunday morning.",
                                        "source_fact_ids": [*sailing, "made-up"]}], "updates": []})  # fmt: skip

    llm = ScriptedLLM([first])
    mb = open_bank(consolidation=llm)
    ids = retain(mb, *FACTS)
    assert consolidate(mb) == "completed"
    ((text, sources, proof),) = observations(mb)
    assert (text, sorted(sources), proof) == ("Dana sails every Sunday morning.", sorted(ids[:2]), 2)
    assert llm.requests[0].scope == "consolidation" and llm.requests[0].temperature == 0.0

    def confirm(request: ChatRequest) -> ChatResult:
        payload = json.loads(request.messages[1]["content"])
        (obs,) = payload["existing_observations"]
        (fact,) = payload["new_facts"]
        return json_reply({"creates": [], "updates": [{"observation_id": obs["id"], "source_fact_ids": [fact["id"]]},
                                                      {"observation_id": "ghost", "source_fact_ids": [fact["id"]]}]})  # fmt: skip

    llm.script = [confirm]
    (new_id,) = retain(mb, "Dana: Another Sunday on the water, lovely.")
    assert consolidate(mb) == "completed"
    ((_, sources, proof),) = observations(mb)
    assert new_id in sources and proof == 3


def test_unusable_reply_falls_back_and_transient_errors_retry(
    open_bank: Callable[..., MindBank], llm_settings: Settings
) -> None:
    mb = open_bank(
        replace(llm_settings, worker_retry_backoff_seconds=60), consolidation=ScriptedLLM(default=text_reply("?"))
    )
    retain(mb, *FACTS)
    assert consolidate(mb) == "completed" and mb.store.unconsolidated_facts("b", 10) == []  # type: ignore[attr-defined]
    mb.consolidator.llm = ScriptedLLM(default=LLMTransientError("503", status=503))  # type: ignore[attr-defined]
    retain(mb, "Dana: Pixel sleeps on the boat now.")
    op_id, _ = mb.consolidate("b")
    mb.run_pending()
    op = mb.get_operation("b", op_id)
    assert op.status == "pending" and op.retry_count == 1
    assert len(mb.store.unconsolidated_facts("b", 10)) == 1  # type: ignore[attr-defined]


def test_rewrites_and_deletes_observations_and_stales_citing_models(open_bank: Callable[..., MindBank]) -> None:
    def create(request: ChatRequest) -> ChatResult:
        facts = json.loads(request.messages[1]["content"])["new_facts"]
        sailing = [f["id"] for f in facts if "Sunday" in f["text"]]
        pixel = [f["id"] for f in facts if "Pixel" in f["text"]]
        return json_reply({"creates": [{"text": "Dana sails every Sunday morning.", "source_fact_ids": sailing},
                                       {"text": "Dana has a cat named Pixel.", "source_fact_ids": pixel}],
                           "updates": []})  # fmt: skip

    llm = ScriptedLLM([create])
    mb = open_bank(consolidation=llm)
    retain(mb, *FACTS)
    assert consolidate(mb) == "completed"
    by_text = {o.text: o for o in mb.store.list_observations("b")}  # type: ignore[attr-defined]
    sailing, cat = by_text["Dana sails every Sunday morning."], by_text["Dana has a cat named Pixel."]
    model_id, _ = mb.create_mental_model("b", name="Dana", source_query="What does Dana do?", tags=["user:dana"],
                                         trigger={"fact_types": ["observation"]})  # fmt: skip
    mb.run_pending()
    assert "Pixel" in mb.get_mental_model("b", model_id).content
    stamp = mb.last_memory_write_at("b")

    def revise(request: ChatRequest) -> ChatResult:
        (fact,) = json.loads(request.messages[1]["content"])["new_facts"]
        return json_reply({"creates": [],
                           "updates": [{"observation_id": sailing.id, "source_fact_ids": [fact["id"]],
                                        "text": "Dana sails on Saturday mornings now."}],
                           "deletes": [{"observation_id": cat.id, "reason": "Pixel was rehomed"},
                                       {"observation_id": "ghost"}]})  # fmt: skip

    llm.script = [revise]
    retain(mb, "Dana: Sailing moved to Saturdays, and Pixel went to live with my sister.")
    assert consolidate(mb) == "completed"
    remaining = {o.id: o for o in mb.store.list_observations("b")}  # type: ignore[attr-defined]
    assert cat.id not in remaining
    assert remaining[sailing.id].text == "Dana sails on Saturday mornings now."
    assert remaining[sailing.id].proof_count == 3
    assert mb.last_memory_write_at("b") > stamp  # rewriting and deleting observations are writes
    hits = mb.recall("b", "When does Dana go sailing?", types=["observation"])
    assert hits[0].memory.text == "Dana sails on Saturday mornings now."  # re-embedded and re-indexed
    assert mb.get_mental_model("b", model_id).is_stale is True  # it cites the deleted observation
    # the rewrite is in the observation's history: the text before and after, the fact it added
    (change,) = mb.get_observation_history("b", sailing.id)
    assert (
        change["previous_text"] == "Dana sails every Sunday morning." and change["text"] == remaining[sailing.id].text
    )
    assert [f["text"] for f in change["source_facts_added"]] == [
        "Dana: Sailing moved to Saturdays, and Pixel went to live with my sister."
    ]


def test_earlier_facts_are_shown_and_may_support_a_new_observation(open_bank: Callable[..., MindBank]) -> None:
    """Facts retained one call at a time: the second round shows the first round's fact as an earlier fact, and an
    observation may rest on it and the new one (never on earlier facts alone)."""
    llm = ScriptedLLM(default=json_reply({"creates": [], "updates": []}))
    mb = open_bank(consolidation=llm)
    (first,) = retain(mb, FACTS[0])
    assert consolidate(mb) == "completed" and observations(mb) == []
    assert json.loads(llm.requests[-1].messages[1]["content"])["earlier_facts"] == []

    def create(request: ChatRequest) -> ChatResult:
        payload = json.loads(request.messages[1]["content"])
        (earlier,) = payload["earlier_facts"]
        (new,) = payload["new_facts"]
        return json_reply({"creates": [
            {"text": "Dana sails on Sunday mornings.", "source_fact_ids": [earlier["id"], new["id"]]},
            {"text": "Only the past.", "source_fact_ids": [earlier["id"]]},
        ], "updates": []})  # fmt: skip

    llm.script = [create]
    (second,) = retain(mb, FACTS[1])
    assert consolidate(mb) == "completed"
    assert [(t, sorted(s), p) for t, s, p in observations(mb)] == [
        ("Dana sails on Sunday mornings.", sorted([first, second]), 2)
    ]
