"""Observation reads both backends run alike (an observation's history, the bank's observation scopes) and the
history snapshot a consolidation write takes of each observation it changes. The deletes differ per backend (bank
lock, SQLite's in-process vector index): each backend's ``observations.py``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mindbank.store.ports.observations import OBSERVATION_HISTORY_CAP, ObservationChange, ObservationScope
from mindbank.store.shared import SharedQueries


class ObservationReads(SharedQueries):
    """``observation_history`` and ``observation_scopes`` over the backend's named statements."""

    def observation_history(self, bank_id: str, observation_id: str) -> list[ObservationChange]:
        """The observation's history rows, newest change first (at most ``OBSERVATION_HISTORY_CAP``); ``[]`` for a
        memory that is no observation or does not exist."""
        return self._all(
            self._q["observation_history"], (bank_id, observation_id),
            lambda r: self._columns.record(ObservationChange, r),
        )  # fmt: skip

    def observation_scopes(self, bank_id: str, limit: int, offset: int) -> tuple[list[ObservationScope], int]:
        """One page of the bank's distinct observation scopes, most populous first (ties by tags), and how many
        distinct scopes there are in all."""
        with self._read() as conn:
            rows = conn.execute(self._q["observation_scopes"], (bank_id, limit, offset)).fetchall()
            total = conn.execute(self._q["count_observation_scopes"], (bank_id,)).fetchone()
        scopes = [self._columns.record(ObservationScope, r) for r in rows]
        return scopes, 0 if total is None else int(total["n"])


def changed_observations(
    created: Sequence[str],
    updates: Iterable[tuple[str, tuple[str, ...], int]],
    rewrites: Iterable[tuple[str, Any, Any]],
    deletes: Sequence[str],
) -> list[str]:
    """The existing observations a consolidation write changes (updated sources or rewritten text), once each, in
    order: those it creates or deletes have no earlier state to keep."""
    skip = {*created, *deletes}
    return list(dict.fromkeys(i for i in (*(u[0] for u in updates), *(r[0] for r in rewrites)) if i not in skip))


def snapshot_observations(conn: Any, q: Mapping[str, str], bank_id: str, stamp: Any, ids: Sequence[str]) -> None:
    """Inside a consolidation write, before it changes them: record each observation's current text and sources as
    a history row stamped ``stamp`` (the write's), keeping the newest ``OBSERVATION_HISTORY_CAP`` per observation."""
    for observation_id in ids:
        conn.execute(q["snapshot_observation"], (stamp, bank_id, observation_id))
        conn.execute(q["trim_observation_history"], (observation_id, observation_id, OBSERVATION_HISTORY_CAP))
