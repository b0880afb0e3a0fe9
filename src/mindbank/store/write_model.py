"""The embedding-model check of memory writes, written once for both backends: a write that embedded its vectors
with one model commits only while the bank's vectors are that model's (a re-embedding may have switched the bank
while the write was being prepared), and a bank's first write records its model."""

from __future__ import annotations

from typing import Any

from mindbank.domain.timeutil import utcnow
from mindbank.errors import EmbeddingModelMismatchError
from mindbank.store.shared import SharedQueries


class WriteModelCheck(SharedQueries):
    """``_check_write_model``, run by the memory writers of both backends inside their transaction."""

    def _check_write_model(self, conn: Any, bank_id: str, model: tuple[str, int] | None) -> None:
        """Inside a memory write's transaction (after the bank lock): raise :class:`EmbeddingModelMismatchError`
        when the bank's vectors are now another model's than the ``(name, dimension)`` the write embedded with (a
        re-embedding committed while the write was being prepared), else record it as the bank's when it has none.
        ``model`` None: the caller checked already."""
        if model is None:
            return
        row = conn.execute(self._q["bank_embedding_model"], (bank_id,)).fetchone()
        if row is None:
            stamp = self._columns.time(utcnow())
            conn.execute(self._q["record_bank_embedding_model"], (model[0], model[1], stamp, bank_id))
        elif (str(row["model"]), int(row["dimension"])) != tuple(model):
            raise EmbeddingModelMismatchError(bank_id, str(row["model"]), int(row["dimension"]), model[0], model[1])
