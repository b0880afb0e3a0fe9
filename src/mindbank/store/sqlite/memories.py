"""Memory writes of the SQLite store: retained documents, consolidation rounds, edits and deletes.

Every memory write is stamped under the writer lock (``_stamp_memory_write``) and applied to the cached vector index
of this process in the same transaction. The stored vectors consolidation reads live here too (unconsolidated facts
and observations: :mod:`mindbank.store.shared`).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import NewMemory
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.store.base import DocumentWrite, MemoryFilter
from mindbank.store.observations import ObservationQueries, changed_observations
from mindbank.store.retention import LazyStamp, RetentionQueries
from mindbank.store.shared import observation_mentions
from mindbank.store.sqlite.queries import MAX_IDS, Q, marks
from mindbank.store.sqlite.rows import COLUMNS, index_rows, vector_blob
from mindbank.store.sqlite.search import SearchMixin
from mindbank.store.sqlite.vector_index import IndexRow
from mindbank.store.write_model import WriteModelCheck


class MemoriesMixin(SearchMixin, RetentionQueries, WriteModelCheck, ObservationQueries):
    """Writes to ``documents``, ``chunks`` and ``memory_units``, and the consolidation reads."""

    def write_documents(
        self, bank_id: str, documents: Sequence[DocumentWrite], *, model: tuple[str, int] | None = None
    ) -> list[list[str]]:
        """Write retained documents atomically (bank auto-created); returns, per document, the ids of the memories
        that hold it (new facts, facts it repeated, or a restated document's facts).

        ``update_mode == "replace"`` deletes the document's previous chunks and memories first; ``append`` keeps
        them and adds the new content after the stored text; a ``continuation`` adds its memories only; a
        ``restate`` changes nothing or updates fields in place (:mod:`mindbank.store.retention`). A fact whose
        repeat key a stored fact has becomes a mention of it. ``model``: the embedding model ``(name, dimension)``
        the vectors were made with, checked against the bank's under its lock (:mod:`mindbank.store.write_model`).
        A write that changes nothing takes no stamp.
        """
        out: list[list[str]] = []
        added: list[IndexRow] = []
        removed: list[str] = []
        repeated: list[str] = []
        restated = False
        fresh: list[str] = []  # new memories: their preceding text (and their successors') is set at the end
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)
            self._check_write_model(conn, bank_id, model)
            stamp = LazyStamp(lambda: self._stamp_memory_write(conn, bank_id))
            known = self._known_repeats(conn, bank_id, documents)
            for doc in documents:
                if doc.restate:
                    ids, changed = self._restate(conn, bank_id, doc, stamp)
                    restated = restated or changed
                    out.append(ids)
                    continue
                plan = self._plan_repeats(doc.memories, known, lambda: str(uuid.uuid4()))
                if plan.repeats:
                    repeated.extend(plan.repeats)
                if doc.continuation or (doc.item.document_id is None and doc.whole and plan.repeats and not plan.fresh):
                    # a later part of a document written earlier, or a document whose facts all repeat stored ones
                    # (nothing of it is new: no document row, no chunks, no event)
                    if plan.fresh or plan.repeats:
                        at = stamp()
                        self._insert_memories(conn, bank_id, plan.fresh, at)
                        self._record_repeats(conn, bank_id, plan.repeats, at)
                        added.extend(index_rows(plan.fresh, at))
                        fresh.extend(mid for mid, _ in plan.fresh)
                    out.append(plan.ids)
                    continue
                item = doc.item
                at = stamp()
                existing = conn.execute(Q["get_document"], (bank_id, doc.document_id)).fetchone()
                text = item.content
                created = at
                chunk_base = 0
                replaced: list[str] = []
                appended = existing is not None and item.update_mode == "append"
                if appended:
                    text = existing["original_text"] + "\n\n" + item.content
                    created = existing["created_at"]
                    chunk_base = conn.execute(Q["count_document_chunks"], (bank_id, doc.document_id)).fetchone()[0]
                elif existing is not None:
                    replaced = [r[0] for r in conn.execute(Q["document_memory_ids"], (bank_id, doc.document_id))]
                    removed.extend(replaced)
                    conn.execute(Q["delete_document_memories"], (bank_id, doc.document_id))
                    conn.execute(Q["delete_document_chunks"], (bank_id, doc.document_id))
                conn.execute(
                    Q["upsert_document"], COLUMNS.document_params(bank_id, doc.document_id, item, text, created, at)
                )
                conn.executemany(
                    Q["insert_chunk"],
                    [(c.id, bank_id, doc.document_id, chunk_base + c.index, c.text) for c in doc.chunks],
                )
                self._insert_memories(conn, bank_id, plan.fresh, at)
                self._record_repeats(conn, bank_id, plan.repeats, at)
                added.extend(index_rows(plan.fresh, at))
                fresh.extend(mid for mid, _ in plan.fresh)
                out.append(plan.ids)
                kind = doc.event or ("append" if appended else "retain")
                self._record_document_event(conn, bank_id, doc.document_id, kind, at, added=len(plan.fresh),
                                            removed=len(replaced), operation_id=doc.operation_id)  # fmt: skip
            self._link_preceding(conn, bank_id, fresh)
            if stamp.version is not None:
                if restated:  # the cached index holds the old tags and times: rebuilt on the next search
                    with self._index_lock:
                        self._indexes.pop(bank_id, None)
                else:
                    updated = datetime.fromisoformat(stamp.value).timestamp()
                    self._advance_index(bank_id, stamp.version, added, removed, restamp=(repeated, updated))
        return out

    def _insert_memories(
        self, conn: sqlite3.Connection, bank_id: str, memories: Sequence[tuple[str, NewMemory]], stamp: str | None
    ) -> None:
        """Insert ``(id, memory)`` pairs stamped ``stamp``, in order: each fact's preceding text is read from the
        facts stored before it (those inserted just before included)."""
        rows = []
        for mid, m in memories:
            row = COLUMNS.memory_params(mid, bank_id, m, stamp, vector_blob(m.embedding))
            moment = COLUMNS.time(m.moment)
            rows.append((*row, m.context, m.fact_type, bank_id, m.context, bank_id, m.context, moment))
        conn.executemany(Q["insert_memory"], rows)

    def _link_preceding(self, conn: sqlite3.Connection, bank_id: str, ids: Sequence[str]) -> None:
        """Set the lexical index's preceding text (:data:`mindbank.store.lexical.PRECEDING_WEIGHT`) of the memories
        ``ids`` and of the memories said at the next moment after each (a memory retained between two stored ones
        becomes its successor's preceding text). The full-text triggers re-index the rows it changes."""
        for start in range(0, len(ids), MAX_IDS // 2):
            part = list(ids[start : start + MAX_IDS // 2])
            conn.execute(Q["link_preceding"].format(marks=marks(len(part))), (bank_id, *part, bank_id, *part))

    def memory_vectors(self, bank_id: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored embeddings of the given memories (unknown ids are left out)."""
        index = self._index(bank_id)
        found = {i: index.vector(i) for i in ids}
        return {i: v for i, v in found.items() if v is not None}

    def consolidated_neighbours(
        self, bank_id: str, probes: Sequence[tuple[npt.NDArray[np.float32], MemoryFilter]], k: int
    ) -> list[list[tuple[str, float]]]:
        """Per probe ``(vector, filter)``: the ``k`` facts (world and experience) that consolidation has already
        seen and that pass the filter's tag rules, nearest first, as ``(id, cosine)``. Exact: the in-process
        index with the pending facts masked out (read through ``idx_memory_units_pending``)."""
        if not probes or k <= 0:
            return [[] for _ in probes]
        index = self._index(bank_id)
        with self._read() as conn:
            pending = [r[0] for r in conn.execute(Q["pending_fact_ids"], (bank_id,))]
        seen = index.alive.copy()
        for memory_id in pending:
            position = index.position(memory_id)
            if position is not None:
                seen[position] = False
        masks: dict[MemoryFilter, npt.NDArray[np.bool_]] = {}
        out: list[list[tuple[str, float]]] = []
        for vector, flt in probes:
            mask = masks.get(flt)
            if mask is None:
                mask = masks[flt] = seen & index.mask(
                    fact_types=("world", "experience"), tags=flt.tags, tags_match=flt.tags_match,
                    updated_before=None, updated_after=None, tag_groups=flt.groups,
                )  # fmt: skip
            out.append(index.search(np.asarray(vector, np.float32), k, mask))
        return out

    def nearest_in(
        self, bank_id: str, probes: Sequence[tuple[npt.NDArray[np.float32], MemoryFilter]], k: int
    ) -> list[list[tuple[str, float]]]:
        """Per probe ``(vector, filter)``: the ``k`` memories passing the filter, nearest first, as ``(id,
        cosine)`` — :meth:`vector_search` for many probes (the in-process index; consolidation's nearby
        observations)."""
        return [self.vector_search(bank_id, vector, k, flt) for vector, flt in probes]

    def write_consolidation(
        self,
        bank_id: str,
        *,
        creates: Sequence[NewMemory],
        updates: Sequence[tuple[str, tuple[str, ...], int]],
        consolidated_ids: Sequence[str],
        rewrites: Sequence[tuple[str, str, npt.NDArray[np.float32]]] = (),
        deletes: Sequence[str] = (),
        successors: Sequence[tuple[str, int]] = (),
    ) -> list[str]:
        """Apply one consolidation round atomically: new observations, observation updates ``(id, source ids,
        proof count)``, observation rewrites ``(id, text, embedding)``, observation deletes, and ``consolidated_at``
        on the source facts. Observation writes are memory writes (stamped); marking sources is bookkeeping and
        stamps nothing. Each observation updated or rewritten keeps its earlier state as a history row; a new
        observation succeeding a deleted one ``(deleted id, index in creates)`` carries its history on. Returns the
        new observation ids."""
        with self._tx() as conn:
            stamp, version = (None, None)
            if creates or updates or rewrites or deletes:
                stamp, version = self._stamp_memory_write(conn, bank_id)
            ids = [str(uuid.uuid4()) for _ in creates]
            self._snapshot_observations(conn, bank_id, stamp, changed_observations(ids, updates, rewrites, deletes))
            self._insert_memories(conn, bank_id, list(zip(ids, creates, strict=True)), stamp)
            self._carry_observation_history(conn, bank_id, stamp, [(old, ids[i]) for old, i in successors])
            for memory_id, sources, proof in observation_mentions(ids, creates, updates):
                listed = COLUMNS.text_list(sources)
                params = (listed, proof, stamp, proof, bank_id, listed, bank_id, memory_id)
                conn.execute(Q["update_observation"], params)
            rewritten: list[IndexRow] = []
            for memory_id, text, vector in rewrites:
                row = conn.execute(
                    Q["rewrite_observation"], (text, vector_blob(vector), stamp, bank_id, memory_id)
                ).fetchone()
                if row is not None:
                    updated_at = datetime.fromisoformat(stamp).timestamp() if stamp else 0.0
                    rewritten.append(
                        IndexRow(memory_id, np.asarray(vector, np.float32), "observation", tuple(json.loads(row[0])),
                                 updated_at)
                    )  # fmt: skip
            for memory_id in deletes:
                conn.execute(Q["delete_observations"], (bank_id, memory_id))
            now = to_iso(utcnow())
            for start in range(0, len(consolidated_ids), MAX_IDS):
                part = list(consolidated_ids[start : start + MAX_IDS])
                conn.execute(Q["mark_consolidated"].format(marks=marks(len(part))), (now, bank_id, *part))
            if version is not None and stamp is not None:
                updated = datetime.fromisoformat(stamp).timestamp()
                rows = index_rows(list(zip(ids, creates, strict=True)), stamp) + rewritten
                with self._index_lock:
                    cached = self._indexes.get(bank_id)
                    if cached is not None and cached[0] == version - 1:
                        index = (
                            cached[1].without(list(deletes)).with_rows(rows).restamped([u[0] for u in updates], updated)
                        )
                        self._cache_index(bank_id, version, index)
                    else:
                        self._indexes.pop(bank_id, None)
        return ids

    def update_memory(
        self,
        bank_id: str,
        memory_id: str,
        *,
        text: str | None = None,
        embedding: npt.NDArray[np.float32] | None = None,
        context: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: dict[str, str] | None = None,
        model: tuple[str, int] | None = None,
    ) -> bool:
        """Edit a memory (None = keep a field); an edit is a memory write and sends the fact back to
        consolidation. False when the memory does not exist. ``model``: the embedding model ``(name, dimension)``
        of a new ``embedding``, checked against the bank's in the transaction (:mod:`mindbank.store.write_model`)."""
        with self._tx() as conn:
            row = conn.execute(Q["memory_index_fields"], (bank_id, memory_id)).fetchone()
            if row is None:
                return False
            self._check_write_model(conn, bank_id, model)
            stamp, version = self._stamp_memory_write(conn, bank_id)
            self._record_fact_event(conn, bank_id, memory_id, "fact_edited", stamp)
            new_tags = json.loads(row["tags"]) if tags is None else sorted(set(tags))
            vector = np.frombuffer(row["embedding"], dtype="<f4") if embedding is None else np.asarray(embedding)
            conn.execute(
                Q["update_memory"],
                (
                    text,
                    vector_blob(vector),
                    context,
                    COLUMNS.tags(new_tags),
                    None if metadata is None else COLUMNS.json(metadata),
                    stamp,
                    text is not None or tags is not None,  # no longer the text retained, or not under its tags
                    bank_id,
                    memory_id,
                ),
            )
            updated = datetime.fromisoformat(stamp).timestamp()
            row_index = IndexRow(memory_id, vector.astype(np.float32), row["fact_type"], tuple(new_tags), updated)
            self._advance_index(bank_id, version, [row_index], [])
        return True
