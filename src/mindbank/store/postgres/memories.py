"""Memory writes of the PostgreSQL store: retained documents, consolidation rounds, edits and deletes.

Every memory write takes the bank lock first and stamps under it (``_lock_bank``, ``_stamp_memory_write``). The stored
vectors consolidation reads live here too (unconsolidated facts and observations: :mod:`mindbank.store.shared`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg.types.json import Jsonb

from mindbank.domain.records import NewMemory
from mindbank.store.base import DocumentWrite, MemoryFilter
from mindbank.store.observations import ObservationQueries, changed_observations
from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.migrate import nearest_sql
from mindbank.store.postgres.planner_stats import analyze_if_never
from mindbank.store.postgres.queries import Q, tag_list
from mindbank.store.postgres.rows import COLUMNS, as_vector
from mindbank.store.retention import LazyStamp, RetentionQueries
from mindbank.store.shared import observation_mentions
from mindbank.store.write_model import WriteModelCheck


class MemoriesMixin(PostgresBase, RetentionQueries, WriteModelCheck, ObservationQueries):
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
        All rows share one stamp taken under the bank lock, and a write that changes nothing takes none.
        """
        out: list[list[str]] = []
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)
            self._lock_bank(conn, bank_id)
            self._check_write_model(conn, bank_id, model)
            stamp = LazyStamp(lambda: self._stamp_memory_write(conn, bank_id))
            known = self._known_repeats(conn, bank_id, documents)
            fresh: list[str] = []  # new memories: their preceding text (and their successors') is set at the end
            with conn.cursor() as cur:
                for doc in documents:
                    if doc.restate:
                        out.append(self._restate(conn, bank_id, doc, stamp)[0])
                    else:
                        out.append(self._write_document(cur, bank_id, doc, stamp, known, fresh))
                if fresh:
                    # the lexical index's preceding text of the new memories and of the memories said at the next
                    # moment after each (a memory retained between two stored ones becomes its successor's)
                    cur.execute(Q["link_preceding"], (bank_id, fresh, bank_id, fresh))
        if fresh and not self._statistics_checked:  # a new database's first rows give the planner its statistics
            with self._read() as conn:
                analyze_if_never(conn)
            self._statistics_checked = True
        return out

    def _write_document(
        self,
        cur: psycopg.Cursor[Any],
        bank_id: str,
        doc: DocumentWrite,
        stamp: LazyStamp,
        known: dict[str, str],
        fresh: list[str],
    ) -> list[str]:
        """Write one document; appends the ids of the memories it inserts to ``fresh``."""
        plan = self._plan_repeats(doc.memories, known, lambda: str(uuid.uuid4()))
        fresh.extend(mid for mid, _ in plan.fresh)
        if doc.continuation or (doc.item.document_id is None and doc.whole and plan.repeats and not plan.fresh):
            # a later part of a document written earlier, or a document whose facts all repeat stored ones (nothing
            # of it is new: no document row, no chunks, no event)
            if plan.fresh or plan.repeats:
                self._insert_memories(cur, bank_id, plan.fresh, stamp())
                self._record_repeats(cur, bank_id, plan.repeats, stamp())
            return plan.ids
        item = doc.item
        at = stamp()
        existing = cur.execute(Q["get_document"], (bank_id, doc.document_id)).fetchone()
        text = item.content
        created = at
        chunk_base = 0
        replaced = 0
        appended = existing is not None and item.update_mode == "append"
        if appended and existing is not None:
            text = existing["original_text"] + "\n\n" + item.content
            created = existing["created_at"]
            row = cur.execute(Q["count_document_chunks"], (bank_id, doc.document_id)).fetchone()
            chunk_base = int(row["count"]) if row else 0
        elif existing is not None:
            replaced = int(cur.execute(Q["delete_document_memories"], (bank_id, doc.document_id)).rowcount)
            cur.execute(Q["delete_document_chunks"], (bank_id, doc.document_id))
        cur.execute(Q["upsert_document"], COLUMNS.document_params(bank_id, doc.document_id, item, text, created, at))
        if doc.chunks:
            cur.executemany(
                Q["insert_chunk"],
                [(c.id, bank_id, doc.document_id, chunk_base + c.index, c.text) for c in doc.chunks],
            )
        self._insert_memories(cur, bank_id, plan.fresh, at)
        self._record_repeats(cur, bank_id, plan.repeats, at)
        kind = doc.event or ("append" if appended else "retain")
        self._record_document_event(cur, bank_id, doc.document_id, kind, at, added=len(plan.fresh), removed=replaced,
                                    operation_id=doc.operation_id)  # fmt: skip
        return plan.ids

    def _insert_memories(
        self, cur: psycopg.Cursor[Any], bank_id: str, memories: Sequence[tuple[str, NewMemory]], stamp: datetime
    ) -> None:
        """Insert ``(id, memory)`` pairs stamped ``stamp`` (the caller holds the bank lock), in order: each fact's
        preceding text is read from the facts stored before it (those inserted just before included)."""
        rows = []
        for mid, m in memories:
            row = COLUMNS.memory_params(mid, bank_id, m, stamp, self._vector(m.embedding))
            moment = m.moment
            rows.append((*row, m.context, m.fact_type, bank_id, m.context, bank_id, m.context, moment))
        if rows:
            cur.executemany(Q["insert_memory"], rows)

    def memory_vectors(self, bank_id: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored embeddings of the given memories as float32 vectors (unknown ids are left out)."""
        if not ids:
            return {}
        with self._read() as conn:
            rows = conn.execute(Q["memory_vectors"], (bank_id, list(ids))).fetchall()
        return {r["id"]: as_vector(r["embedding"]) for r in rows}

    def consolidated_neighbours(
        self, bank_id: str, probes: Sequence[tuple[npt.NDArray[np.float32], MemoryFilter]], k: int
    ) -> list[list[tuple[str, float]]]:
        """Per probe ``(vector, filter)``: the ``k`` facts (world and experience) that consolidation has already
        seen and that pass the filter's tag rules, nearest first, as ``(id, cosine)``, through the HNSW index (an
        iterative scan keeps walking until ``k`` rows pass the filter; approximate, as recall's vector arm)."""
        tag_rules = [
            (v, MemoryFilter(tags=f.tags, tags_match=f.tags_match, tag_groups=f.tag_groups)) for v, f in probes
        ]
        return self._nearest(bank_id, Q["consolidated_neighbours"], tag_rules, k)

    def nearest_in(
        self, bank_id: str, probes: Sequence[tuple[npt.NDArray[np.float32], MemoryFilter]], k: int
    ) -> list[list[tuple[str, float]]]:
        """Per probe ``(vector, filter)``: the ``k`` memories passing the filter, nearest first, as ``(id,
        cosine)`` — :meth:`vector_search` for many probes in one transaction (consolidation's nearby
        observations)."""
        return self._nearest(bank_id, Q["vector_search"], probes, k)

    def _nearest(
        self, bank_id: str, statement: str, probes: Sequence[tuple[npt.NDArray[np.float32], MemoryFilter]], k: int
    ) -> list[list[tuple[str, float]]]:
        """One HNSW statement (its SQL, ``{where}`` unfilled) per probe in one transaction, each re-sorted by its
        exact score."""
        if not probes or k <= 0:
            return [[] for _ in probes]
        out: list[list[tuple[str, float]]] = []
        with self._tx() as conn:
            knobs = Q["set_ef_search_iterative"] if self._iterative_scan else Q["set_ef_search"]
            conn.execute(knobs, (str(max(40, 2 * k)),))
            for vector, flt in probes:
                where, params = self._filter_sql(flt, "m")
                vec = self._vector(vector)
                rows = conn.execute(
                    nearest_sql(statement, where, len(vector)), (vec, bank_id, *params, vec, k)
                ).fetchall()
                out.append(sorted(((r["id"], 1.0 - float(r["distance"])) for r in rows), key=lambda h: -h[1]))
        return out

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
        proof count)``, observation rewrites ``(id, text, embedding)``, observation deletes, and
        ``consolidated_at`` on the source facts. Observation writes are memory writes (stamped under the bank lock);
        marking sources is bookkeeping and stamps nothing. Each observation updated or rewritten keeps its earlier
        state as a history row; a new observation succeeding a deleted one ``(deleted id, index in creates)``
        carries its history on. Returns the new observation ids."""
        with self._tx() as conn, conn.cursor() as cur:
            ids: list[str] = []
            if creates or updates or rewrites or deletes:
                self._lock_bank(cur.connection, bank_id)
                stamp, _ = self._stamp_memory_write(cur.connection, bank_id)
                ids = [str(uuid.uuid4()) for _ in creates]
                self._snapshot_observations(cur, bank_id, stamp, changed_observations(ids, updates, rewrites, deletes))
                self._insert_memories(cur, bank_id, list(zip(ids, creates, strict=True)), stamp)
                self._carry_observation_history(cur, bank_id, stamp, [(old, ids[i]) for old, i in successors])
                grown = observation_mentions(ids, creates, updates)
                if grown:
                    cur.executemany(
                        Q["update_observation"],
                        [(list(s), proof, stamp, proof, bank_id, list(s), bank_id, mid) for mid, s, proof in grown],
                    )
                if rewrites:
                    cur.executemany(
                        Q["rewrite_observation"],
                        [(text, self._vector(vector), stamp, bank_id, mid) for mid, text, vector in rewrites],
                    )
                if deletes:
                    cur.execute(Q["delete_observations"], (bank_id, list(deletes)))
            if consolidated_ids:
                cur.execute(Q["mark_consolidated"], (bank_id, list(consolidated_ids)))
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
            if conn.execute(Q["lock_bank"], (bank_id,)).fetchone() is None:
                return False
            if not conn.execute(Q["get_memories"], (bank_id, [memory_id])).fetchall():
                return False
            self._check_write_model(conn, bank_id, model)
            stamp, _ = self._stamp_memory_write(conn, bank_id)
            self._record_fact_event(conn, bank_id, memory_id, "fact_edited", stamp)
            conn.execute(
                Q["update_memory"],
                (
                    text,
                    None if embedding is None else self._vector(embedding),
                    context,
                    None if tags is None else tag_list(tags),
                    None if metadata is None else Jsonb(metadata),
                    stamp,
                    text is not None or tags is not None,  # no longer the text retained, or not under its tags
                    bank_id,
                    memory_id,
                ),
            )
        return True
