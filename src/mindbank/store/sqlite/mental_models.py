"""Mental-model queries of the SQLite store: models, their history and citations, trigger lookups, and the
staleness reads (``staleness_reads``) the staleness rule decides from."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mindbank.domain.records import HistoryEntry, MentalModel
from mindbank.domain.tags import TagsMatch
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.store.base import (
    AlreadyExists,
    MemoryFilter,
    StalenessProbe,
    StalenessReads,
    cited_ids,
    mental_model_columns,
)
from mindbank.store.sqlite.rows import model_params, model_row
from mindbank.store.sqlite.search import SearchMixin
from mindbank.store.sqlite.sql import MAX_COMPOUND, filter_sql, tags_json, to_json, ts


class MentalModelsMixin(SearchMixin):
    """The ``mental_models``, ``mental_model_history`` and ``mental_model_citations`` tables. Built on
    :class:`SearchMixin` because staleness reads cited memories back (``get_memories``)."""

    def insert_mental_model(self, model: MentalModel) -> None:
        """Insert a new model (bank auto-created). Raises :class:`AlreadyExists` if the id is taken."""
        with self._tx() as conn:
            self._ensure_bank(conn, model.bank_id)
            try:
                conn.execute(
                    "INSERT INTO mental_models (bank_id, id, name, source_query, content, structured_document, "
                    "reflect_response, tags, max_tokens, trigger, last_refreshed_at, last_memory_seen_at, "
                    "last_refreshed_source_query, last_refresh_failed_at, last_full_refreshed_at, created_at, "
                    "cleared_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    model_params(model),
                )
            except sqlite3.IntegrityError as exc:
                raise AlreadyExists(f"mental model {model.id!r} already exists") from exc

    def get_mental_model(self, bank_id: str, model_id: str) -> MentalModel | None:
        """One model, or None."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT * FROM mental_models WHERE bank_id = ? AND id = ?", (bank_id, model_id)
            ).fetchone()
        return None if row is None else model_row(row)

    def list_mental_models(
        self,
        bank_id: str,
        *,
        tags: Sequence[str],
        tags_match: TagsMatch,
        limit: int,
        offset: int,
        detail: str = "full",
    ) -> tuple[list[MentalModel], int]:
        """A page of models ordered ``last_refreshed_at DESC, id DESC`` and the total matching; below ``full``
        detail the heavy columns are not read (``mental_model_columns``).

        Tag filter on models: ``any`` = overlaps, ``all`` = superset, ``exact`` = equal (empty tags: no filter).
        """
        where, params = "", []
        want = sorted(set(tags))
        if want:
            marks = ",".join("?" * len(want))
            if tags_match == "exact":
                where, params = " AND tags = ?", [tags_json(want)]
            elif tags_match == "all":
                where = f" AND (SELECT COUNT(*) FROM json_each(tags) WHERE value IN ({marks})) = {len(want)}"
                params = want
            else:
                where, params = f" AND EXISTS (SELECT 1 FROM json_each(tags) WHERE value IN ({marks}))", want
        with self._read() as conn:
            total = conn.execute(
                f"SELECT COUNT(*) FROM mental_models WHERE bank_id = ?{where}", (bank_id, *params)
            ).fetchone()[0]
            rows = conn.execute(
                f"SELECT {mental_model_columns(detail)} FROM mental_models WHERE bank_id = ?{where} "
                "ORDER BY last_refreshed_at DESC, id DESC LIMIT ? OFFSET ?",
                (bank_id, *params, limit, offset),
            ).fetchall()
        return [model_row(r) for r in rows], int(total)

    def save_refresh(self, model: MentalModel, *, history: dict[str, Any] | None, history_cap: int) -> None:
        """Persist a model's refresh state and (optionally) one history row in one transaction.

        ``history_cap`` > 0 keeps only that many rows of the same kind per model (oldest trimmed).
        Raises ``LookupError`` if the model was deleted meanwhile.
        """
        with self._tx() as conn:
            cur = conn.execute(
                "UPDATE mental_models SET name = ?, source_query = ?, content = ?, structured_document = ?, "
                "reflect_response = ?, tags = ?, max_tokens = ?, trigger = ?, last_refreshed_at = ?, "
                "last_memory_seen_at = ?, last_refreshed_source_query = ?, last_refresh_failed_at = ?, "
                "last_full_refreshed_at = ?, cleared_at = ? WHERE bank_id = ? AND id = ?",
                (*model_params(model)[2:15], to_iso(model.cleared_at), model.bank_id, model.id),
            )
            if cur.rowcount == 0:
                raise LookupError(f"mental model {model.id!r} no longer exists")
            conn.execute(
                "DELETE FROM mental_model_citations WHERE bank_id = ? AND mental_model_id = ?",
                (model.bank_id, model.id),
            )
            conn.executemany(
                "INSERT OR IGNORE INTO mental_model_citations (bank_id, mental_model_id, memory_id) VALUES (?, ?, ?)",
                [(model.bank_id, model.id, mid) for mid in cited_ids(model.structured_document)],
            )
            if history is not None:
                conn.execute(
                    "INSERT INTO mental_model_history (bank_id, mental_model_id, content, changed_at) "
                    "VALUES (?, ?, ?, ?)",
                    (model.bank_id, model.id, to_json(history), to_iso(utcnow())),
                )
                if history_cap > 0:
                    failure = history.get("kind") == "refresh_failed"
                    kind_clause = (
                        "json_extract(content, '$.kind') = 'refresh_failed'"
                        if failure
                        else "json_extract(content, '$.kind') IS NULL"
                    )
                    conn.execute(
                        f"DELETE FROM mental_model_history WHERE bank_id = ? AND mental_model_id = ? AND {kind_clause} "
                        f"AND id NOT IN (SELECT id FROM mental_model_history WHERE bank_id = ? AND "
                        f"mental_model_id = ? AND {kind_clause} ORDER BY changed_at DESC, id DESC LIMIT ?)",
                        (model.bank_id, model.id, model.bank_id, model.id, history_cap),
                    )

    def delete_mental_model(self, bank_id: str, model_id: str) -> bool:
        """Delete a model with its history and citations; False if it did not exist."""
        with self._tx() as conn:
            cur = conn.execute("DELETE FROM mental_models WHERE bank_id = ? AND id = ?", (bank_id, model_id))
            return cur.rowcount > 0

    def list_history(self, bank_id: str, model_id: str) -> list[HistoryEntry]:
        """History rows of a model, most recent first."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT id, mental_model_id, content, changed_at FROM mental_model_history "
                "WHERE bank_id = ? AND mental_model_id = ? ORDER BY changed_at DESC, id DESC",
                (bank_id, model_id),
            ).fetchall()
        return [HistoryEntry(r[0], r[1], json.loads(r[2]), datetime.fromisoformat(r[3])) for r in rows]

    def list_models_with_trigger(self, key: str, *, bank_id: str | None = None) -> list[MentalModel]:
        """Every mental model (of ``bank_id``, or of all banks) whose trigger has a truthy ``key``."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT * FROM mental_models WHERE json_extract(trigger, '$.' || ?) IS NOT NULL "
                "AND json_extract(trigger, '$.' || ?) NOT IN (0, '') AND (? IS NULL OR bank_id = ?)",
                (key, key, bank_id, bank_id),
            ).fetchall()
        return [model_row(r) for r in rows]

    def staleness_reads(self, bank_id: str, probes: Sequence[StalenessProbe]) -> StalenessReads:
        """Read what the staleness rule needs for a page of probes in ONE statement, whatever the page size.

        Probes sharing a scope share one lookup, bounded below by the group's oldest ``since`` so the index range
        scanned is the writes since the watermark, not the bank (cost flat in bank size).
        """
        if not probes:
            return StalenessReads(None, {}, set(), [])
        groups: dict[MemoryFilter, list[StalenessProbe]] = {}
        for p in probes:
            if p.since is not None:
                groups.setdefault(p.scope, []).append(p)
        scopes = list(groups)
        parts: list[str] = ["SELECT 'bank', NULL, last_memory_write_at, NULL FROM banks WHERE bank_id = ?"]
        params: list[Any] = [bank_id]
        chunks: list[str] = []
        for start in range(0, len(scopes), MAX_COMPOUND):
            selects = []
            for i in range(start, min(start + MAX_COMPOUND, len(scopes))):
                scope = scopes[i]
                oldest = min(p.since for p in groups[scope] if p.since is not None)
                where, p = filter_sql(scope)
                selects.append(
                    f"SELECT 'scope', {i}, (SELECT MAX(m.updated_at) FROM memory_units m WHERE m.bank_id = ? "
                    f"AND m.updated_at > ? AND {where}), NULL"
                )
                params.extend([bank_id, to_iso(oldest), *p])
            chunks.append("SELECT * FROM (" + " UNION ALL ".join(selects) + ")")
        parts.extend(chunks)
        ids = [p.mental_model_id for p in probes]
        watermarks = [p.since for p in probes if p.since is not None]
        # every citation of the page whose memory is gone ('cite') or was written since the oldest watermark
        # ('written': it may have left the model's scope, judged by the engine's staleness rule)
        parts.append(
            "SELECT CASE WHEN m.id IS NULL THEN 'cite' ELSE 'written' END, c.mental_model_id, m.updated_at, "
            "c.memory_id FROM mental_model_citations c LEFT JOIN memory_units m ON m.id = c.memory_id "
            f"WHERE c.bank_id = ? AND c.mental_model_id IN ({','.join('?' * len(ids))}) "
            "AND (m.id IS NULL OR m.updated_at > ?)"
        )
        params.extend([bank_id, *ids, to_iso(min(watermarks)) if watermarks else None])
        with self._read() as conn:
            rows = conn.execute(" UNION ALL ".join(parts), params).fetchall()
        bank_last = next((ts(r[2]) for r in rows if r[0] == "bank"), None)
        newest = {int(r[1]): ts(r[2]) for r in rows if r[0] == "scope"}
        gone = {r[1] for r in rows if r[0] == "cite"}
        written = [(r[1], r[3], ts(r[2])) for r in rows if r[0] == "written"]
        return StalenessReads(bank_last, {s: newest.get(i) for i, s in enumerate(scopes)}, gone, written)
