"""Refresh governance in the store (issue 14), on every backend: the governance record round-trips with the model,
spend is added atomically with a refresh (or alone for a transient attempt) and summed per model, per bank and per
UTC day, and failing models are counted for the bank breaker."""

from __future__ import annotations

from dataclasses import replace

from mindbank.domain.governance import RefreshState
from mindbank.domain.records import MentalModel
from mindbank.domain.timeutil import utcnow
from mindbank.domain.trigger import default_trigger
from mindbank.store.base import SpendRecord, SpendTotals, Store


def model(model_id: str, bank: str = "b") -> MentalModel:
    now = utcnow()
    return MentalModel(
        id=model_id, bank_id=bank, name="n", source_query="q", content="", tags=(), max_tokens=2048,
        trigger=default_trigger(), structured_document=None, reflect_response=None, last_refreshed_at=now,
        last_memory_seen_at=None, last_refreshed_source_query=None, last_refresh_failed_at=None,
        last_full_refreshed_at=None, created_at=now,
    )  # fmt: skip


def spend(model_id: str, day: str, *, refreshes: int = 1, calls: int = 2, tokens_in: int = 100,
          tokens_out: int = 10, bank: str = "b") -> SpendRecord:  # fmt: skip
    return SpendRecord(bank, model_id, day, refreshes, calls, tokens_in, tokens_out)


def test_the_governance_record_round_trips_with_the_model(store: Store) -> None:
    store.insert_mental_model(model("m1"))
    assert store.get_mental_model("b", "m1").refresh_state == RefreshState()  # type: ignore[union-attr]
    state = RefreshState(failures=2, last_failure_reason="no_answer", carried_over=("x", "y"), carried_attempts=1,
                         reanchor="delta_ops_all_skipped", empty_scope="{}", refused={"reason": "budget_exhausted"})  # fmt: skip
    store.save_refresh(replace(model("m1"), refresh_state=state), history=None, history_cap=50)
    read = store.get_mental_model("b", "m1")
    assert read is not None and read.refresh_state == state
    listed, _ = store.list_mental_models("b", tags=(), tags_match="any", limit=10, offset=0, detail="metadata")
    assert listed[0].refresh_state == state  # the light listing reads it too


def test_spend_is_summed_per_model_per_bank_and_per_day(store: Store) -> None:
    for model_id in ("m1", "m2"):
        store.insert_mental_model(model(model_id))
    store.save_refresh(model("m1"), history=None, history_cap=50, spend=spend("m1", "2026-03-01"))
    store.save_refresh(model("m1"), history=None, history_cap=50, spend=spend("m1", "2026-03-02"))
    store.add_refresh_spend(spend("m1", "2026-03-02", refreshes=0, calls=4, tokens_in=0, tokens_out=0))
    store.save_refresh(model("m2"), history=None, history_cap=50, spend=spend("m2", "2026-03-02", tokens_in=7))
    by_model = store.refresh_spend_by_model("b", ["m1", "m2", "m3"], "2026-03-02")
    assert set(by_model) == {"m1", "m2"}
    assert by_model["m1"].today == SpendTotals(1, 6, 100, 10)
    assert by_model["m1"].total == SpendTotals(2, 8, 200, 20) and by_model["m1"].total.total_tokens == 220
    assert by_model["m2"].today == by_model["m2"].total == SpendTotals(1, 2, 7, 10)
    store.delete_mental_model("b", "m2")  # its tokens were spent: they still count for the bank
    bank = store.bank_refresh_spend("b", "2026-03-02")
    assert bank.today == SpendTotals(2, 8, 107, 20) and bank.total == SpendTotals(3, 10, 207, 30)
    assert store.bank_refresh_spend("other", "2026-03-02").total == SpendTotals()
    store.delete_bank("b")
    assert store.bank_refresh_spend("b", "2026-03-02").total == SpendTotals()  # gone with the bank


def test_a_page_of_models_reads_its_spend_and_the_bank_overrides_in_one_statement(store: Store) -> None:
    for model_id in ("m1", "m2"):
        store.insert_mental_model(model(model_id))
    store.save_refresh(model("m1"), history=None, history_cap=50, spend=spend("m1", "2026-03-02"))
    store.save_refresh(model("m1"), history=None, history_cap=50, spend=spend("m1", "2026-03-01"))
    assert store.refresh_status_reads("b", ["m1", "m2"], "2026-03-02")[1] == {}  # no overrides yet
    store.update_bank_config("b", {"refresh_model_daily_token_budget": 5000})
    by_model, config = store.refresh_status_reads("b", ["m1", "m2"], "2026-03-02")
    assert by_model == store.refresh_spend_by_model("b", ["m1", "m2"], "2026-03-02") and set(by_model) == {"m1"}
    assert config == {"refresh_model_daily_token_budget": 5000}
    assert store.refresh_status_reads("other", [], "2026-03-02") == ({}, {})  # an unknown bank, an empty page


def test_failing_models_are_counted_for_the_bank_breaker(store: Store) -> None:
    for i in range(4):
        store.insert_mental_model(model(f"m{i}"))
    assert store.count_failing_models("b") == 0
    for i in range(3):
        failing = replace(model(f"m{i}"), refresh_state=RefreshState(failures=i))
        store.save_refresh(failing, history=None, history_cap=50)
    assert store.count_failing_models("b") == 2 and store.count_failing_models("other") == 0
