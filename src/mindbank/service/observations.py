"""Observations as a resource beyond consolidation: an observation's history, the bank's observation scopes, and the
reference's deletes — the observations drawn from one memory (``DELETE /memories/{id}/observations``), every
observation (``DELETE /observations``) and a bank's memories (``DELETE /memories``, optionally by fact type).

Every delete is a memory write: the bank's stamp advances and models citing a deleted memory are stale (the
``cited_memory_gone`` reason) until their next refresh drops those blocks. Facts whose observations were deleted are
sent back to consolidation; with auto-consolidation (the default) a consolidation is queued, as after
``DELETE /memories/{id}``, which rebuilds their observations (and detaches deleted facts from the observations
they supported).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mindbank.domain.limits import check_offset
from mindbank.domain.records import FactType, MemoryUnit
from mindbank.domain.timeutil import to_iso
from mindbank.service.core import ServiceCore
from mindbank.store.base import ObservationChange


class ObservationsService(ServiceCore):
    """Reads and deletes over :class:`~mindbank.store.base.ObservationStore`."""

    def _memory(self, bank_id: str, memory_id: str) -> MemoryUnit:
        self._require_bank(bank_id)
        return self._one_memory(bank_id, memory_id)

    def get_observation_history(self, bank_id: str, memory_id: str) -> list[dict[str, Any]]:
        """``GET /memories/{id}/history``: the changes consolidation made to an observation, newest first (at most
        50 kept), each ``{changed_at, previous_text, text, previous_source_memory_ids, source_memory_ids,
        source_facts_added: [{id, text}], source_facts_removed: [{id, text}]}`` — the state before and after the
        change, with the facts it added or dropped resolved to their text (``text`` null for a fact since deleted).
        A fact (world/experience) has no observation history: ``[]``. Raises :class:`NotFoundError` for an unknown
        bank or memory."""
        memory = self._memory(bank_id, memory_id)
        if memory.fact_type != "observation":
            return []
        changes = self.store.observation_history(bank_id, memory_id)
        if not changes:
            return []
        # each change led to the state the next newer row recorded as its "before", the newest to the current one
        after = [(memory.text, tuple(memory.source_memory_ids or ()))]
        after += [(c.previous_text, c.previous_source_memory_ids) for c in changes[:-1]]
        texts = self._fact_texts(bank_id, [i for _, sources in after for i in sources] + [
            i for c in changes for i in c.previous_source_memory_ids
        ])  # fmt: skip
        return [_change(c, text, sources, texts) for c, (text, sources) in zip(changes, after, strict=True)]

    def list_memory_observations(self, bank_id: str, memory_id: str) -> list[MemoryUnit]:
        """``GET /memories/{id}/observations`` (beyond the reference): the observations built from the memory, oldest
        first (``[]`` for an observation). Raises :class:`NotFoundError` for an unknown bank or memory."""
        self._memory(bank_id, memory_id)
        return self.store.derived_observations(bank_id, memory_id)

    def _fact_texts(self, bank_id: str, ids: Sequence[str]) -> dict[str, str]:
        unique = list(dict.fromkeys(ids))
        return {m.id: m.text for m in self.store.get_memories(bank_id, unique)} if unique else {}

    def list_observation_scopes(self, bank_id: str, *, limit: int = 100, offset: int = 0) -> dict[str, Any]:
        """``GET /observations/scopes``: ``{scopes: [{tags, count}], total, limit, offset}`` — the bank's distinct
        observation scopes (the exact tag set each observation was consolidated under, sorted; ``[]`` the untagged
        scope), most populous first; ``total`` counts every distinct scope. Raises :class:`NotFoundError` for an
        unknown bank, :class:`~mindbank.errors.InvalidInputError` for an offset over the limits."""
        self._require_bank(bank_id)
        check_offset(offset, limits=self.limits)
        scopes, total = self.store.observation_scopes(bank_id, limit, offset)
        return {
            "scopes": [{"tags": list(s.tags), "count": s.count} for s in scopes],
            "total": total,
            "limit": limit,
            "offset": offset,
        }

    def clear_memory_observations(self, bank_id: str, memory_id: str) -> int:
        """``DELETE /memories/{id}/observations``: delete every observation built from the memory and send the
        memory (and the other sources of what was deleted) back to consolidation; the memory itself stays. Returns
        how many observations went. Raises :class:`NotFoundError` for an unknown bank or memory."""
        self._memory(bank_id, memory_id)
        deleted = self.store.delete_observations(bank_id, derived_from=memory_id)
        self._reconsolidate(bank_id)
        return deleted

    def clear_observations(self, bank_id: str) -> int:
        """``DELETE /observations``: delete every observation of the bank; all its facts go back to consolidation.
        Returns how many observations went. Raises :class:`NotFoundError` for an unknown bank."""
        self._require_bank(bank_id)
        deleted = self.store.delete_observations(bank_id)
        if deleted:
            self._reconsolidate(bank_id)
        return deleted

    def clear_bank_memories(self, bank_id: str, fact_type: FactType | None = None) -> int:
        """``DELETE /memories``: delete the bank's memories of ``fact_type`` (``observation`` as
        :meth:`clear_observations`), or every memory with the documents they came from (None). The bank, its
        profile, configuration and mental models stay. Returns how many memories went. Raises
        :class:`NotFoundError` for an unknown bank."""
        if fact_type == "observation":
            return self.clear_observations(bank_id)
        self._require_bank(bank_id)
        deleted = self.store.clear_memories(bank_id, fact_type)
        if deleted:
            # as after DELETE /memories/{id}: it detaches deleted facts from the observations they supported, and
            # its completion refreshes the stale models that refresh after consolidation
            self._reconsolidate(bank_id)
        return deleted

    def _reconsolidate(self, bank_id: str) -> None:
        if self.settings.enable_auto_consolidation:
            self.queue_consolidation(bank_id)


def _change(change: ObservationChange, text: str, sources: tuple[str, ...], texts: dict[str, str]) -> dict[str, Any]:
    """One history entry: the state before ``change`` and the state it led to (``text``, ``sources``)."""
    before = change.previous_source_memory_ids
    return {
        "changed_at": to_iso(change.changed_at),
        "previous_text": change.previous_text,
        "text": text,
        "previous_source_memory_ids": list(before),
        "source_memory_ids": list(sources),
        "source_facts_added": [{"id": i, "text": texts.get(i)} for i in sources if i not in before],
        "source_facts_removed": [{"id": i, "text": texts.get(i)} for i in before if i not in sources],
    }
