"""Re-embedding a bank, written once for both backends: the staging area and the switch (statements
``reembed_*`` in each backend's ``reembed_queries.py``).

The operation that moves a bank to another embedding model stages one vector per memory (``reembed_vectors``:
memory id, target model, the text embedded, the vector) in fenced transactions, so a restarted operation embeds only
what no committed part staged. The switch is one transaction: under the bank's write lock it checks that every
memory has a staged vector of its current text, then copies them into ``memory_units`` (of the target model's
width, which may differ from the old one's: where the backend keeps an index per width, the new width's is made in
the same transaction), records the target model for the bank, forgets the bank's page search vectors (made by the
old model) and empties the staging rows. A kill at any point leaves the bank wholly on one model.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import closing
from typing import Any

import numpy as np
import numpy.typing as npt

from mindbank.domain.timeutil import utcnow
from mindbank.store.ports.reembed import ReembedCounts
from mindbank.store.shared import SharedQueries


class ReembedQueries(SharedQueries):
    """The ``reembed_vectors`` table and the switch (see the module docstring)."""

    def _vector_param(self, vector: npt.NDArray[np.float32]) -> Any:
        """A parameter for an embedding column (the backend's: bytes in SQLite, a vector in PostgreSQL)."""
        raise NotImplementedError

    def _lock_memory_writes(self, conn: Any, bank_id: str) -> None:
        """Serialise the bank's memory writers for the open transaction (the backend's)."""
        raise NotImplementedError

    def _index_width(self, conn: Any, dimension: int) -> None:
        """Make the vectors of width ``dimension`` searchable through an index in the open transaction (the
        backend's; nothing to do where the index is built per bank in process)."""

    def _vectors_replaced(self, bank_id: str) -> None:
        """Forget what this process caches of the bank's vectors after a committed switch (the backend's)."""

    def reembed_begin(self, bank_id: str, model: str) -> None:
        """Drop staged vectors of any other target model (an earlier re-embedding that was abandoned)."""
        self._changed(self._q["reembed_discard_other"], (bank_id, model))

    def reembed_pending(self, bank_id: str, model: str, limit: int, *, after: str = "") -> list[tuple[str, str]]:
        """Up to ``limit`` ``(memory id, text)`` of the bank with no staged ``model`` vector of their current text,
        by id, from ids past ``after`` on (a keyset cursor: each part reads on from the last one's end)."""
        return self._all(
            self._q["reembed_pending"], (model, bank_id, after, limit), lambda r: (str(r["id"]), str(r["text"]))
        )

    def reembed_counts(self, bank_id: str, model: str) -> ReembedCounts:
        """The bank's memories and how many of them have a current staged ``model`` vector."""
        found = self._one(
            self._q["reembed_counts"], (model, bank_id), lambda r: ReembedCounts(int(r["total"]), int(r["staged"]))
        )
        return found or ReembedCounts(0, 0)

    def reembed_stage(self, bank_id: str, model: str, rows: Sequence[tuple[str, str, npt.NDArray[np.float32]]]) -> None:
        """Stage ``(memory id, text embedded, vector)`` under ``model`` in one transaction (replacing a staged
        vector of the same memory); memories deleted meanwhile are skipped."""
        params = [
            (memory_id, bank_id, model, text, self._vector_param(vector), memory_id, bank_id)
            for memory_id, text, vector in rows
        ]
        with self._tx() as conn, closing(conn.cursor()) as cur:
            cur.executemany(self._q["reembed_stage"], params)  # one batch: a part's rows (MINDBANK_REEMBED_PART_SIZE)

    def commit_reembed(self, bank_id: str, model: str, dimension: int) -> bool:
        """Switch the bank to ``model`` in one transaction: every memory takes its staged vector, the bank records
        ``(model, dimension)``, its page search vectors and staging rows go. False (nothing changed) while a memory
        has no staged vector of its current text: a retain or an edit arrived since the last part."""
        with self._tx() as conn:
            self._lock_memory_writes(conn, bank_id)
            counts = conn.execute(self._q["reembed_counts"], (model, bank_id)).fetchone()
            if int(counts["total"]) != int(counts["staged"]):
                return False
            conn.execute(self._q["reembed_swap"], (bank_id,))
            self._index_width(conn, dimension)  # the target model may have another width than any bank before
            conn.execute(self._q["reembed_record_model"], (bank_id, model, dimension, self._columns.time(utcnow())))
            conn.execute(self._q["reembed_clear_page_vectors"], (bank_id,))
            conn.execute(self._q["reembed_clear"], (bank_id,))
            conn.execute(self._q["reembed_bump_version"], (bank_id,))
        self._vectors_replaced(bank_id)
        return True

    def reembed_discard(self, bank_id: str) -> None:
        """Drop every staged vector of the bank (a re-embedding that failed or is no longer wanted)."""
        self._changed(self._q["reembed_clear"], (bank_id,))
