"""Memories already read, kept per bank while the bank's memories are unchanged, so a lookup by id reads only the
rows it has not read before.

Recall hydrates every candidate it ranks (about 150 per query at the default budget), and consecutive queries on
one bank meet mostly the same memories: reading and decoding those rows again was about a fifth of a recall's
server time. Every memory write stamps its bank (``banks.memory_version`` + 1 and ``last_memory_write_at``, in the
write's transaction, from any process), and a read presents the stamp it just read as the bank's *state*: entries
read under another state are never returned, so a write, a delete or a re-created bank (a new write time) empties
the bank's entries at its next read. Records are frozen and never changed in place, so entries are shared between
threads as they are.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence

from mindbank.domain.records import MemoryUnit

MAX_UNITS = 20_000  # memories kept over all banks (a few KB each): least recently read banks go first


class UnitCache:
    """Thread-safe ``bank -> (state, {id: MemoryUnit})``, at most ``max_units`` memories in all."""

    def __init__(self, max_units: int = MAX_UNITS) -> None:
        self._max_units = max_units
        self._banks: OrderedDict[str, tuple[Hashable, dict[str, MemoryUnit]]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, bank_id: str, state: Hashable, ids: Sequence[str]) -> tuple[dict[str, MemoryUnit], list[str]]:
        """``({id: memory} of the ids kept under ``state``, the other ids)``; a bank kept under another state is
        emptied first (its memories changed since)."""
        with self._lock:
            entry = self._banks.get(bank_id)
            if entry is None or entry[0] != state:
                self._drop(bank_id)
                self._banks[bank_id] = entry = (state, {})
            self._banks.move_to_end(bank_id)
            units = entry[1]
        found: dict[str, MemoryUnit] = {}
        missing: list[str] = []
        for memory_id in ids:
            unit = units.get(memory_id)
            if unit is None:
                missing.append(memory_id)
            else:
                found[memory_id] = unit
        return found, missing

    def put(self, bank_id: str, state: Hashable, units: Iterable[MemoryUnit]) -> None:
        """Keep ``units``, read under ``state``: dropped when the bank is now kept under another state (a reader
        that saw a newer state got there first); a bank past the bound starts over."""
        with self._lock:
            entry = self._banks.get(bank_id)
            if entry is None or entry[0] != state:
                return
            kept = entry[1]
            before = len(kept)
            kept.update((u.id, u) for u in units)
            self._size += len(kept) - before
            if len(kept) > self._max_units:
                self._drop(bank_id)
                self._banks[bank_id] = (state, {})
            while self._size > self._max_units and len(self._banks) > 1:
                self._drop(next(iter(self._banks)))

    def forget(self, bank_id: str) -> None:
        """Drop the bank's memories (a deleted bank)."""
        with self._lock:
            self._drop(bank_id)

    def _drop(self, bank_id: str) -> None:
        entry = self._banks.pop(bank_id, None)
        if entry is not None:
            self._size -= len(entry[1])
