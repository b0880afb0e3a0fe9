"""Memory writes of the SQLite store: retained documents, consolidation rounds, edits and deletes.

Every memory write is stamped under the writer lock (``_stamp_memory_write``) and applied to the cached vector index
of this process in the same transaction. The reads consolidation needs (unconsolidated facts, observations, stored
vectors) live here too.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from collections.abc import Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import MemoryUnit, NewMemory
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.store.base import DocumentWrite
from mindbank.store.sqlite.connection import SQLiteBase
from mindbank.store.sqlite.rows import index_rows, memory_row
from mindbank.store.sqlite.sql import MEMORY_COLUMNS, tags_json, to_json
from mindbank.store.sqlite.vector_index import IndexRow


class MemoriesMixin(SQLiteBase):
    """Writes to ``documents``, ``chunks`` and ``memory_units``, and the consolidation reads."""

    def write_documents(self, bank_id: str, documents: Sequence[DocumentWrite]) -> list[list[str]]:
        """Write retained documents atomically (bank auto-created); returns the new memory ids per document.

        ``update_mode == "replace"`` deletes the document's previous chunks and memories first; ``append`` keeps
        them and adds the new content after the stored text.
        """
        out: list[list[str]] = []
        added: list[IndexRow] = []
        removed: list[str] = []
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)
            stamp, version = self._stamp_memory_write(conn, bank_id)
            updated = datetime.fromisoformat(stamp).timestamp()
            for doc in documents:
                item = doc.item
                existing = conn.execute(
                    "SELECT original_text, created_at FROM documents WHERE bank_id = ? AND id = ?",
                    (bank_id, doc.document_id),
                ).fetchone()
                text = item.content
                created = stamp
                chunk_base = 0
                if existing is not None and item.update_mode == "append":
                    text = existing["original_text"] + "\n\n" + item.content
                    created = existing["created_at"]
                    chunk_base = conn.execute(
                        "SELECT COUNT(*) FROM chunks WHERE bank_id = ? AND document_id = ?", (bank_id, doc.document_id)
                    ).fetchone()[0]
                elif existing is not None:
                    removed.extend(
                        r[0]
                        for r in conn.execute(
                            "SELECT id FROM memory_units WHERE bank_id = ? AND document_id = ?",
                            (bank_id, doc.document_id),
                        )
                    )
                    conn.execute(
                        "DELETE FROM memory_units WHERE bank_id = ? AND document_id = ?", (bank_id, doc.document_id)
                    )
                    conn.execute("DELETE FROM chunks WHERE bank_id = ? AND document_id = ?", (bank_id, doc.document_id))
                conn.execute(
                    "INSERT INTO documents (bank_id, id, original_text, content_hash, tags, metadata, context, "
                    "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (bank_id, id) DO UPDATE SET original_text = excluded.original_text, "
                    "content_hash = excluded.content_hash, tags = excluded.tags, metadata = excluded.metadata, "
                    "context = excluded.context, updated_at = excluded.updated_at",
                    (
                        bank_id,
                        doc.document_id,
                        text,
                        hashlib.sha256(text.encode()).hexdigest(),
                        tags_json(item.tags),
                        to_json(item.metadata),
                        item.context,
                        created,
                        stamp,
                    ),
                )
                conn.executemany(
                    "INSERT INTO chunks (id, bank_id, document_id, chunk_index, text) VALUES (?, ?, ?, ?, ?)",
                    [(c.id, bank_id, doc.document_id, chunk_base + c.index, c.text) for c in doc.chunks],
                )
                ids = self._insert_memories(conn, bank_id, doc.memories, stamp)
                added.extend(index_rows(ids, doc.memories, updated))
                out.append(ids)
            self._advance_index(bank_id, version, added, removed)
        return out

    def _insert_memories(
        self, conn: sqlite3.Connection, bank_id: str, memories: Sequence[NewMemory], stamp: str
    ) -> list[str]:
        ids = [str(uuid.uuid4()) for _ in memories]
        conn.executemany(
            "INSERT INTO memory_units (id, bank_id, document_id, chunk_id, text, fact_type, tags, context, "
            "metadata, occurred_start, occurred_end, mentioned_at, embedding, source_memory_ids, proof_count, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    mid,
                    bank_id,
                    m.document_id,
                    m.chunk_id,
                    m.text,
                    m.fact_type,
                    tags_json(m.tags),
                    m.context,
                    to_json(m.metadata),
                    to_iso(m.occurred_start),
                    to_iso(m.occurred_end),
                    to_iso(m.mentioned_at),
                    np.asarray(m.embedding, dtype="<f4").tobytes(),
                    None if m.source_memory_ids is None else to_json(list(m.source_memory_ids)),
                    m.proof_count,
                    stamp,
                    stamp,
                )
                for mid, m in zip(ids, memories, strict=True)
            ],
        )
        return ids

    def unconsolidated_facts(self, bank_id: str, limit: int) -> list[MemoryUnit]:
        """Facts (world/experience) not yet consolidated, oldest first."""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memory_units WHERE bank_id = ? AND fact_type != 'observation' "
                "AND consolidated_at IS NULL ORDER BY seq LIMIT ?",
                (bank_id, limit),
            ).fetchall()
        return [memory_row(r) for r in rows]

    def list_observations(self, bank_id: str) -> list[MemoryUnit]:
        """Every observation of the bank, oldest first."""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memory_units WHERE bank_id = ? AND fact_type = 'observation' "
                "ORDER BY seq",
                (bank_id,),
            ).fetchall()
        return [memory_row(r) for r in rows]

    def memory_vectors(self, bank_id: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored embeddings of the given memories (unknown ids are left out)."""
        index = self._index(bank_id)
        found = {i: index.vector(i) for i in ids}
        return {i: v for i, v in found.items() if v is not None}

    def write_consolidation(
        self,
        bank_id: str,
        *,
        creates: Sequence[NewMemory],
        updates: Sequence[tuple[str, tuple[str, ...], int]],
        consolidated_ids: Sequence[str],
        rewrites: Sequence[tuple[str, str, npt.NDArray[np.float32]]] = (),
        deletes: Sequence[str] = (),
    ) -> list[str]:
        """Apply one consolidation round atomically: new observations, observation updates ``(id, source ids,
        proof count)``, observation rewrites ``(id, text, embedding)``, observation deletes, and ``consolidated_at``
        on the source facts. Observation writes are memory writes (stamped); marking sources is bookkeeping and
        stamps nothing. Returns the new observation ids."""
        with self._tx() as conn:
            stamp, version = (None, None)
            if creates or updates or rewrites or deletes:
                stamp, version = self._stamp_memory_write(conn, bank_id)
            ids = self._insert_memories(conn, bank_id, creates, stamp) if creates else []
            for memory_id, sources, proof in updates:
                conn.execute(
                    "UPDATE memory_units SET source_memory_ids = ?, proof_count = ?, updated_at = ? "
                    "WHERE bank_id = ? AND id = ?",
                    (to_json(list(sources)), proof, stamp, bank_id, memory_id),
                )
            rewritten: list[IndexRow] = []
            for memory_id, text, vector in rewrites:
                row = conn.execute(
                    "UPDATE memory_units SET text = ?, embedding = ?, updated_at = ? WHERE bank_id = ? AND id = ? "
                    "AND fact_type = 'observation' RETURNING tags",
                    (text, np.asarray(vector, dtype="<f4").tobytes(), stamp, bank_id, memory_id),
                ).fetchone()
                if row is not None:
                    updated_at = datetime.fromisoformat(stamp).timestamp() if stamp else 0.0
                    rewritten.append(
                        IndexRow(memory_id, np.asarray(vector, np.float32), "observation", tuple(json.loads(row[0])),
                                 updated_at)
                    )  # fmt: skip
            for memory_id in deletes:
                conn.execute(
                    "DELETE FROM memory_units WHERE bank_id = ? AND id = ? AND fact_type = 'observation'",
                    (bank_id, memory_id),
                )
            now = to_iso(utcnow())
            for start in range(0, len(consolidated_ids), 500):
                part = list(consolidated_ids[start : start + 500])
                conn.execute(
                    "UPDATE memory_units SET consolidated_at = ? WHERE bank_id = ? "
                    f"AND id IN ({','.join('?' * len(part))})",
                    (now, bank_id, *part),
                )
            if version is not None and stamp is not None:
                updated = datetime.fromisoformat(stamp).timestamp()
                rows = index_rows(ids, creates, updated) + rewritten
                with self._index_lock:
                    cached = self._indexes.get(bank_id)
                    if cached is not None and cached[0] == version - 1:
                        index = (
                            cached[1].without(list(deletes)).with_rows(rows).restamped([u[0] for u in updates], updated)
                        )
                        self._indexes[bank_id] = (version, index)
                    else:
                        self._indexes.pop(bank_id, None)
        return ids

    def delete_memory(self, bank_id: str, memory_id: str) -> bool:
        """Delete one memory from every index; a deletion is a memory write (it advances the bank's stamp)."""
        with self._tx() as conn:
            cur = conn.execute("DELETE FROM memory_units WHERE bank_id = ? AND id = ?", (bank_id, memory_id))
            if cur.rowcount == 0:
                return False
            _, version = self._stamp_memory_write(conn, bank_id)
            self._advance_index(bank_id, version, [], [memory_id])
        return True

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
    ) -> bool:
        """Edit a memory (None = keep a field); an edit is a memory write and sends the fact back to
        consolidation. False when the memory does not exist."""
        with self._tx() as conn:
            row = conn.execute(
                "SELECT fact_type, tags, embedding FROM memory_units WHERE bank_id = ? AND id = ?", (bank_id, memory_id)
            ).fetchone()
            if row is None:
                return False
            stamp, version = self._stamp_memory_write(conn, bank_id)
            new_tags = json.loads(row["tags"]) if tags is None else sorted(set(tags))
            vector = np.frombuffer(row["embedding"], dtype="<f4") if embedding is None else np.asarray(embedding)
            conn.execute(
                "UPDATE memory_units SET text = COALESCE(?, text), embedding = ?, context = COALESCE(?, context), "
                "tags = ?, metadata = COALESCE(?, metadata), consolidated_at = NULL, updated_at = ? "
                "WHERE bank_id = ? AND id = ?",
                (
                    text,
                    vector.astype("<f4").tobytes(),
                    context,
                    tags_json(new_tags),
                    None if metadata is None else to_json(metadata),
                    stamp,
                    bank_id,
                    memory_id,
                ),
            )
            updated = datetime.fromisoformat(stamp).timestamp()
            row_index = IndexRow(memory_id, vector.astype(np.float32), row["fact_type"], tuple(new_tags), updated)
            self._advance_index(bank_id, version, [row_index], [])
        return True
