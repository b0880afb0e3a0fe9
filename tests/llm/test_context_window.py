"""The LLM's context window (``MINDBANK_LLM_CONTEXT_WINDOW``): evidence budgets held to it, a window too small for
the loops refused at start-up naming the setting, and a prompt that cannot fit refused before it is sent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from fake_servers import openai_reply, scripted, serving
from llm_helpers import QUERY, retain

from mindbank.config import Settings
from mindbank.providers.llm.base import LLMError, ManagedLLM, user
from mindbank.providers.llm.context import (
    MIN_EVIDENCE_TOKENS,
    PROMPT_OVERHEAD_TOKENS,
    REPLY_RESERVE_TOKENS,
    ContextWindowError,
    context_budget,
    prompt_tokens,
)
from mindbank.providers.llm.factory import build_llms
from mindbank.providers.llm.openai_provider import OpenAIProvider
from mindbank.service.facade import MindBank
from mindbank.testing import ScriptedLLM, text_reply


def test_budgets_follow_the_window_and_a_small_one_is_a_configuration_error() -> None:
    assert context_budget(None) is None
    fit = context_budget(4096)
    assert fit is not None and fit.evidence == 4096 - PROMPT_OVERHEAD_TOKENS - REPLY_RESERVE_TOKENS
    assert fit.facts + fit.chunks + fit.observations == fit.evidence
    smallest = PROMPT_OVERHEAD_TOKENS + REPLY_RESERVE_TOKENS + MIN_EVIDENCE_TOKENS
    assert context_budget(smallest) is not None
    with pytest.raises(ContextWindowError, match="MINDBANK_LLM_CONTEXT_WINDOW=2048 is too small"):
        context_budget(2048)
    with pytest.raises(ValueError, match="MINDBANK_LLM_CONTEXT_WINDOW"):
        build_llms(Settings(llm_provider="openai", llm_base_url="http://127.0.0.1:9/v1", llm_context_window=1024))


def test_a_prompt_that_cannot_fit_is_never_sent() -> None:
    with serving(scripted(openai_reply("fine"))) as server:
        provider = OpenAIProvider(model="m", api_key=None, base_url=server.url + "/v1", timeout=5.0)
        llm = ManagedLLM(provider, context_window=3000)
        assert llm.chat([user("short question")], max_tokens=100).text == "fine"
        with pytest.raises(LLMError, match="does not fit the model's context window of 3000 tokens"):
            llm.chat([user("word " * 5000)])
    assert len(server.seen) == 1


LONG = "Dana note {i}: the sailing boat in the harbour needs new rigging, a mast, varnish and sails for part {i}, " * 3


@pytest.mark.parametrize("window", [None, 4096])
def test_refresh_evidence_is_held_to_the_window(
    open_bank: Callable[..., MindBank], llm_settings: Settings, window: int | None
) -> None:
    settings = replace(llm_settings, llm_context_window=window, recall_max_tokens=8000, recall_chunks_max_tokens=4000)
    llm = ScriptedLLM(default=lambda request: text_reply("Dana is restoring a boat."))
    mb = open_bank(settings, refresh=llm)
    refresh = mb.jobs.refresh_settings("b")
    fit = context_budget(window)
    if fit is not None:
        assert (refresh.facts_cap, refresh.chunks_cap, refresh.observations_cap) == (
            fit.facts,
            fit.chunks,
            fit.observations,
        )
    retain(mb, *[LONG.format(i=i) for i in range(120)])
    mb.create_mental_model("b", name="Dana", source_query=QUERY, tags=["user:dana"], id="dana")
    mb.run_pending()
    first = llm.requests[0]
    tokens = prompt_tokens(first.messages, first.tools, first.response_schema)
    if window is None:
        assert tokens > 4096  # the budgets from settings alone overflow a 4,096-token model
    else:
        assert tokens + REPLY_RESERVE_TOKENS <= window
