"""LLM consolidation: observations created and confirmed from the model's JSON, ids validated, the extractive
consolidator as fallback, transient errors left to the worker."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from conftest import retain

from mindbank.config import Settings
from mindbank.providers.llm.base import ChatRequest, ChatResult, LLMTransientError
from mindbank.service import MindBank
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
