"""The observation statements both backends run alike: the state a consolidation write keeps of each observation it
changes (``ObservationQueries._snapshot_observations``, mixed into each backend's consolidation write), an
observation's history and the bank's observation scopes. The deletes are :mod:`mindbank.store.memory_deletes`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mindbank.domain.records import MemoryUnit
from mindbank.store.ports.observations import OBSERVATION_HISTORY_CAP, ObservationChange, ObservationScope
from mindbank.store.shared import SharedQueries


class ObservationQueries(SharedQueries):
    """The observation statements both backends run alike: the history a consolidation write keeps (mixed into
    each backend's consolidation write) and the history and scope reads."""

    def _snapshot_observations(self, conn: Any, bank_id: str, stamp: Any, ids: Sequence[str]) -> None:
        """Inside a consolidation write, before it changes them: record each observation's current text and sources
        as a history row stamped ``stamp`` (the write's), keeping the newest ``OBSERVATION_HISTORY_CAP`` of each."""
        for observation_id in ids:
            conn.execute(self._q["snapshot_observation"], (stamp, bank_id, observation_id))
            conn.execute(self._q["trim_observation_history"], (observation_id, observation_id, OBSERVATION_HISTORY_CAP))

    def _carry_observation_history(
        self, conn: Any, bank_id: str, stamp: Any, successors: Sequence[tuple[str, str]]
    ) -> None:
        """Inside a consolidation write, after the new observations are inserted and before the replaced ones are
        deleted: each successor ``(replaced id, new id)`` takes over the replaced observation's history, and the
        replaced observation's last state becomes the newest row of it."""
        for replaced, successor in successors:
            conn.execute(self._q["carry_observation_history"], (successor, bank_id, replaced))
            conn.execute(self._q["snapshot_observation_as"], (successor, stamp, bank_id, replaced))
            conn.execute(self._q["trim_observation_history"], (successor, successor, OBSERVATION_HISTORY_CAP))

    def observation_history(self, bank_id: str, observation_id: str) -> list[ObservationChange]:
        """The observation's history rows, newest change first (at most ``OBSERVATION_HISTORY_CAP``); ``[]`` for a
        memory that is no observation or does not exist."""
        return self._all(
            self._q["observation_history"], (bank_id, observation_id),
            lambda r: self._columns.record(ObservationChange, r),
        )  # fmt: skip

    def derived_observations(self, bank_id: str, memory_id: str) -> list[MemoryUnit]:
        """The observations built from ``memory_id`` (those listing it among their sources), oldest first."""
        return self._all(self._q["derived_observations"], (bank_id, memory_id), self._columns.memory_row)

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
