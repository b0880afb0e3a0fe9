"""Mental-model queries of the SQLite store: models, their history and citations, trigger lookups, and the
staleness reads (``staleness_reads``) the staleness rule decides from. The one-statement reads and the delete are
:mod:`mindbank.store.shared`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mindbank.domain.timeutil import to_iso
from mindbank.store.base import (
    StalenessProbe,
    StalenessReads,
)
from mindbank.store.shared import oldest_since
from mindbank.store.sqlite.model_queries import HISTORY_KIND
from mindbank.store.sqlite.queries import (
    MAX_COMPOUND,
    Q,
    marks,
    stale_compound,
)
from mindbank.store.sqlite.rows import ts
from mindbank.store.sqlite.search import SearchMixin


class MentalModelsMixin(SearchMixin):
    """The ``mental_models``, ``mental_model_history`` and ``mental_model_citations`` tables. Built on
    :class:`SearchMixin` because staleness reads cited memories back (``get_memories``)."""

    _history_kind = HISTORY_KIND

    def staleness_reads(self, bank_id: str, probes: Sequence[StalenessProbe]) -> StalenessReads:
        """Read what the staleness rule needs for a page of probes in ONE statement, whatever the page size.

        Probes sharing a scope share one lookup, bounded below by the group's oldest ``since`` so the index range
        scanned is the writes since the watermark, not the bank (cost flat in bank size).
        """
        if not probes:
            return StalenessReads(None, {}, set(), [])
        since = oldest_since(probes)
        scopes = list(since)
        parts: list[str] = [Q["stale_bank"]]
        params: list[Any] = [bank_id]
        chunks: list[str] = []
        for start in range(0, len(scopes), MAX_COMPOUND):
            selects = []
            for i in range(start, min(start + MAX_COMPOUND, len(scopes))):
                scope = scopes[i]
                oldest = since[scope]
                where, p = self._filter_sql(scope, "m")
                selects.append(Q["stale_scope"].format(key=i, where=where))
                params.extend([bank_id, to_iso(oldest), *p])
            chunks.append(stale_compound(selects))
        parts.extend(chunks)
        ids = [p.mental_model_id for p in probes]
        watermarks = [p.since for p in probes if p.since is not None]
        # every citation of the page whose memory is gone ('cite') or was written since the oldest watermark
        # ('written': it may have left the model's scope, judged by the engine's staleness rule)
        parts.append(Q["stale_citations"].format(marks=marks(len(ids))))
        params.extend([bank_id, *ids, to_iso(min(watermarks)) if watermarks else None])
        with self._read() as conn:
            rows = conn.execute(" UNION ALL ".join(parts), params).fetchall()
        bank_last = next((ts(r[2]) for r in rows if r[0] == "bank"), None)
        newest = {int(r[1]): ts(r[2]) for r in rows if r[0] == "scope"}
        gone = {r[1] for r in rows if r[0] == "cite"}
        # a 'written' row joins an existing memory, whose updated_at is NOT NULL
        written = [(r[1], r[3], at) for r in rows if r[0] == "written" and (at := ts(r[2])) is not None]
        return StalenessReads(bank_last, {s: newest.get(i) for i, s in enumerate(scopes)}, gone, written)
