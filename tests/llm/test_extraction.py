"""LLM fact extraction at retain: facts per chunk with their type, the splitter as fallback, transient errors."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mindbank.domain.records import RetainItem
from mindbank.engine.retain.llm import BATCH_TOKENS, LLMFactExtractor
from mindbank.providers.llm.base import ChatRequest, ChatResult, LLMError, LLMTransientError
from mindbank.service.facade import MindBank
from mindbank.testing import ScriptedLLM, json_reply, text_reply

DIALOGUE = "Dana: Hi!\n\nAssistant: I booked the boat yard for Saturday.\n\nDana: Great, my brother comes too."


def facts_reply(request: ChatRequest) -> ChatResult:
    return json_reply(
        {
            "facts": [
                {"chunk": 1, "text": "The assistant booked the boat yard for Saturday.", "kind": "experience"},
                {"chunk": 2, "text": "Dana's brother comes to the boat yard on Saturday.", "kind": "world"},
                {"chunk": 9, "text": "A fact about a chunk that does not exist.", "kind": "world"},
            ]
        }
    )


def test_llm_facts_replace_the_splitter(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM(default=facts_reply)
    mb = open_bank(retain=llm)
    ids = mb.retain("b", [RetainItem(content=DIALOGUE, context="chat", metadata={"speaker": "Dana"})]).memory_ids
    memories = mb.store.get_memories("b", ids)
    assert [(m.text, m.fact_type) for m in memories] == [
        ("The assistant booked the boat yard for Saturday.", "experience"),
        ("Dana's brother comes to the boat yard on Saturday.", "world"),
    ]
    sources = mb.store.memory_sources("b", ids)
    assert [s.chunk_text for s in sources] == ["Assistant: I booked the boat yard for Saturday.",
                                              "Dana: Great, my brother comes too."]  # fmt: skip
    (request,) = llm.requests
    assert request.scope == "retain_extract" and request.temperature == 0.1
    assert '"speaker": "Dana"' in request.messages[1]["content"] and "[2] Dana: Great" in request.messages[1]["content"]


@pytest.mark.parametrize("bad", [text_reply("Sure! Here are the facts: ..."), LLMError("400 bad request")])
def test_unusable_replies_fall_back_to_the_splitter(open_bank: Callable[..., MindBank], bad: object) -> None:
    mb = open_bank(retain=ScriptedLLM(default=bad))
    ids = mb.retain("b", [RetainItem(content="Dana: I am restoring a 1970s sailing boat.")]).memory_ids
    assert [m.text for m in mb.store.get_memories("b", ids)] == ["Dana: I am restoring a 1970s sailing boat."]


def test_transient_errors_propagate_and_write_nothing(open_bank: Callable[..., MindBank]) -> None:
    mb = open_bank(retain=ScriptedLLM(default=LLMTransientError("503", status=503)))
    with pytest.raises(LLMTransientError):
        mb.retain("b", [RetainItem(content="Dana: I am restoring a boat.")])
    assert not mb.store.bank_exists("b")
    op = mb.retain("b", [RetainItem(content="Dana: I am restoring a boat.")], async_=True).operation_id
    mb.run_pending()
    queued = mb.get_operation("b", op or "")
    assert queued.status == "pending" and queued.retry_count == 1  # the worker retries it later


def test_long_items_are_sent_in_batches() -> None:
    llm = ScriptedLLM(default=json_reply({"facts": []}))
    chunks = [f"Dana: sentence number {i} " + "word " * 200 for i in range(20)]
    found = LLMFactExtractor(llm)(RetainItem(content="x"), chunks)
    assert found == [[] for _ in chunks]
    assert 2 <= len(llm.requests) <= len(chunks) and BATCH_TOKENS > 200
