"""Mental-model queries of the PostgreSQL store: models, their history and citations, trigger lookups, and the
staleness reads (``staleness_reads``) the staleness rule decides from. The one-statement reads and the delete are
:mod:`mindbank.store.shared`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from mindbank.domain.history import history_numbering
from mindbank.domain.records import MentalModel
from mindbank.store.base import (
    StalenessProbe,
    StalenessReads,
)
from mindbank.store.postgres.model_queries import HISTORY_KIND
from mindbank.store.postgres.queries import Q
from mindbank.store.postgres.search import SearchMixin
from mindbank.store.shared import oldest_since

_MAX_SCOPES_PER_STATEMENT = 4000  # keeps a staleness_reads statement far below PostgreSQL's 65535 bind parameters


class MentalModelsMixin(SearchMixin):
    """The ``mental_models``, ``mental_model_history`` and ``mental_model_citations`` tables. Built on
    :class:`SearchMixin` because staleness reads cited memories back (``get_memories``)."""

    _history_kind = HISTORY_KIND

    def _history_params(self, model: MentalModel, history: dict[str, Any]) -> tuple[Any, ...]:
        """The ``insert_history`` parameters: ``changed_at`` is the statement's own ``clock_timestamp()``."""
        return (model.bank_id, model.id, Jsonb(history), *history_numbering(model, history))

    def staleness_reads(self, bank_id: str, probes: Sequence[StalenessProbe]) -> StalenessReads:
        """Read what the staleness rule needs for a page of probes in ONE statement (up to 4000 distinct scopes per
        statement). Probes sharing a scope share one lookup, bounded below by the group's oldest ``since`` so the
        ``(bank_id, updated_at)`` index range scanned is the writes since the watermark, not the bank.
        """
        if not probes:
            return StalenessReads(None, {}, set(), [])
        since = oldest_since(probes)
        scopes = list(since)
        newest: dict[int, datetime | None] = {}
        bank_last: datetime | None = None
        broken: set[str] = set()
        written: list[tuple[str, str, datetime]] = []
        # normally one pass; more only for pages with thousands of distinct scopes (bind-parameter limit)
        for start in range(0, max(1, len(scopes)), _MAX_SCOPES_PER_STATEMENT):
            first = start == 0
            parts: list[str] = []
            params: list[Any] = []
            if first:
                parts.append(Q["stale_bank"])
                params.append(bank_id)
            for i in range(start, min(start + _MAX_SCOPES_PER_STATEMENT, len(scopes))):
                scope = scopes[i]
                oldest = since[scope]
                where, p = self._filter_sql(scope, "m")
                parts.append(Q["stale_scope"].format(where=where))
                params.extend([str(i), bank_id, oldest, *p])
            if first:
                # citations gone ('cite') or written since the oldest watermark ('written': the engine judges them)
                watermarks = [p.since for p in probes if p.since is not None]
                parts.append(Q["stale_citations"])
                params.extend([bank_id, [p.mental_model_id for p in probes], min(watermarks, default=None)])
            with self._read() as conn:
                rows = conn.execute(" UNION ALL ".join(f"({part})" for part in parts), params).fetchall()
            for r in rows:
                if r["kind"] == "bank":
                    bank_last = r["at"]
                elif r["kind"] == "scope":
                    newest[int(r["key"])] = r["at"]
                elif r["kind"] == "cite":
                    broken.add(r["key"])
                else:
                    written.append((r["key"], r["memory_id"], r["at"]))
        return StalenessReads(bank_last, {s: newest.get(i) for i, s in enumerate(scopes)}, broken, written)
