"""Re-embedding: moving a bank's vectors to the configured embedding model in the background.

``POST /v1/default/banks/{bank_id}/reembed`` queues a ``reembed`` operation (one active per bank: a repeat returns
the active one) whose target is the model this server is configured with. The worker embeds the bank's memories
(facts and observations) in parts of ``MINDBANK_REEMBED_PART_SIZE`` (256) into the store's staging area, each part
one fenced transaction that also checkpoints the progress, so a restarted operation embeds only what no committed
part staged and two workers never both commit a part. When nothing is left to embed, one transaction switches the
bank (every vector and the bank's recorded model at once,
:meth:`~mindbank.store.reembed.ReembedQueries.commit_reembed`); a retain or an edit that arrived since the last part
makes that transaction change nothing, and the operation embeds what arrived and tries again. Until the switch, the
bank's recalls and retains run with its earlier model (:meth:`~mindbank.service.core.ServiceCore.bank_embedder`).
Docs: docs/configuration.md "Switching a bank to another model".
"""

from __future__ import annotations

import time
from typing import Any

from mindbank.domain.records import Operation
from mindbank.errors import EmbeddingModelMismatchError, EmbeddingProviderError
from mindbank.service.core import ServiceCore
from mindbank.store.base import Store
from mindbank.store.fence import current_fence
from mindbank.worker.runner import PermanentFailure, Requeue

REEMBED = "reembed"
REEMBED_SLICE_SECONDS = 5.0  # then the operation steps aside (Requeue) so waiting work gets a turn
ACTIVE = ("pending", "processing")


def active_reembed(store: Store, bank_id: str) -> Operation | None:
    """The bank's queued or running ``reembed`` operation, if any."""
    for status in ACTIVE:
        ops, _ = store.list_operations(bank_id, status=status, operation_type=REEMBED, limit=1, offset=0)
        if ops:
            return ops[0]
    return None


class ReembedService(ServiceCore):
    """Starting a re-embedding and the ``reembed`` operation handler (see the module docstring)."""

    def start_reembed(self, bank_id: str) -> dict[str, Any]:
        """Queue the bank's move to the configured embedding model; returns ``{operation_id, deduplicated, model,
        dimension}`` (``deduplicated``: a re-embedding of the bank was already queued or running, and its id is
        returned). Raises :class:`NotFoundError` for an unknown bank."""
        self._require_bank(bank_id)
        name, dimension = self.model_of(self.embedder)
        active = self.active_reembed(bank_id)
        if active is not None:
            return {"operation_id": active.id, "deduplicated": True, "model": name, "dimension": dimension}
        operation_id = self._submit(bank_id, REEMBED, {"model": name, "dimension": dimension})
        return {"operation_id": operation_id, "deduplicated": False, "model": name, "dimension": dimension}

    def embedding_model(self, bank_id: str) -> dict[str, Any]:
        """The bank's embedding model and the server's: ``{bank_id, model, dimension, server_model,
        server_dimension, matches, serves_bank, reembed_operation_id}`` (``model`` None before the bank's first
        vector; ``matches``: the bank's vectors are the configured model's, or it has none; ``serves_bank``: this
        server can make the bank's model's vectors, so its recalls and retains work before a switch;
        ``reembed_operation_id``: the queued or running re-embedding). Raises :class:`NotFoundError` for an
        unknown bank."""
        self._require_bank(bank_id)
        found = self.store.bank_embedding_model(bank_id)
        server = self.model_of(self.embedder)
        active = self.active_reembed(bank_id)
        return {
            "bank_id": bank_id,
            "model": None if found is None else found[0],
            "dimension": None if found is None else found[1],
            "server_model": server[0],
            "server_dimension": server[1],
            "matches": found is None or found == server,
            "serves_bank": self._serves(bank_id),
            "reembed_operation_id": None if active is None else active.id,
        }

    def _serves(self, bank_id: str) -> bool:
        """Whether this server can make the vectors of the bank's model (its previous model's server answering)."""
        try:
            self.bank_embedder(bank_id)
        except (EmbeddingModelMismatchError, EmbeddingProviderError):
            return False
        return True

    def active_reembed(self, bank_id: str) -> Operation | None:
        """The bank's queued or running re-embedding, if any."""
        return active_reembed(self.store, bank_id)

    def run_reembed(self, op: Operation) -> dict[str, Any]:
        """The ``reembed`` handler: stage the target model's vector of every memory in parts, then switch the bank
        in one transaction. Returns ``{"model", "dimension", "from_model", "memories", "switched"}``. Raises
        ``PermanentFailure`` when this server is no longer configured for the operation's target model (start a new
        re-embedding), ``Requeue`` after :data:`REEMBED_SLICE_SECONDS` with memories left (its parts are kept)."""
        name, dimension = str(op.payload["model"]), int(op.payload["dimension"])
        if self.model_of(self.embedder) != (name, dimension):
            raise PermanentFailure(
                f"this server now embeds with {self.embedder.name!r} ({self.embedder.dimension} dimensions), not "
                f"{name!r} ({dimension}): start a new re-embedding to move the bank to the configured model"
            )
        bank = op.bank_id
        found = self.store.bank_embedding_model(bank)
        counts = self.store.reembed_counts(bank, name)
        result = {"model": name, "dimension": dimension, "from_model": None if found is None else found[0],
                  "memories": counts.total}  # fmt: skip
        if found == (name, dimension) and op.progress and "result" in op.progress:
            # a worker committed the switch and died before settling: settle with its result, switch nothing again
            return {**op.progress["result"], "memories": counts.total, "switched": True}
        if found is None or found == (name, dimension):  # nothing to move: no vectors yet, or already switched
            self.store.reembed_discard(bank)
            self.store.record_bank_embedding_model(bank, name, dimension)
            return {**result, "switched": False}
        self.store.reembed_begin(bank, name)
        fence = current_fence()
        part = max(1, self.settings.reembed_part_size)  # memories per part: one embedder call and one transaction
        began = time.monotonic()
        staged = counts.staged
        after = ""  # the keyset cursor: parts read on by id; a last sweep from the start catches what arrived
        while True:
            pending = self.store.reembed_pending(bank, name, part, after=after)
            if not pending and after:
                after = ""
                continue
            if not pending:
                if fence is not None:  # stored by the switch's transaction (and replaced by the next part's)
                    fence.stage({"staged": staged, "total": max(staged, counts.total), "from_model": found[0],
                                 "result": result})  # fmt: skip
                if self.store.commit_reembed(bank, name, dimension):
                    return {**result, "memories": self.store.reembed_counts(bank, name).total, "switched": True}
                continue  # memories arrived or changed since the last part: embed them, then switch
            vectors = self.embedder.embed([text for _, text in pending])
            staged += len(pending)
            after = pending[-1][0]
            if fence is not None:
                fence.check()
                fence.stage({"staged": staged, "total": max(staged, counts.total), "from_model": found[0]})
            self.store.reembed_stage(bank, name, [(m, t, v) for (m, t), v in zip(pending, vectors, strict=True)])
            if fence is not None and time.monotonic() - began > REEMBED_SLICE_SECONDS:
                raise Requeue(f"re-embedding at {staged} of {counts.total} memories: stepping aside for waiting work")
