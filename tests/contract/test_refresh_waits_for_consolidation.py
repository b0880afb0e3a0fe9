"""The claim rule on both stores: a pending refresh of a mental model waits for its bank's consolidation that was
queued before the refresh was asked for (pending, retrying or running), never for another bank's, never for one
queued after it, and never longer than the wait bound past the moment it was asked for."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from test_store import op

from mindbank.domain.records import Operation
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.store.base import Store


def consolidation(store: Store, bank: str = "b", offset: float = 0.0, **payload: Any) -> Operation:
    queued = replace(op(bank=bank, created_offset=offset), operation_type="consolidation", payload=payload)
    store.submit_operation(queued)
    return queued


def refresh(store: Store, bank: str = "b", model: str = "m1", offset: float = 0.0) -> Operation:
    queued = op(bank=bank, model_id=model, created_offset=offset)
    store.submit_operation(queued)
    return queued


def claimed_id(store: Store, **kwargs: Any) -> str | None:
    got = store.claim_operation("w", kwargs.pop("lease", 60), **kwargs)
    return None if got is None else got.id


def finish(store: Store, operation: Operation, status: str = "completed") -> None:
    assert store.finish_operation(operation.id, status=status, result={}, error=None)


def test_a_refresh_waits_for_its_banks_consolidation_queued_before_it(store: Store) -> None:
    first = consolidation(store, offset=-2)
    waiting = refresh(store, offset=-1)  # asked for while the consolidation was queued
    elsewhere = refresh(store, bank="c", offset=0)
    assert claimed_id(store) == first.id
    # the consolidation runs: b's refresh waits, another bank's refresh does not
    assert claimed_id(store) == elsewhere.id
    assert claimed_id(store) is None
    finish(store, first)
    assert claimed_id(store) == waiting.id


def test_a_pending_or_retrying_consolidation_holds_the_refresh_until_it_ends(store: Store) -> None:
    retrying = consolidation(store, offset=-2)
    waiting = refresh(store, offset=-1)
    # the consolidation failed once and waits for its retry: the refresh waits with it, whatever else is runnable
    running = store.claim_operation("w", 60)
    assert running is not None and running.id == retrying.id
    store.retry_operation(
        retrying.id, next_retry_at=utcnow() + timedelta(seconds=30), error="x", token=running.claim_token
    )
    assert claimed_id(store) is None
    # its retries spent, the consolidation fails: a failed (or cancelled, or completed) one holds nothing
    finish(store, retrying, "failed")
    assert claimed_id(store) == waiting.id


def test_a_consolidation_queued_after_the_refresh_does_not_hold_it(store: Store) -> None:
    asked = refresh(store, offset=-2)
    later = consolidation(store, offset=-1)
    assert claimed_id(store) == asked.id  # it runs before the later consolidation, alongside nothing
    assert claimed_id(store) == later.id


def test_a_manual_request_folding_into_a_pending_refresh_waits_for_what_was_queued_before_it(store: Store) -> None:
    pending = replace(op(model_id="m1", created_offset=-3), payload={"automatic": True})
    store.submit_coalesced(pending)  # type: ignore[attr-defined]
    queued_since = consolidation(store, offset=-2)  # after the automatic refresh, before the manual request
    folded, deduplicated = store.submit_coalesced(op(model_id="m1", created_offset=-1))  # type: ignore[attr-defined]
    assert deduplicated and folded.id == pending.id and "requested_at" in folded.payload
    assert claimed_id(store) == queued_since.id
    assert claimed_id(store) is None
    finish(store, queued_since)
    assert claimed_id(store) == pending.id


def test_a_parked_refresh_waits_for_what_was_queued_before_it_became_due(store: Store) -> None:
    parked = refresh(store, offset=-10)
    running = store.claim_operation("w", 60)
    assert running is not None and running.id == parked.id
    due = utcnow() + timedelta(minutes=5)
    store.defer_operation(parked.id, next_retry_at=due, token=running.claim_token)  # inside its minimum interval
    queued_while_parked = consolidation(store, offset=60)
    at_due = due + timedelta(seconds=1)
    assert claimed_id(store, now=at_due) == queued_while_parked.id
    assert claimed_id(store, now=at_due) is None
    finish(store, queued_while_parked)
    assert claimed_id(store, now=at_due) == parked.id


def test_the_continuation_of_a_long_backlog_holds_the_refresh_too(store: Store) -> None:
    first = consolidation(store, offset=-3)
    waiting = refresh(store, offset=-2)
    running = store.claim_operation("w", 60)
    assert running is not None and running.id == first.id
    # a retain during the consolidation queued another one, after the refresh; the first one's backlog folds into it,
    # keeping the moment that backlog was queued
    queued_after = consolidation(store, offset=-1)
    rest = {"queued_at": to_iso(first.created_at)}
    continued = replace(op(created_offset=0), operation_type="consolidation", payload=rest)
    folded, deduplicated = store.submit_coalesced(continued)  # type: ignore[attr-defined]
    assert deduplicated and folded.id == queued_after.id and folded.payload == rest
    assert store.get_operation("b", queued_after.id).payload == rest  # type: ignore[union-attr]
    finish(store, first)
    assert claimed_id(store) == queued_after.id
    assert claimed_id(store) is None
    finish(store, queued_after)
    assert claimed_id(store) == waiting.id


def test_a_queued_retain_asked_for_before_the_refresh_holds_it_with_its_consolidation(store: Store) -> None:
    retain = op(created_offset=-3)  # a queued (async) retain: its facts, then the consolidation it queues at its end
    store.submit_operation(retain)
    waiting = refresh(store, offset=-2)
    later_retain = op(created_offset=-1)  # asked for after the refresh: not waited for
    store.submit_operation(later_retain)
    assert claimed_id(store) == retain.id
    assert claimed_id(store) == later_retain.id
    assert claimed_id(store) is None
    finish(store, retain)
    # its consolidation, queued now but for facts asked for before the refresh
    follow_up = consolidation(store, offset=0, queued_at=to_iso(retain.created_at))
    assert claimed_id(store) == follow_up.id
    assert claimed_id(store) is None
    finish(store, follow_up)
    assert claimed_id(store) == waiting.id


def test_a_later_retains_consolidation_does_not_hold_an_earlier_refresh(store: Store) -> None:
    waiting = refresh(store, offset=-2)
    consolidation(store, offset=0, queued_at=to_iso(utcnow() - timedelta(seconds=1)))  # queued after the refresh
    assert claimed_id(store) == waiting.id


def test_a_stuck_consolidation_holds_a_refresh_no_longer_than_the_wait_bound(store: Store) -> None:
    stuck = consolidation(store, offset=-3)
    first, second = refresh(store, offset=-2), refresh(store, model="m2", offset=-1)
    assert claimed_id(store, lease=3600) == stuck.id  # running, its lease renewed, never ending
    assert claimed_id(store) is None
    assert claimed_id(store, now=utcnow() + timedelta(seconds=200)) is None  # within the default 300 s
    assert claimed_id(store, consolidation_wait_seconds=0) == first.id  # 0: refreshes never wait
    assert claimed_id(store, now=utcnow() + timedelta(seconds=301)) == second.id  # past the bound: it runs
