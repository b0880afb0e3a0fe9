"""Issue 14, scenario by scenario: the reference's worst refresh failures, replayed against a fake OpenAI-compatible
server on 127.0.0.1 through the real ``openai`` SDK. Each test asserts the document, the watermark,
``last_refreshed_at``, the history rows and the number of LLM calls the server received."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from fake_servers import FakeServer, Reply, Seen, openai_reply, serving
from llm_helpers import QUERY, TAG, UUID, retain, untouched

from mindbank.config import Settings
from mindbank.domain.document import count_tokens
from mindbank.domain.records import MentalModel
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.providers.llm.base import ManagedLLM
from mindbank.providers.llm.openai_provider import OpenAIProvider
from mindbank.service.facade import MindBank
from mindbank.store.open import open_store
from mindbank.testing import FakeClock

_EVIDENCE_ID = re.compile(r'\\"id\\": \\"(' + UUID.pattern + r')\\"')


def done(sections: list[dict[str, Any]], **extra: Any) -> Reply:
    return openai_reply(tool_calls=[("done", {"document": {"sections": sections}, **extra})])


def evidence(seen: Seen) -> list[str]:
    """The memory ids the agent was shown, in order."""
    return list(dict.fromkeys(_EVIDENCE_ID.findall(json.dumps(seen.body))))


def new_memories(seen: Seen) -> list[str]:
    """The ids of a delta request's new memories, in order."""
    first = seen.body["messages"][1]["content"]
    return [m["id"] for m in json.loads(first)["new_memories"]]


def good_document(seen: Seen) -> Reply:
    """The agent writes one cited block resting on the first evidence id."""
    return done(
        [{"heading": "Projects", "blocks": [{"text": "Dana restores a boat.", "memory_ids": evidence(seen)[:1]}]}]
    )


def operations(*ops: dict[str, Any]) -> Reply:
    return openai_reply(json.dumps({"operations": list(ops)}))


@dataclass
class Script:
    """The server: document-mode agent calls go to ``agent``, delta (JSON-schema) calls to ``delta``; ``slow``
    makes every call outlast the client's timeout."""

    agent: Callable[[Seen], Reply] = good_document
    delta: Callable[[Seen], Reply] | None = None
    slow: bool = False
    calls: list[str] = field(default_factory=list)

    def __call__(self, seen: Seen) -> Reply:
        if self.slow:
            self.calls.append("timeout")
            return Reply(delay=1.0, body={})
        if seen.body.get("response_format") is not None:
            assert self.delta is not None, "no delta reply scripted"
            self.calls.append("delta")
            return self.delta(seen)
        self.calls.append("agent")
        return self.agent(seen)


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def server(script: Script) -> Iterator[FakeServer]:
    with serving(script) as running:
        yield running


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_bank(
    llm_settings: Settings, embedder: MiniLMEmbedder, server: FakeServer, clock: FakeClock
) -> Iterator[Callable[..., MindBank]]:
    opened: list[MindBank] = []

    def make(timeout: float = 5.0, max_retries: int = 0, **changes: Any) -> MindBank:
        settings = replace(llm_settings, **changes)
        provider = OpenAIProvider(model="fake-gpt", api_key="sk-fake", base_url=server.url + "/v1", timeout=timeout)
        llm = ManagedLLM(provider, max_retries=max_retries, backoff_seconds=0.01)
        store = open_store(settings.resolved_database_url, dimension=embedder.dimension)
        mb = MindBank(store=store, embedder=embedder, settings=settings, llms={"refresh": llm}, clock=clock)
        opened.append(mb)
        return mb

    yield make
    for mb in opened:
        mb.close()


def create(mb: MindBank, *, facts: tuple[str, ...] = ("Dana: I am restoring a 1970s sailing boat.",),
           **kwargs: Any) -> MentalModel:  # fmt: skip
    retain(mb, *facts)
    mb.create_mental_model("b", name="Dana", source_query=QUERY, tags=list(TAG), id="dana", **kwargs)
    mb.run_pending()
    model = mb.get_mental_model("b", "dana")
    assert "[mem:" in model.content, model.reflect_response
    return model


def refresh(mb: MindBank, **kwargs: Any) -> tuple[Any, MentalModel]:
    op_id = mb.refresh_mental_model("b", "dana", **kwargs)
    mb.run_pending()
    return mb.get_operation("b", op_id), mb.get_mental_model("b", "dana")


def history_kinds(mb: MindBank) -> list[str]:
    return [h.get("kind", "version") for h in mb.mental_model_history("b", "dana")]


# ---------------------------------------------------------------- 1. refusal overwrites
def test_a_refusal_never_replaces_a_populated_document(make_bank: Callable[..., MindBank], script: Script) -> None:
    mb = make_bank()
    before = create(mb)
    retain(mb, "Dana: The boat got a new mast today.")
    script.agent = lambda seen: done(
        [{"heading": "Answer", "blocks": [{"text": "I don't have any information about that", "memory_ids": []}]}],
        answer_found=False,
    )
    script.calls.clear()
    op, after = refresh(mb)
    assert op.status == "failed" and op.result["outcome"] == "refresh_failed_empty_candidate"
    assert op.result["failure_reason"] == "empty_candidate"
    untouched(before, after)  # document, structure, watermark, last_refreshed_at
    assert history_kinds(mb) == ["refresh_failed", "version"] and script.calls == ["agent"]


def test_uncited_blocks_are_reasked_once_then_refused(make_bank: Callable[..., MindBank], script: Script) -> None:
    mb = make_bank()
    before = create(mb)
    retain(mb, "Dana: The boat got a new mast today.")
    script.agent = lambda seen: done([{"heading": "Answer", "blocks": [{"text": "Dana is fine.", "memory_ids": []}]}])
    script.calls.clear()
    op, after = refresh(mb)
    assert op.status == "failed" and op.result["outcome"] == "refresh_failed_empty_candidate"
    untouched(before, after)
    assert history_kinds(mb) == ["refresh_failed", "version"]
    assert script.calls == ["agent", "agent"]  # the one re-ask for citations, then the refusal


# ---------------------------------------------------------------- 2. empty publication
def test_a_scope_patched_to_nothing_keeps_the_document_without_any_llm_call(
    make_bank: Callable[..., MindBank], script: Script
) -> None:
    mb = make_bank(enable_auto_consolidation=True)
    before = create(mb, trigger={"refresh_after_consolidation": True})
    mb.update_mental_model("b", "dana", tags=["nobody"])
    dry = mb.dry_run_refresh("b", "dana")
    assert dry["outcome"] == "refresh_failed_empty_candidate" and dry["failure_reason"] == "empty_scope"
    assert dry["retraction"]["deferred_reason"] == "empty_scope" and dry["would_persist"] is False
    script.calls.clear()
    op, after = refresh(mb)
    assert op.status == "failed" and op.result["outcome"] == "refresh_failed_empty_scope"
    untouched(before, after)
    assert history_kinds(mb) == ["refresh_failed", "version"] and script.calls == []
    assert after.reflect_response["pending_retraction"]["fact_ids"] == dry["retraction"]["fact_ids"]
    assert after.refresh_status["waiting_for_scope_change"] is True
    assert after.refresh_state.failures == 0  # spent nothing: no backoff, no breaker
    # automatic triggers wait for the scope to change: a write elsewhere queues nothing
    retain(mb, "Eve: I planted tomatoes.", tags=("user:eve",))
    mb.run_pending()
    assert mb.jobs.submit_automatic_refresh(mb.get_mental_model("b", "dana")) is None and script.calls == []
    # a write in the new scope is a change: the refresh runs again
    retain(mb, "Dana: Nobody else helps with the boat.", tags=("nobody",))
    assert mb.jobs.submit_automatic_refresh(mb.get_mental_model("b", "dana")) is not None


def test_a_retraction_that_empties_the_document_is_not_published(
    make_bank: Callable[..., MindBank], script: Script
) -> None:
    """Scenario 7 too: the only cited memory re-tagged out of the scope costs no LLM call."""
    mb = make_bank()
    before = create(mb)
    (cited,) = {m for m in UUID.findall(before.content)}
    mb.update_memory("b", cited, tags=["elsewhere"])
    script.calls.clear()
    op, after = refresh(mb)
    assert op.result["outcome"] == "refresh_failed_empty_scope" and script.calls == []
    untouched(before, after)
    assert f"[mem:{cited}]" in after.content  # kept, with the retraction it would apply on record
    assert after.reflect_response["pending_retraction"]["fact_ids"] == [cited]
    assert history_kinds(mb) == ["refresh_failed", "version"]
    mb.clear_mental_model("b", "dana")  # a person accepts the empty document
    assert mb.get_mental_model("b", "dana").refresh_state.empty_scope is None


# ---------------------------------------------------------------- 3. partial delta
def test_a_fact_whose_operation_fails_is_carried_over_not_dropped(
    make_bank: Callable[..., MindBank], script: Script
) -> None:
    mb = make_bank()
    before = create(mb, trigger={"mode": "delta"})
    mast, sail = retain(mb, "Dana: The boat got a new mast today.", "Dana: I ordered a red mainsail.")

    def one_good_one_lost(seen: Seen) -> Reply:
        ids = new_memories(seen)
        return operations(
            {"op": "append_block", "section_id": "projects", "text": "New mast.", "memory_ids": [ids[0]]},
            {"op": "append_block", "section_id": "rigging", "text": "Red mainsail.", "memory_ids": [ids[1]]},
        )

    script.delta = one_good_one_lost
    script.calls.clear()
    op, after = refresh(mb)
    assert op.status == "completed" and script.calls == ["delta", "delta"]  # one repair re-ask listing valid ids
    placed, lost = (mast, sail) if f"[mem:{mast}]" in after.content else (sail, mast)
    assert after.content.startswith(before.content) and f"[mem:{lost}]" not in after.content
    assert after.last_memory_seen_at > before.last_memory_seen_at and after.last_refreshed_at > before.last_refreshed_at
    assert after.refresh_state.carried_over == (lost,) and after.is_stale is True  # the staleness rule says so
    assert op.result["carried_over"] == 1 and history_kinds(mb) == ["version", "version"]
    listed, _ = mb.list_mental_models("b")
    assert listed[0].is_stale is True  # every caller of the one rule agrees

    seen_again: list[list[str]] = []

    def place_it(seen: Seen) -> Reply:
        seen_again.append(new_memories(seen))
        return operations({"op": "append_block", "section_id": "projects", "text": "Red mainsail.",
                           "memory_ids": [lost]})  # fmt: skip

    script.delta = place_it
    script.calls.clear()
    op, final = refresh(mb)
    assert seen_again == [[lost]] and script.calls == ["delta"]  # the next delta window holds the carried fact
    assert f"[mem:{lost}]" in final.content and f"[mem:{placed}]" in final.content
    assert final.refresh_state.carried_over == () and final.is_stale is False
    assert final.last_memory_seen_at == after.last_memory_seen_at  # nothing new was written: the watermark holds


def test_carried_over_facts_failing_again_reanchor_the_next_refresh(
    make_bank: Callable[..., MindBank], script: Script
) -> None:
    mb = make_bank()
    before = create(mb, trigger={"mode": "delta"})
    _, sail = retain(mb, "Dana: The boat got a new mast today.", "Dana: I ordered a red mainsail.")
    script.delta = lambda seen: operations(
        *({"op": "append_block", "section_id": "rigging" if i == sail else "projects", "text": f"About {i}.",
           "memory_ids": [i]} for i in new_memories(seen))
    )  # fmt: skip
    _, first = refresh(mb)
    assert first.refresh_state.carried_over == (sail,) and first.refresh_state.reanchor is None
    (varnish,) = retain(mb, "Dana: The mast is varnished.")
    script.calls.clear()
    op, second = refresh(mb)  # the new fact lands, the carried one fails again (after its repair re-ask)
    assert op.status == "completed" and script.calls == ["delta", "delta"]
    assert second.refresh_state.carried_over == (sail,) and second.refresh_state.reanchor == "carried_over_failed_again"
    assert f"[mem:{varnish}]" in second.content and second.is_stale is True
    script.agent = lambda seen: done([{"heading": "Projects", "blocks": [
        {"text": "Dana restores a boat with a new mast and a red mainsail.", "memory_ids": evidence(seen)}]}])  # fmt: skip
    script.calls.clear()
    op, third = refresh(mb)
    assert script.calls == ["agent"] and op.result["mode_fallback_reason"] == "delta_reanchored"
    assert f"[mem:{sail}]" in third.content and third.refresh_state == type(third.refresh_state)()
    assert (
        third.is_stale is False and third.last_memory_seen_at == second.last_memory_seen_at > before.last_memory_seen_at
    )
    assert history_kinds(mb) == ["version", "version", "version", "version"]


# ---------------------------------------------------------------- 4. stuck stale
def test_all_operations_rejected_reanchors_the_next_automatic_refresh_as_full(
    make_bank: Callable[..., MindBank], script: Script, clock: FakeClock
) -> None:
    mb = make_bank(enable_auto_consolidation=True)
    before = create(mb, trigger={"mode": "delta", "refresh_after_consolidation": True})
    script.delta = lambda seen: operations(
        {"op": "append_block", "section_id": "nowhere", "text": "New mast.", "memory_ids": new_memories(seen)}
    )
    script.calls.clear()
    (mast,) = retain(mb, "Dana: The boat got a new mast today.")
    mb.run_pending()  # consolidation, then the automatic refresh
    failed = mb.get_mental_model("b", "dana")
    untouched(before, failed)
    assert failed.refresh_state.reanchor == "delta_ops_all_skipped" and failed.is_stale is True
    assert script.calls == ["delta", "delta"] and history_kinds(mb) == ["refresh_failed", "version"]
    retain(mb, "Dana: The mast is varnished.")
    mb.run_pending()
    assert script.calls == ["delta", "delta"]  # backing off: parked, no call
    script.agent = lambda seen: done([{"heading": "Projects", "blocks": [
        {"text": "Dana restores a boat; it has a new mast.", "memory_ids": evidence(seen)}]}])  # fmt: skip
    clock.advance(mb.settings.refresh_failure_backoff_seconds + 1)
    mb.run_pending()
    after = mb.get_mental_model("b", "dana")
    assert script.calls == ["delta", "delta", "agent"]  # re-anchored: one full refresh, no delta call
    assert after.is_stale is False and after.refresh_state.reanchor is None and after.refresh_state.failures == 0
    assert after.last_memory_seen_at > before.last_memory_seen_at and after.last_refreshed_at > before.last_refreshed_at
    assert after.reflect_response["mode_fallback_reason"] == "delta_reanchored"
    assert after.reflect_response["effective_mode"] == "full" and mast in after.content
    ops, _ = mb.list_operations("b", operation_type="refresh_mental_model", status="completed", limit=10)
    assert ops[0].result["mode_fallback_reason"] == "delta_reanchored"
    assert history_kinds(mb) == ["version", "refresh_failed", "version"]


# ---------------------------------------------------------------- 5. unbounded spend
def test_a_provider_that_always_times_out_costs_three_recorded_failures_then_nothing(
    make_bank: Callable[..., MindBank], script: Script, clock: FakeClock
) -> None:
    mb = make_bank(timeout=0.2, max_retries=1, enable_auto_consolidation=True, worker_max_retries=1)
    before = create(mb, trigger={"refresh_after_consolidation": True})
    script.slow = True
    script.calls.clear()
    for minute in range(50):  # a write in scope every 30 s for 25 simulated minutes
        clock.advance(30)
        retain(mb, f"Dana: Sanding day {minute} on the hull.")
        mb.run_pending()
    after = mb.get_mental_model("b", "dana")
    # each recorded failure: 2 worker runs x 2 client attempts; the breaker opens at the third
    assert len(script.calls) == 12
    untouched(before, after)
    assert after.last_refresh_failed_at is not None and after.refresh_state.failures == 3
    assert after.refresh_status["breaker_open"] is True
    failures = [h for h in mb.mental_model_history("b", "dana") if h.get("kind") == "refresh_failed"]
    assert [f["failure_reason"] for f in failures] == ["provider_unavailable"] * 3
    failed_ops, _ = mb.list_operations("b", operation_type="refresh_mental_model", status="failed", limit=10)
    assert {op.result["outcome"] for op in failed_ops} == {"refresh_failed_error"}
    assert after.refresh_status["spend"]["total"]["llm_calls"] == 1 + 12  # the first refresh, then the timeouts
    script.slow = False  # the provider recovers; a manual refresh that succeeds closes the breaker
    op, healed = refresh(mb)
    assert op.status == "completed" and healed.refresh_state.failures == 0 and healed.is_stale is False


# ---------------------------------------------------------------- 6. budget ignored
def test_max_tokens_is_a_hard_cap_for_full_refreshes(make_bank: Callable[..., MindBank], script: Script) -> None:
    mb = make_bank()
    before = create(mb, max_tokens=256)
    retain(mb, "Dana: The boat got a new mast today.")
    long_text = "Dana keeps notes on every plank, rope, fitting and coat of varnish the old boat needs. " * 3
    script.agent = lambda seen: done(
        [{"heading": f"Part {i}", "blocks": [{"text": f"{long_text} ({i})", "memory_ids": evidence(seen)[:1]}]}
         for i in range(12)]
    )  # fmt: skip
    script.calls.clear()
    op, after = refresh(mb)
    assert op.status == "completed" and script.calls == ["agent", "agent"]  # one re-ask to shorten
    assert count_tokens(after.content) <= 256 < after.reflect_response["candidate_tokens"]
    assert after.reflect_response["trimmed_block_ids"] and after.content != before.content
    assert after.last_memory_seen_at > before.last_memory_seen_at and after.last_refreshed_at > before.last_refreshed_at
    assert history_kinds(mb) == ["version", "version"]


def test_max_tokens_is_a_hard_cap_for_delta_refreshes_and_the_dry_run_warns(
    make_bank: Callable[..., MindBank], script: Script
) -> None:
    mb = make_bank()
    before = create(mb, max_tokens=256, trigger={"mode": "delta"})
    retain(mb, "Dana: The boat got a new mast today.")
    script.delta = lambda seen: operations(
        *({"op": "append_block", "section_id": "projects", "text": f"Mast note {i}: " + "rope and varnish " * 8,
           "memory_ids": new_memories(seen)} for i in range(10))
    )  # fmt: skip
    script.calls.clear()
    dry = mb.dry_run_refresh("b", "dana")
    assert script.calls == ["delta", "delta"] and dry["candidate_tokens"] > 256
    assert any("over max_tokens 256" in w for w in dry["warnings"])
    assert count_tokens(dry["preview_content"]) <= 256
    script.calls.clear()
    op, after = refresh(mb)
    assert op.status == "completed" and script.calls == ["delta", "delta"]  # one re-ask to shorten
    assert count_tokens(after.content) <= 256 and after.content.startswith(before.content.rstrip("\n"))
    assert after.last_memory_seen_at > before.last_memory_seen_at and history_kinds(mb) == ["version", "version"]


# ---------------------------------------------------------------- 8. the gate lets noise through
def test_an_unrelated_memory_costs_no_llm_call(make_bank: Callable[..., MindBank], script: Script) -> None:
    mb = make_bank(enable_auto_consolidation=True)
    retain(mb, "Dana: I made a lemon risotto tonight.", "Dana: I slow-roasted a lamb shoulder for Sunday lunch.")
    mb.create_mental_model("b", name="Cooking", source_query="What does Dana like to cook?", tags=list(TAG),
                           id="dana", trigger={"refresh_after_consolidation": True})  # fmt: skip
    mb.run_pending()
    before = mb.get_mental_model("b", "dana")
    script.calls.clear()
    retain(mb, "Dana: Tax form due Friday.")
    mb.run_pending()
    after = mb.get_mental_model("b", "dana")
    assert script.calls == [] and after.reflect_response["refresh_skipped"] == "not_relevant"
    assert after.content == before.content and after.structured_document == before.structured_document
    assert after.last_memory_seen_at > before.last_memory_seen_at and after.last_refreshed_at > before.last_refreshed_at
    assert history_kinds(mb) == ["version"]  # the first version only: nothing was rewritten
    retain(mb, "Dana: I baked focaccia with rosemary.")
    mb.run_pending()
    assert script.calls == ["agent"]  # a cooking memory passes the gate


# ---------------------------------------------------------------- budgets and accounting
def test_a_spent_daily_budget_refuses_automatic_refreshes_visibly(
    make_bank: Callable[..., MindBank], script: Script
) -> None:
    mb = make_bank(enable_auto_consolidation=True, llm_price_input_per_million=2.0, llm_price_output_per_million=8.0)
    create(mb, trigger={"refresh_after_consolidation": True, "daily_token_budget": 20})
    spent = mb.get_mental_model("b", "dana").refresh_status["spend"]["today"]
    assert spent["llm_calls"] == 1 and spent["total_tokens"] == 18  # the fake reports 11 in + 7 out per call
    assert spent["cost"] == pytest.approx((11 * 2.0 + 7 * 8.0) / 1e6)
    retain(mb, "Dana: The boat got a new mast today.")
    mb.run_pending()  # 18 < 20: this automatic refresh still runs
    script.calls.clear()
    retain(mb, "Dana: The mast is varnished.")
    mb.run_pending()
    model = mb.get_mental_model("b", "dana")
    assert script.calls == [] and model.refresh_status["last_refusal"]["reason"] == "budget_exhausted"
    assert model.refresh_status["last_refusal"]["limit"] == "model" and model.is_stale is True
    stats = mb.bank_stats("b")
    assert stats["refresh_spend"]["today"]["llm_calls"] == 2 and stats["refresh_spend"]["today"]["cost"] > 0
    op, after = refresh(mb)  # manual refreshes still run
    assert op.status == "completed" and script.calls == ["agent"] and after.is_stale is False
    assert op.result["spend"]["llm_calls"] == 1 and op.result["llm_model"] == "fake-gpt"
