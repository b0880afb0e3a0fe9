"""Consolidation, refresh_after_consolidation, cron, rate-limit parking and the failure pause (issue 6).

Time is driven by an injectable clock; the worker is drained synchronously.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from mindbank.config import Settings
from mindbank.domain.records import RetainItem
from mindbank.domain.timeutil import to_iso
from mindbank.engine.consolidate.rounds import consolidate_round
from mindbank.engine.synthesis.port import SynthesisError
from mindbank.errors import TransientError
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.server import create_app
from mindbank.service.facade import MindBank
from mindbank.testing import FakeClock, ScriptedSynthesizer

TOPICS = [
    "repaired the greenhouse roof", "planted tomato seedlings", "bought a second-hand kayak", "joined a choir",
    "started learning Italian", "adopted a rescue cat", "painted the kitchen blue", "ran a 10k race",
    "built a bookshelf from oak", "visited an aunt in Porto", "fixed the bike brakes", "baked rye bread",
    "signed up for a pottery class", "planned a trip to Iceland", "read a novel about whales", "sold the old car",
    "learned to juggle three balls", "volunteered at the food bank", "repainted the garden fence", "tuned the piano",
]  # fmt: skip


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def synth() -> ScriptedSynthesizer:
    return ScriptedSynthesizer()


@pytest.fixture
def mb(
    settings: Settings, embedder: MiniLMEmbedder, clock: FakeClock, synth: ScriptedSynthesizer
) -> Iterator[MindBank]:
    from mindbank.store.open import open_store

    store = open_store(settings.resolved_database_url, dimension=embedder.dimension)
    bank = MindBank(store=store, embedder=embedder, settings=settings, synthesizer=synth, clock=clock)
    yield bank
    bank.close()


def retain(mb: MindBank, text: str, tags: tuple[str, ...] = ("user:eve",)) -> None:
    mb.retain("b", [RetainItem(content=text, tags=tags)])


def pending_refreshes(mb: MindBank) -> list:  # type: ignore[type-arg]
    ops, _ = mb.list_operations("b", status="pending", operation_type="refresh_mental_model", limit=100)
    return ops


def test_burst_of_retains_parks_one_refresh_that_reads_them_all(mb: MindBank, clock: FakeClock) -> None:
    retain(mb, "Eve: I keep a garden diary every evening.")
    mb.create_mental_model("b", id="eve", name="Eve", source_query="What is Eve doing?", tags=["user:eve"],
                           trigger={"refresh_after_consolidation": True, "min_refresh_interval_seconds": 1800})  # fmt: skip
    mb.run_pending()
    first = mb.get_mental_model("b", "eve")
    for topic in TOPICS:
        retain(mb, f"Eve: This week I {topic}.")
        mb.run_pending()  # consolidation runs and triggers an automatic refresh, which parks
    parked = pending_refreshes(mb)
    assert len(parked) == 1
    assert parked[0].next_retry_at == first.last_refreshed_at + timedelta(seconds=1800)
    assert mb.get_mental_model("b", "eve").content == first.content  # nothing ran inside the window
    with TestClient(create_app(mb, run_worker=False), base_url="http://localhost") as http:
        listed = http.get("/v1/default/banks/b/operations", params={"status": "pending"}).json()["operations"]
        assert [o["next_retry_at"] for o in listed if o["operation_type"] == "refresh_mental_model"] == [
            parked[0].next_retry_at.isoformat(timespec="microseconds")
        ]
    clock.advance(1801)
    mb.run_pending()
    op = mb.get_operation("b", parked[0].id)
    assert op.status == "completed"
    content = mb.get_mental_model("b", "eve").content
    assert all(topic in content for topic in TOPICS)  # one refresh read everything the burst added
    assert pending_refreshes(mb) == []


def test_manual_refresh_in_the_window_runs_at_once_and_releases_the_park(mb: MindBank) -> None:
    retain(mb, "Eve: I keep a garden diary every evening.")
    mb.create_mental_model("b", id="eve", name="Eve", source_query="What is Eve doing?", tags=["user:eve"],
                           trigger={"refresh_after_consolidation": True, "min_refresh_interval_seconds": 1800})  # fmt: skip
    mb.run_pending()
    retain(mb, "Eve: This week I repaired the greenhouse roof.")
    mb.run_pending()
    (parked,) = pending_refreshes(mb)
    assert parked.next_retry_at is not None
    assert mb.refresh_mental_model("b", "eve") == parked.id  # folds into the parked one...
    released = mb.get_operation("b", parked.id)
    assert released.next_retry_at is None and "automatic" not in released.payload  # ...and releases it
    mb.run_pending()
    assert mb.get_operation("b", parked.id).status == "completed"
    assert "greenhouse" in mb.get_mental_model("b", "eve").content


def test_model_floor_zero_exempts_from_bank_floor(mb: MindBank) -> None:
    retain(mb, "Eve: I keep a garden diary every evening.")
    mb.update_bank_config("b", {"mental_model_min_refresh_interval_seconds": 3600})
    for model_id, floor in (("exempt", 0), ("floored", None)):
        trigger = {"refresh_after_consolidation": True, "min_refresh_interval_seconds": floor}
        mb.create_mental_model("b", id=model_id, name=model_id, source_query="What is Eve doing?", tags=["user:eve"],
                               trigger=trigger)  # fmt: skip
    mb.run_pending()
    retain(mb, "Eve: This week I repaired the greenhouse roof.")
    mb.run_pending()
    assert "greenhouse" in mb.get_mental_model("b", "exempt").content
    assert "greenhouse" not in mb.get_mental_model("b", "floored").content
    assert [o.mental_model_id for o in pending_refreshes(mb)] == ["floored"]


def test_consolidation_refreshes_only_stale_models_whose_scope_it_reached(mb: MindBank) -> None:
    retain(mb, "Eve: I keep a garden diary every evening.")
    retain(mb, "Sam: I restore old radios.", tags=("user:sam",))
    for who in ("eve", "sam"):
        mb.create_mental_model("b", id=who, name=who, source_query=f"What is {who} doing?", tags=[f"user:{who}"],
                               trigger={"refresh_after_consolidation": True})  # fmt: skip
    mb.run_pending()
    before = {m: mb.get_mental_model("b", m).last_refreshed_at for m in ("eve", "sam")}
    retain(mb, "Eve: This week I repaired the greenhouse roof.")
    mb.run_pending()
    assert mb.get_mental_model("b", "eve").last_refreshed_at > before["eve"]
    assert mb.get_mental_model("b", "sam").last_refreshed_at == before["sam"]


def test_consolidation_merges_near_duplicates_into_observations(mb: MindBank) -> None:
    retain(mb, "Eve: I adopted a rescue cat called Miso.")
    retain(mb, "Eve: I adopted a rescue cat named Miso.")
    retain(mb, "Eve: I painted the kitchen walls a bright blue last weekend.")
    assert mb.bank_stats("b")["pending_consolidation"] == 3
    last_write = mb.last_memory_write_at("b")
    mb.run_pending()
    stats = mb.bank_stats("b")
    assert stats["pending_consolidation"] == 0
    observations, _ = mb.list_memories("b", types=["observation"])
    # the repeat joins the first statement; the kitchen, said once, is an observation of its own
    by_text = {o.text: o for o in observations}
    assert set(by_text) == {
        "Eve: I adopted a rescue cat called Miso.",
        "Eve: I painted the kitchen walls a bright blue last weekend.",
    }
    obs = by_text["Eve: I adopted a rescue cat called Miso."]
    assert obs.proof_count == 2 and len(obs.source_memory_ids or ()) == 2 and obs.tags == ("user:eve",)
    assert by_text["Eve: I painted the kitchen walls a bright blue last weekend."].proof_count == 1
    assert mb.last_memory_write_at("b") > last_write  # creating an observation is a write
    retain(mb, "Eve: I adopted a rescue cat and named her Miso.")
    mb.run_pending()
    (grown,) = [o for o in mb.list_memories("b", types=["observation"])[0] if "Miso" in o.text]
    assert grown.proof_count == 3


def test_marking_facts_consolidated_is_not_a_write(mb: MindBank) -> None:
    retain(mb, "Eve: Thanks, see you soon!")
    stamp = mb.last_memory_write_at("b")
    mb.run_pending()  # consolidates a fact that states nothing (no observation): bookkeeping only
    assert mb.last_memory_write_at("b") == stamp
    assert mb.bank_stats("b")["pending_consolidation"] == 0


# ---------------------------------------------------------------- cron
def test_cron_refreshes_due_and_stale_only(mb: MindBank, clock: FakeClock, synth: ScriptedSynthesizer) -> None:
    retain(mb, "Eve: I keep a garden diary every evening.")
    mb.create_mental_model("b", id="eve", name="Eve", source_query="What is Eve doing?", tags=["user:eve"],
                           trigger={"refresh_cron": "0 * * * *"})  # fmt: skip
    mb.run_pending()
    clock.advance(3600)  # the hourly schedule has fired since the last refresh
    calls = len(synth.calls)
    assert mb.scheduler_tick() == []  # due but fresh: skipped without any synthesis
    mb.run_pending()
    assert len(synth.calls) == calls
    retain(mb, "Eve: This week I repaired the greenhouse roof.")
    submitted = mb.scheduler_tick()
    assert len(submitted) == 1
    mb.run_pending()
    assert "greenhouse" in mb.get_mental_model("b", "eve").content
    retain(mb, "Eve: This week I planted tomato seedlings.")
    assert mb.scheduler_tick() == []  # stale but not due: the schedule has not fired since the refresh


def test_two_schedulers_ticking_at_once_submit_one_refresh(mb: MindBank, clock: FakeClock, settings: Settings,
                                                           embedder: MiniLMEmbedder) -> None:  # fmt: skip
    retain(mb, "Eve: I keep a garden diary every evening.")
    mb.create_mental_model("b", id="eve", name="Eve", source_query="What is Eve doing?", tags=["user:eve"],
                           trigger={"refresh_cron": "*/5 * * * *"})  # fmt: skip
    mb.run_pending()
    retain(mb, "Eve: This week I repaired the greenhouse roof.")
    clock.advance(600)
    other = MindBank.open(settings, embedder=embedder)
    try:
        results: list[list[str]] = []
        threads = [threading.Thread(target=lambda m=m: results.append(m.scheduler_tick(clock()))) for m in (mb, other)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len({op for ops in results for op in ops}) == 1
        assert len(pending_refreshes(mb)) == 1
    finally:
        other.close()


# ---------------------------------------------------------------- failures
def test_failures_back_off_then_open_the_breaker_until_a_manual_success(
    mb: MindBank, synth: ScriptedSynthesizer, clock: FakeClock
) -> None:
    retain(mb, "Eve: I keep a garden diary every evening.")
    mb.create_mental_model("b", id="eve", name="Eve", source_query="What is Eve doing?", tags=["user:eve"],
                           trigger={"refresh_after_consolidation": True})  # fmt: skip
    mb.run_pending()
    synth.compose_script = SynthesisError("no_answer", "the model refused")
    backoff = mb.settings.refresh_failure_backoff_seconds
    for failures, topic in enumerate(TOPICS[:3], start=1):
        retain(mb, f"Eve: This week I {topic}.")
        mb.run_pending()
        model = mb.get_mental_model("b", "eve")
        assert model.refresh_state.failures == failures and model.last_refresh_failed_at is not None
        retain(mb, f"Eve: Also, I {TOPICS[failures + 5]}.")
        mb.run_pending()
        parked = pending_refreshes(mb)
        if failures < 3:  # backing off: one parked refresh, due 5 min then 10 min after the failure
            (op,) = parked
            assert op.next_retry_at == model.last_refresh_failed_at + timedelta(seconds=backoff * 2 ** (failures - 1))
            clock.advance(backoff * 2 ** (failures - 1) + 1)
            mb.run_pending()  # runs and fails again, one more consecutive failure
        else:  # breaker open: nothing is queued any more, however many writes come
            assert parked == [] and (model.refresh_status or {})["breaker_open"] is True
    assert mb.get_mental_model("b", "eve").refresh_state.failures == 3
    clock.advance(7 * 24 * 3600)
    retain(mb, "Eve: This week I tuned the piano.")
    mb.run_pending()
    assert pending_refreshes(mb) == []
    failures = [h for h in mb.mental_model_history("b", "eve") if h.get("kind") == "refresh_failed"]
    assert len(failures) == 3
    synth.compose_script = None
    mb.refresh_mental_model("b", "eve")  # a manual refresh that succeeds closes the breaker
    mb.run_pending()
    model = mb.get_mental_model("b", "eve")
    assert model.last_refresh_failed_at is None and model.refresh_state.failures == 0 and "piano" in model.content
    retain(mb, "Eve: This week I joined a choir.")
    mb.run_pending()
    assert "choir" in mb.get_mental_model("b", "eve").content


def test_transient_errors_retry_with_backoff(mb: MindBank, synth: ScriptedSynthesizer, clock: FakeClock) -> None:
    retain(mb, "Eve: I keep a garden diary every evening.")
    model_id, _ = mb.create_mental_model(
        "b", id="eve", name="Eve", source_query="What is Eve doing?", tags=["user:eve"]
    )
    mb.run_pending()
    before = mb.get_mental_model("b", model_id)
    retain(mb, "Eve: This week I repaired the greenhouse roof.")
    outcomes = iter([TimeoutError("provider timed out"), TransientError("429 rate limited")])
    synth.compose_script = lambda facts: (
        next(outcomes, None) or "## Garden\n\n- roof [mem:" + facts[0].memory.id + "]\n"
    )
    op_id = mb.refresh_mental_model("b", model_id)
    mb.run_pending()
    op = mb.get_operation("b", op_id)
    assert op.status == "pending" and op.retry_count == 1 and op.next_retry_at is not None
    unchanged = mb.get_mental_model("b", model_id)
    assert (
        unchanged.content == before.content and unchanged.last_refresh_failed_at is None
    )  # transient: nothing recorded
    assert unchanged.last_refreshed_at == before.last_refreshed_at
    clock.advance(mb.settings.worker_retry_backoff_seconds + 1)
    mb.run_pending()
    op = mb.get_operation("b", op_id)
    assert op.status == "pending" and op.retry_count == 2  # backoff doubles
    clock.advance(2 * mb.settings.worker_retry_backoff_seconds + 1)
    mb.run_pending()
    assert mb.get_operation("b", op_id).status == "completed"
    assert mb.get_mental_model("b", model_id).content.startswith("## Garden")


def cats(mb: MindBank) -> list:  # type: ignore[type-arg]
    return [o for o in mb.list_memories("b", types=["observation"])[0] if "Miso" in o.text]


def test_deleted_or_edited_sources_are_detached_from_their_observation(mb: MindBank) -> None:
    retain(mb, "Eve: I adopted a rescue cat called Miso.")
    retain(mb, "Eve: I adopted a rescue cat named Miso.")
    retain(mb, "Eve: I adopted a rescue cat and named her Miso.")
    mb.run_pending()
    (obs,) = cats(mb)
    first, second, third = obs.source_memory_ids or ()
    assert obs.proof_count == 3

    mb.update_memory("b", first, text="Eve: I sold my old bicycle at the flea market.")  # says something else now
    mb.run_pending()
    (obs,) = cats(mb)  # the edited fact stated it: a remaining source states it now
    assert set(obs.source_memory_ids or ()) == {second, third} and obs.proof_count == 2
    assert obs.text == "Eve: I adopted a rescue cat and named her Miso."

    stamp = mb.last_memory_write_at("b")
    mb.delete_memory("b", second)
    mb.run_pending()  # the deletion queued a consolidation
    (obs,) = cats(mb)
    assert obs.source_memory_ids == (third,) and obs.proof_count == 1 and obs.updated_at > stamp

    mb.delete_memory("b", third)
    mb.run_pending()
    assert cats(mb) == []  # nothing left to rest on: the observation goes


def test_a_model_citing_an_observation_whose_sources_are_gone_goes_stale_and_drops_it(mb: MindBank) -> None:
    retain(mb, "Eve: I adopted a rescue cat called Miso.")
    retain(mb, "Eve: I adopted a rescue cat named Miso.")
    mb.run_pending()
    mb.create_mental_model("b", id="eve", name="Eve", source_query="What pets does Eve have?", tags=["user:eve"],
                           trigger={"fact_types": ["observation"]})  # fmt: skip
    mb.run_pending()
    model = mb.get_mental_model("b", "eve")
    (obs,) = mb.list_memories("b", types=["observation"])[0]
    assert obs.id in model.content and model.is_stale is False
    for source in obs.source_memory_ids or ():
        mb.delete_memory("b", source)
    mb.run_pending()
    assert mb.get_mental_model("b", "eve").is_stale is True
    op = mb.refresh_mental_model("b", "eve")
    mb.run_pending()
    # its only source is gone and the scope holds nothing else: no empty publication (issue 14), the retraction
    # waits on record until a person clears the model
    failed = mb.get_operation("b", op)
    assert failed.status == "failed" and failed.result["outcome"] == "refresh_failed_empty_scope"  # type: ignore[index]
    kept = mb.get_mental_model("b", "eve")
    assert kept.content == model.content and kept.reflect_response["pending_retraction"]["fact_ids"] == [obs.id]  # type: ignore[index]
    mb.clear_mental_model("b", "eve")
    after = mb.get_mental_model("b", "eve")
    assert obs.id not in after.content


def test_a_refresh_waits_for_the_continuation_of_a_long_consolidation(
    mb: MindBank, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A consolidation whose backlog outlasts its rounds hands the rest to a fresh operation; a refresh asked for
    before the first one waits for that continuation too, so no observation of the backlog lands after it."""
    from mindbank.service import jobs

    def one_fact_rounds(*args: Any, **kwargs: Any) -> Any:
        return consolidate_round(*args, **{**kwargs, "limit": 1})

    monkeypatch.setattr(jobs, "MAX_CONSOLIDATION_ROUNDS", 1)
    monkeypatch.setattr(jobs, "consolidate_round", one_fact_rounds)
    retain(mb, "Eve: I repaired the old greenhouse roof with my neighbour Tom last Saturday.")
    retain(mb, "Eve: I adopted a rescue cat called Pepper from the shelter.")
    _, refresh = mb.create_mental_model("b", id="eve", name="Eve", source_query="What is Eve doing?",
                                        tags=["user:eve"], trigger={"fact_types": ["observation"]})  # fmt: skip
    assert mb.worker.run_once()  # the first consolidation: one fact, then a continuation for the other
    (continuation,) = mb.list_operations("b", status="pending", operation_type="consolidation", limit=10)[0]
    assert continuation.payload["queued_at"] < to_iso(continuation.created_at)  # the first one's backlog
    assert mb.worker.run_once() and mb.get_operation("b", continuation.id).status == "completed"
    assert mb.get_operation("b", refresh).status == "pending"  # it waited for both
    assert mb.worker.run_once() and not mb.worker.run_once()
    assert len(mb.list_memories("b", types=["observation"])[0]) == 2
    assert not mb.get_mental_model("b", "eve").is_stale  # it read after both observations were written
