"""Retain's repeats and restatements inside a ``write_documents`` transaction, run alike by both backends.

The rules are :mod:`mindbank.domain.repeats`; here they meet the rows. A new fact whose repeat key a stored fact (or
an earlier fact of the same write) already has is not inserted: that fact's ``mention_count`` grows and its
``last_mentioned_at`` moves to the newest mention (a memory write: ``updated_at`` takes the transaction's stamp, so
staleness and the relevance gate see it as they see an edit). A restatement (a stored document re-retained with
the same content) changes nothing, or updates tags, metadata, context and time of the document and its facts in
place. The key lookup uses ``idx_memory_units_repeat`` (migration 0070), never a scan.

Each backend supplies the transaction and the stamp (``LazyStamp``: a write that turns out to change nothing takes
no stamp, so it moves no watermark and stales no model); statements are keyed alike in both ``queries.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mindbank.domain.records import NewMemory
from mindbank.domain.repeats import StoredDocumentState, content_hash, restatement
from mindbank.domain.tags import normalize_tags
from mindbank.store.base import DocumentChanged, DocumentWrite
from mindbank.store.resources import ResourceQueries
from mindbank.store.shared import IDS_PER_STATEMENT


class LazyStamp:
    """The transaction's memory-write stamp, taken on first use (``take`` stamps the bank: the backend's
    ``_stamp_memory_write``) and the same for every later use; ``taken`` says whether anything was written."""

    def __init__(self, take: Callable[[], tuple[Any, int]]) -> None:
        self._take = take
        self.value: Any = None
        self.version: int | None = None

    def __call__(self) -> Any:
        if self.version is None:
            self.value, self.version = self._take()
        return self.value

    @property
    def taken(self) -> bool:
        return self.version is not None


@dataclass(slots=True)
class RepeatPlan:
    """How one document's new facts land: ``fresh`` ``(new id, fact)`` to insert, ``ids`` the memory each fact
    landed in (in order), ``repeats`` per memory id ``[extra mentions, newest mention time]``."""

    fresh: list[tuple[str, NewMemory]] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    repeats: dict[str, list[Any]] = field(default_factory=dict)


class RetentionQueries(ResourceQueries):
    """Repeat lookup and recording, restatements, and the document hashes a retain reads before it prepares."""

    def document_hashes(self, bank_id: str, document_ids: Sequence[str]) -> dict[str, str]:
        """``{document id: content_hash}`` of the stored documents among ``document_ids``."""
        ids = list(dict.fromkeys(document_ids))
        out: dict[str, str] = {}
        with self._read() as conn:
            for start in range(0, len(ids), IDS_PER_STATEMENT):
                statement, params = self._bind_ids(self._q["document_hashes"], ids[start : start + IDS_PER_STATEMENT])
                for r in conn.execute(statement, (bank_id, *params)).fetchall():
                    out[r["id"]] = r["content_hash"]
        return out

    def _known_repeats(self, conn: Any, bank_id: str, documents: Sequence[DocumentWrite]) -> dict[str, str]:
        """``{repeat key: id of the oldest stored fact with it}`` for the keys the documents' facts carry."""
        keys = sorted({m.repeat_key for d in documents for m in d.memories if m.repeat_key is not None})
        known: dict[str, str] = {}
        for start in range(0, len(keys), IDS_PER_STATEMENT):
            statement, params = self._bind_ids(self._q["repeat_lookup"], keys[start : start + IDS_PER_STATEMENT])
            for r in conn.execute(statement, (bank_id, *params)).fetchall():
                known.setdefault(r["repeat_key"], r["id"])  # rows come oldest first
        return known

    @staticmethod
    def _plan_repeats(memories: Sequence[NewMemory], known: dict[str, str], new_id: Callable[[], str]) -> RepeatPlan:
        """Sort a document's facts into inserts and repeats; ``known`` learns the keys of the inserted facts, so a
        later fact of the same write repeats an earlier one."""
        plan = RepeatPlan()
        for m in memories:
            target = None if m.repeat_key is None else known.get(m.repeat_key)
            if target is None:
                target = new_id()
                plan.fresh.append((target, m))
                if m.repeat_key is not None:
                    known[m.repeat_key] = target
            else:
                seen = plan.repeats.setdefault(target, [0, None])
                seen[0] += 1
                if m.mentioned_at is not None and (seen[1] is None or m.mentioned_at > seen[1]):
                    seen[1] = m.mentioned_at
            plan.ids.append(target)
        return plan

    def _record_repeats(self, conn: Any, bank_id: str, repeats: dict[str, list[Any]], stamp: Any) -> None:
        """Add the mentions to their facts (after the fresh facts of the same write are inserted)."""
        c = self._columns
        for memory_id, (count, when) in repeats.items():
            at = c.time(when)
            conn.execute(self._q["record_repeat"], (count, at, at, stamp, bank_id, memory_id))

    def _restate(self, conn: Any, bank_id: str, doc: DocumentWrite, stamp: LazyStamp) -> tuple[list[str], bool]:
        """Apply a restatement (``doc.restate``); returns the document's fact ids and whether anything changed
        (a tags change also sends the facts back to consolidation). Raises :class:`DocumentChanged` when the
        stored content is not the item's (or the document is gone): the caller's transaction must roll back."""
        item, c = doc.item, self._columns
        row = conn.execute(self._q["document_state"], (bank_id, doc.document_id)).fetchone()
        if row is None or row["content_hash"] != content_hash(item.content):
            raise DocumentChanged(f"document '{doc.document_id}' changed since the retain read it")
        facts = conn.execute(self._q["document_fact_times"], (bank_id, doc.document_id)).fetchall()
        ids = [r["id"] for r in facts]
        state = StoredDocumentState(
            tags=c.load_text_list(row["tags"]),
            metadata=c.load_json(row["metadata"]),
            context=row["context"],
            times=tuple(None if r["occurred_start"] is None else c.load_time(r["occurred_start"]) for r in facts),
        )
        if restatement(state, item) == "unchanged":
            return ids, False
        at = stamp()
        tags = c.tags(normalize_tags(item.tags))
        when = c.time(item.timestamp)
        document = (tags, c.json(item.metadata), item.context, at, bank_id, doc.document_id)
        conn.execute(self._q["restate_document"], document)
        conn.execute(
            self._q["restate_document_memories"],
            (tags, c.json(item.metadata), item.context, when, when, when, tags, at, bank_id, doc.document_id),
        )
        self._record_document_event(conn, bank_id, doc.document_id, "update", at, operation_id=doc.operation_id)
        return ids, True
