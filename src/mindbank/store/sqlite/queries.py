"""Every SQL statement of the SQLite store, by name, plus the compiler of :class:`MemoryFilter` predicates.

Statements use sqlite3's positional ``?`` placeholders. A statement that does the same job as one of the PostgreSQL
store's carries the same key as in :mod:`mindbank.store.postgres.queries` (``tests/unit/test_store_queries.py``
holds the two key sets together). A few carry slots that the store's query mixins fill with ``str.format`` before
execution: ``{where}`` (a compiled filter, itself parameterised), ``{marks}`` (the ``?,?,…`` of an ``IN`` list, where
PostgreSQL binds one array), ``{table}``, ``{columns}``, ``{kind}`` and ``{key}``; nothing user-supplied is ever
formatted into SQL text, only fixed fragments built here. Schema migrations keep their own SQL (``migrate.py`` and
``migrations/``), as in the PostgreSQL store.

Times are fixed-width ISO-8601 strings (``to_iso``) and sort as text; tags are a sorted JSON array (``tags_json``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mindbank.domain.scope import MemoryFilter
from mindbank.domain.timeutil import to_iso
from mindbank.store.sqlite.consolidation_queries import CONSOLIDATION_Q, MEMORY_COLUMNS
from mindbank.store.sqlite.resource_queries import RESOURCE_Q
from mindbank.store.sqlite.transfer_queries import TRANSFER_Q

MEMORY_COLUMNS_M = ", ".join("m." + c.strip() for c in MEMORY_COLUMNS.split(","))
# scope lookups per compound SELECT of staleness_reads: below SQLite's default SQLITE_MAX_COMPOUND_SELECT (500)
MAX_COMPOUND = 400
# ids per statement where a list is bound as ``IN (?,…)``: far below SQLite's bound-parameter limit
MAX_IDS = 500

# whether a mental model is a knowledge page (a page is a model placed in the knowledge-base tree), read with it
IS_PAGE = (
    "EXISTS (SELECT 1 FROM knowledge_nodes k WHERE k.bank_id = mental_models.bank_id "
    "AND k.mental_model_id = mental_models.id) AS is_knowledge_page"
)

Q: dict[str, str] = {
    # ---------------------------------------------------------------- connection and transactions
    "pragma_foreign_keys": "PRAGMA foreign_keys = ON",
    "pragma_busy_timeout": "PRAGMA busy_timeout = 30000",
    # file databases only: WAL lets the per-thread readers run beside the single writer
    "pragma_journal_wal": "PRAGMA journal_mode = WAL",
    "pragma_synchronous": "PRAGMA synchronous = NORMAL",
    # read connections (one per request thread, up to 40): a small private page cache each (the OS page cache,
    # outside the process, holds the file for all of them) instead of SQLite's default 2 MiB
    "pragma_reader_cache": "PRAGMA cache_size = -512",
    # IMMEDIATE takes the database write lock up front, so a transaction never fails to upgrade midway
    "begin": "BEGIN IMMEDIATE",
    "commit": "COMMIT",
    "rollback": "ROLLBACK",
    # ---------------------------------------------------------------- banks
    "ensure_bank": (
        "INSERT INTO banks (bank_id, name, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (bank_id) DO NOTHING"
    ),
    "bank_exists": "SELECT 1 FROM banks WHERE bank_id = ?",
    "get_bank": "SELECT * FROM banks WHERE bank_id = ?",
    "list_banks": (
        "SELECT b.*, (SELECT COUNT(*) FROM memory_units m WHERE m.bank_id = b.bank_id) AS n "
        "FROM banks b ORDER BY b.bank_id"
    ),
    "upsert_bank": (
        "UPDATE banks SET name = COALESCE(?, name), mission = COALESCE(?, mission), "
        "disposition = COALESCE(?, disposition), updated_at = ? WHERE bank_id = ?"
    ),
    # inside BEGIN IMMEDIATE the whole database is write-locked, so this plain read is the locked read PostgreSQL
    # spells FOR UPDATE (same for lock_bank_for_delete)
    "lock_bank_config": "SELECT config FROM banks WHERE bank_id = ?",
    "set_bank_config": "UPDATE banks SET config = ?, updated_at = ? WHERE bank_id = ?",
    "lock_bank_for_delete": "SELECT 1 FROM banks WHERE bank_id = ?",
    "count_bank_memories": "SELECT COUNT(*) FROM memory_units WHERE bank_id = ?",
    "delete_bank_operations": "DELETE FROM operations WHERE bank_id = ?",
    "delete_bank": "DELETE FROM banks WHERE bank_id = ?",
    "stats_by_type": "SELECT fact_type, COUNT(*) FROM memory_units WHERE bank_id = ? GROUP BY fact_type",
    "stats_by_status": "SELECT status, COUNT(*) FROM operations WHERE bank_id = ? GROUP BY status",
    "stats_documents": "SELECT COUNT(*) FROM documents WHERE bank_id = ?",
    "stats_pending_consolidation": (
        "SELECT COUNT(*) FROM memory_units WHERE bank_id = ? AND fact_type != 'observation' AND consolidated_at IS NULL"
    ),
    "stats_last_consolidated": "SELECT MAX(consolidated_at) FROM memory_units WHERE bank_id = ?",
    "bank_last_write": "SELECT last_memory_write_at FROM banks WHERE bank_id = ?",
    # the stamp is computed in Python between these two (one writer connection under the write lock, so nobody
    # stamps in between); PostgreSQL does both in its one stamp_bank statement
    "bank_stamp": "SELECT last_memory_write_at, memory_version FROM banks WHERE bank_id = ?",
    "stamp_bank": "UPDATE banks SET last_memory_write_at = ?, memory_version = ?, updated_at = ? WHERE bank_id = ?",
    # ---------------------------------------------------------------- the in-process vector index
    "bank_memory_version": "SELECT memory_version FROM banks WHERE bank_id = ?",
    "index_rows": "SELECT id, embedding, fact_type, tags, updated_at FROM memory_units WHERE bank_id = ? ORDER BY seq",
    # ---------------------------------------------------------------- documents and memories
    "get_document": "SELECT original_text, created_at FROM documents WHERE bank_id = ? AND id = ?",
    "count_document_chunks": "SELECT COUNT(*) FROM chunks WHERE bank_id = ? AND document_id = ?",
    # the ids a replaced document loses, to drop from the cached vector index
    "document_memory_ids": "SELECT id FROM memory_units WHERE bank_id = ? AND document_id = ?",
    "delete_document_memories": "DELETE FROM memory_units WHERE bank_id = ? AND document_id = ?",
    "delete_document_chunks": "DELETE FROM chunks WHERE bank_id = ? AND document_id = ?",
    "upsert_document": (
        "INSERT INTO documents (bank_id, id, original_text, content_hash, tags, metadata, context, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (bank_id, id) DO UPDATE SET original_text = excluded.original_text, "
        "content_hash = excluded.content_hash, tags = excluded.tags, metadata = excluded.metadata, "
        "context = excluded.context, updated_at = excluded.updated_at"
    ),
    "insert_chunk": "INSERT INTO chunks (id, bank_id, document_id, chunk_index, text) VALUES (?, ?, ?, ?, ?)",
    "insert_memory": (
        "INSERT INTO memory_units (id, bank_id, document_id, chunk_id, text, fact_type, tags, context, "
        "metadata, occurred_start, occurred_end, mentioned_at, embedding, source_memory_ids, proof_count, "
        "created_at, updated_at, repeat_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    # ---------------------------------------------------------------- repeats and restatements (store/retention.py)
    "document_hashes": "SELECT id, content_hash FROM documents WHERE bank_id = ? AND id IN ({marks})",
    # oldest first: the first fact with a key is the one its repeats land on
    "repeat_lookup": (
        "SELECT repeat_key, id FROM memory_units WHERE bank_id = ? AND repeat_key IN ({marks}) ORDER BY seq"
    ),
    # a repeat is a memory write (updated_at); the newest mention wins (times are fixed-width ISO text)
    "record_repeat": (
        "UPDATE memory_units SET mention_count = mention_count + ?, last_mentioned_at = "
        "MAX(COALESCE(last_mentioned_at, mentioned_at, ?), COALESCE(?, last_mentioned_at, mentioned_at)), "
        "updated_at = ? WHERE bank_id = ? AND id = ?"
    ),
    "document_state": "SELECT content_hash, tags, metadata, context FROM documents WHERE bank_id = ? AND id = ?",
    "document_fact_times": (
        "SELECT id, occurred_start FROM memory_units WHERE bank_id = ? AND document_id = ? "
        "AND fact_type != 'observation' ORDER BY seq"
    ),
    "restate_document": (
        "UPDATE documents SET tags = ?, metadata = ?, context = ?, updated_at = ? WHERE bank_id = ? AND id = ?"
    ),
    # in place, same ids; new tags send the facts back to consolidation (the CASE reads the old tags)
    "restate_document_memories": (
        "UPDATE memory_units SET tags = ?, metadata = ?, context = ?, occurred_start = COALESCE(?, occurred_start), "
        "occurred_end = COALESCE(?, occurred_end), mentioned_at = COALESCE(?, mentioned_at), "
        "consolidated_at = CASE WHEN tags = ? THEN consolidated_at END, updated_at = ? "
        "WHERE bank_id = ? AND document_id = ? AND fact_type != 'observation'"
    ),
    "delete_memory": "DELETE FROM memory_units WHERE bank_id = ? AND id = ?",
    # what update_memory keeps when a field is not given, and what the vector-index entry needs
    "memory_index_fields": "SELECT fact_type, tags, embedding FROM memory_units WHERE bank_id = ? AND id = ?",
    # an edit is a memory write; the fact goes back to consolidation; a new text or new tags end its repeats
    "update_memory": (
        "UPDATE memory_units SET text = COALESCE(?, text), embedding = ?, context = COALESCE(?, context), "
        "tags = ?, metadata = COALESCE(?, metadata), consolidated_at = NULL, updated_at = ?, "
        "repeat_key = CASE WHEN ? THEN NULL ELSE repeat_key END WHERE bank_id = ? AND id = ?"
    ),
    # ---------------------------------------------------------------- memory reads
    # unary +: look rows up by id, not by scanning the bank
    "get_memories": f"SELECT {MEMORY_COLUMNS} FROM memory_units WHERE id IN ({{marks}}) AND +bank_id = ?",
    "count_memories": "SELECT COUNT(*) FROM memory_units WHERE bank_id = ?",
    # keyword search ranks the FTS index on its own first (FTS5 answers ORDER BY rank LIMIT without touching the
    # memory table), then keeps the candidates in the bank and filter; keyword_search is the joined fallback
    "keyword_ranked": "SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank LIMIT ?",
    "keyword_candidates": (
        "SELECT m.seq, m.id FROM memory_units m WHERE m.seq IN ({marks}) AND m.bank_id = ? AND {where}"
    ),
    "keyword_search": (
        "SELECT m.id, bm25(memory_fts) AS score FROM memory_fts JOIN memory_units m ON m.seq = memory_fts.rowid "
        "WHERE memory_fts MATCH ? AND m.bank_id = ? AND {where} ORDER BY score LIMIT ?"
    ),
    # term pruning: the memory count (seq never goes back) and the document count of each candidate stem
    "max_memory_seq": "SELECT MAX(seq) FROM memory_units",
    "term_documents": "SELECT term, doc FROM memory_fts_vocab WHERE term IN ({marks})",
    "list_memories": (
        f"SELECT {MEMORY_COLUMNS_M}, COUNT(*) OVER () AS total FROM memory_units m WHERE m.bank_id = ? AND {{where}} "
        "ORDER BY m.updated_at DESC, m.seq DESC LIMIT ? OFFSET ?"
    ),
    "count_filtered": "SELECT COUNT(*) FROM memory_units m WHERE m.bank_id = ? AND {where}",
    "count_in_scope": (
        "SELECT m.fact_type, COUNT(*) FROM memory_units m WHERE m.bank_id = ? AND {where} GROUP BY m.fact_type"
    ),
    # {table} is one of two fixed names chosen in code
    "list_tags": (
        "SELECT j.value AS tag, COUNT(*) AS n, COUNT(*) OVER () AS total FROM {table} t, json_each(t.tags) j "
        "WHERE t.bank_id = ?{where} GROUP BY j.value ORDER BY n DESC, tag LIMIT ? OFFSET ?"
    ),
    "count_tags": "SELECT COUNT(DISTINCT j.value) FROM {table} t, json_each(t.tags) j WHERE t.bank_id = ?{where}",
    # recall's temporal arm: memories whose own dates fall inside a window, latest first
    "memories_in_window": (
        "SELECT m.id FROM memory_units m WHERE m.bank_id = ? AND {where} AND ("
        "(m.occurred_start >= ? AND m.occurred_start <= ?) OR (m.occurred_end >= ? AND m.occurred_end <= ?) "
        "OR (m.mentioned_at >= ? AND m.mentioned_at <= ?)) "
        "ORDER BY COALESCE(m.occurred_start, m.mentioned_at) DESC, m.id LIMIT ?"
    ),
    "scope_watermark": (
        "SELECT m.updated_at FROM memory_units m WHERE m.bank_id = ? AND {where} ORDER BY m.updated_at DESC LIMIT 1"
    ),
    # staleness_reads is assembled from these branches into ONE UNION ALL statement (stale_compound); {key} is the
    # scope's position in the page, an integer chosen in code
    "stale_bank": "SELECT 'bank', NULL, last_memory_write_at, NULL FROM banks WHERE bank_id = ?",
    "stale_scope": (
        "SELECT 'scope', {key}, (SELECT MAX(m.updated_at) FROM memory_units m WHERE m.bank_id = ? "
        "AND m.updated_at > ? AND {where}), NULL"
    ),
    "stale_citations": (
        "SELECT CASE WHEN m.id IS NULL THEN 'cite' ELSE 'written' END, c.mental_model_id, m.updated_at, "
        "c.memory_id FROM mental_model_citations c LEFT JOIN memory_units m ON m.id = c.memory_id "
        "WHERE c.bank_id = ? AND c.mental_model_id IN ({marks}) AND (m.id IS NULL OR m.updated_at > ?)"
    ),
    # ---------------------------------------------------------------- mental models
    "insert_mental_model": (
        "INSERT INTO mental_models (bank_id, id, name, source_query, content, structured_document, "
        "reflect_response, tags, max_tokens, trigger, last_refreshed_at, last_memory_seen_at, "
        "last_refreshed_source_query, last_refresh_failed_at, last_full_refreshed_at, created_at, "
        "cleared_at, refresh_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "get_mental_model": f"SELECT *, {IS_PAGE} FROM mental_models WHERE bank_id = ? AND id = ?",
    "count_mental_models": "SELECT COUNT(*) FROM mental_models WHERE bank_id = ?{where}",
    "list_mental_models": (
        f"SELECT {{columns}}, {IS_PAGE}, (SELECT COUNT(*) FROM mental_models WHERE bank_id = ?{{where}}) "
        f"AS total_rows FROM mental_models WHERE bank_id = ?{{where}} "
        "ORDER BY last_refreshed_at DESC, id DESC LIMIT ? OFFSET ?"
    ),
    "update_mental_model": (
        "UPDATE mental_models SET name = ?, source_query = ?, content = ?, structured_document = ?, "
        "reflect_response = ?, tags = ?, max_tokens = ?, trigger = ?, last_refreshed_at = ?, "
        "last_memory_seen_at = ?, last_refreshed_source_query = ?, last_refresh_failed_at = ?, "
        "last_full_refreshed_at = ?, cleared_at = ?, refresh_state = ? WHERE bank_id = ? AND id = ?"
    ),
    "delete_citations": "DELETE FROM mental_model_citations WHERE bank_id = ? AND mental_model_id = ?",
    "insert_citation": (
        "INSERT OR IGNORE INTO mental_model_citations (bank_id, mental_model_id, memory_id) VALUES (?, ?, ?)"
    ),
    "insert_history": (
        "INSERT INTO mental_model_history (bank_id, mental_model_id, content, changed_at) VALUES (?, ?, ?, ?)"
    ),
    # {kind} is one of the two fixed predicates of HISTORY_KIND
    "trim_history": (
        "DELETE FROM mental_model_history WHERE bank_id = ? AND mental_model_id = ? AND {kind} "
        "AND id NOT IN (SELECT id FROM mental_model_history WHERE bank_id = ? AND "
        "mental_model_id = ? AND {kind} ORDER BY changed_at DESC, id DESC LIMIT ?)"
    ),
    "delete_mental_model": "DELETE FROM mental_models WHERE bank_id = ? AND id = ?",
    "list_history": (
        "SELECT id, mental_model_id, content, changed_at FROM mental_model_history "
        "WHERE bank_id = ? AND mental_model_id = ? ORDER BY changed_at DESC, id DESC"
    ),
    # "truthy": present and not null, false, 0 or "" (json_extract yields 0 for false)
    "list_models_with_trigger": (
        "SELECT * FROM mental_models WHERE json_extract(trigger, '$.' || ?) IS NOT NULL "
        "AND json_extract(trigger, '$.' || ?) NOT IN (0, '') AND (? IS NULL OR bank_id = ?)"
    ),
    # ---------------------------------------------------------------- refresh spend and governance (issue 14)
    "add_refresh_spend": (
        "INSERT INTO refresh_spend (bank_id, mental_model_id, day, refreshes, llm_calls, input_tokens, output_tokens) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (bank_id, day, mental_model_id) DO UPDATE SET "
        "refreshes = refresh_spend.refreshes + excluded.refreshes, "
        "llm_calls = refresh_spend.llm_calls + excluded.llm_calls, "
        "input_tokens = refresh_spend.input_tokens + excluded.input_tokens, "
        "output_tokens = refresh_spend.output_tokens + excluded.output_tokens"
    ),
    # spend summed per model of a list, split into one UTC day (``today``: the first parameter) and the other days
    "refresh_spend_models": (
        "SELECT mental_model_id, day = ? AS today, SUM(refreshes) AS refreshes, SUM(llm_calls) AS llm_calls, "
        "SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, NULL AS bank_config "
        "FROM refresh_spend WHERE bank_id = ? AND mental_model_id IN ({marks}) GROUP BY 1, 2"
    ),
    # a last row carrying the bank's overrides, UNION ALL-ed after refresh_spend_models (refresh_status_reads)
    "bank_config_row": "SELECT NULL, NULL, NULL, NULL, NULL, NULL, config FROM banks WHERE bank_id = ?",
    # the same for the whole bank (a deleted model's spend still counts)
    "refresh_spend_bank": (
        "SELECT day = ? AS today, SUM(refreshes) AS refreshes, SUM(llm_calls) AS llm_calls, "
        "SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens "
        "FROM refresh_spend WHERE bank_id = ? GROUP BY 1"
    ),
    # models whose last refreshes failed (the bank-level circuit breaker counts them)
    "count_failing_models": (
        "SELECT COUNT(*) AS n FROM mental_models "
        "WHERE bank_id = ? AND CAST(json_extract(refresh_state, '$.failures') AS INTEGER) > 0"
    ),
    # ---------------------------------------------------------------- knowledge base (store/knowledge.py)
    "list_knowledge_nodes": "SELECT * FROM knowledge_nodes WHERE bank_id = ?",
    "get_knowledge_node": "SELECT * FROM knowledge_nodes WHERE bank_id = ? AND id = ?",
    # the node and its ancestors, nearest first (depth-bounded: a stored cycle cannot loop the query)
    "knowledge_ancestors": (
        "WITH RECURSIVE chain(id, depth) AS (SELECT id, 0 FROM knowledge_nodes WHERE bank_id = ? AND id = ? "
        "UNION ALL SELECT k.parent_id, chain.depth + 1 FROM knowledge_nodes k JOIN chain ON k.id = chain.id "
        "WHERE k.bank_id = ? AND k.parent_id IS NOT NULL AND chain.depth < 10000) "
        "SELECT k.* FROM chain JOIN knowledge_nodes k ON k.id = chain.id AND k.bank_id = ? ORDER BY chain.depth"
    ),
    "knowledge_subtree": (
        "WITH RECURSIVE sub(id, depth) AS (SELECT id, 0 FROM knowledge_nodes WHERE bank_id = ? AND id = ? "
        "UNION ALL SELECT k.id, sub.depth + 1 FROM knowledge_nodes k JOIN sub ON k.parent_id = sub.id "
        "WHERE k.bank_id = ? AND sub.depth < 10000) "
        "SELECT k.* FROM sub JOIN knowledge_nodes k ON k.id = sub.id AND k.bank_id = ?"
    ),
    "insert_knowledge_node": (
        "INSERT INTO knowledge_nodes (bank_id, id, kind, name, parent_id, mental_model_id, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "update_knowledge_node": (
        "UPDATE knowledge_nodes SET name = ?, parent_id = ?, updated_at = ? WHERE bank_id = ? AND id = ?"
    ),
    # a page's settings only: a concurrent refresh's content, watermark and history stay untouched
    "update_page_settings": (
        "UPDATE mental_models SET name = ?, source_query = ?, tags = ?, max_tokens = ?, trigger = ? "
        "WHERE bank_id = ? AND id = ?"
    ),
    # the pages' mental models of a subtree (their nodes go with them: ON DELETE CASCADE)
    "delete_subtree_models": (
        "DELETE FROM mental_models WHERE bank_id = ? AND id IN (WITH RECURSIVE sub(id, depth) AS ("
        "SELECT id, 0 FROM knowledge_nodes WHERE bank_id = ? AND id = ? UNION ALL SELECT k.id, sub.depth + 1 "
        "FROM knowledge_nodes k JOIN sub ON k.parent_id = sub.id WHERE k.bank_id = ? AND sub.depth < 10000) "
        "SELECT k.mental_model_id FROM sub JOIN knowledge_nodes k ON k.id = sub.id AND k.bank_id = ? "
        "WHERE k.mental_model_id IS NOT NULL)"
    ),
    "delete_knowledge_node": "DELETE FROM knowledge_nodes WHERE bank_id = ? AND id = ?",
    # a {where} fragment of list_mental_models / count_mental_models
    "exclude_knowledge_pages": (
        " AND NOT EXISTS (SELECT 1 FROM knowledge_nodes k WHERE k.bank_id = mental_models.bank_id "
        "AND k.mental_model_id = mental_models.id)"
    ),
    "knowledge_page_models": (
        "SELECT {columns} FROM mental_models WHERE bank_id = ? AND EXISTS (SELECT 1 FROM knowledge_nodes k "
        "WHERE k.bank_id = mental_models.bank_id AND k.mental_model_id = mental_models.id)"
    ),
    "page_vectors": "SELECT mental_model_id, text_hash, embedding FROM knowledge_page_vectors WHERE bank_id = ?",
    # a page deleted meanwhile gets no vector (the WHERE EXISTS), rather than a foreign-key error
    "upsert_page_vector": (
        "INSERT INTO knowledge_page_vectors (bank_id, mental_model_id, text_hash, embedding) SELECT ?, ?, ?, ? "
        "WHERE EXISTS (SELECT 1 FROM mental_models WHERE bank_id = ? AND id = ?) "
        "ON CONFLICT (bank_id, mental_model_id) DO UPDATE SET text_hash = excluded.text_hash, "
        "embedding = excluded.embedding"
    ),
    "knowledge_history_log": (
        "SELECT h.mental_model_id, h.changed_at, json_extract(h.content, '$.kind') AS kind, "
        "json_extract(h.content, '$.outcome') AS outcome, json_extract(h.content, '$.failure_reason') AS reason "
        "FROM mental_model_history h JOIN knowledge_nodes k ON k.bank_id = h.bank_id "
        "AND k.mental_model_id = h.mental_model_id WHERE h.bank_id = ?"
    ),
    # ---------------------------------------------------------------- operations
    "insert_operation": (
        "INSERT INTO operations (id, bank_id, operation_type, status, payload, result, error, retry_count, "
        "next_retry_at, mental_model_id, created_at, updated_at, completed_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    # IS ?: a NULL mental model (bank-wide operation) matches NULL; the single writer makes check-then-insert atomic
    "find_pending_coalesced": (
        "SELECT * FROM operations WHERE bank_id = ? AND mental_model_id IS ? AND status = 'pending' "
        "AND operation_type = ? ORDER BY created_at LIMIT 1"
    ),
    "find_pending_refresh": (
        "SELECT * FROM operations WHERE bank_id = ? AND mental_model_id = ? AND status = 'pending' "
        "AND operation_type = 'refresh_mental_model' ORDER BY created_at LIMIT 1"
    ),
    "coalesce_operation": "UPDATE operations SET payload = ?, next_retry_at = ?, updated_at = ? WHERE id = ?",
    "count_operations": "SELECT COUNT(*) FROM operations WHERE bank_id = ?{where}",
    "list_operations": (
        "SELECT * FROM operations WHERE bank_id = ?{where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?"
    ),
    "cancel_operation": (
        "UPDATE operations SET status = 'cancelled', updated_at = ?, completed_at = ? "
        "WHERE bank_id = ? AND id = ? AND status = 'pending'"
    ),
    "get_operation": "SELECT * FROM operations WHERE bank_id = ? AND id = ?",
    "insert_operation_once": (
        "INSERT INTO operations (id, bank_id, operation_type, status, payload, result, error, retry_count, "
        "next_retry_at, mental_model_id, created_at, updated_at, completed_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"
    ),
    # claiming is two statements inside one write transaction (the single writer makes the pair atomic): pick a
    # runnable row, skipping models with a live claimed operation and banks with a live claimed consolidation (two
    # consolidations of one bank would both fold the same facts), then mark it ours under a fresh claim token.
    # Fair order: banks with fewer live claims first, then operation types with fewer live claims, then the time
    # the row became runnable (a parked, retried or yielding row queues behind rows that were ready before it; a
    # crashed worker's row became runnable when its lease expired). ``lane``: 'deliveries' claims webhook deliveries
    # only, 'work' everything else, NULL anything
    "claim_candidate": (
        "SELECT o.id FROM operations o WHERE ((o.status = 'pending' AND (o.next_retry_at IS NULL OR "
        "o.next_retry_at <= :now)) OR (o.status = 'processing' AND o.lease_expires_at < :now)) "
        "AND (o.mental_model_id IS NULL OR NOT EXISTS (SELECT 1 FROM operations p WHERE "
        "p.bank_id = o.bank_id AND p.mental_model_id = o.mental_model_id AND p.status = 'processing' "
        "AND p.lease_expires_at >= :now AND p.id != o.id)) "
        "AND (o.operation_type != 'consolidation' OR NOT EXISTS (SELECT 1 FROM operations p WHERE "
        "p.bank_id = o.bank_id AND p.operation_type = 'consolidation' AND p.status = 'processing' "
        "AND p.lease_expires_at >= :now AND p.id != o.id)) "
        "AND (:lane IS NULL OR (o.operation_type = 'webhook_delivery') = (:lane = 'deliveries')) ORDER BY "
        "(SELECT COUNT(*) FROM operations r WHERE r.status = 'processing' AND r.bank_id = o.bank_id "
        "AND r.lease_expires_at >= :now), "
        "(SELECT COUNT(*) FROM operations r WHERE r.status = 'processing' "
        "AND r.operation_type = o.operation_type AND r.lease_expires_at >= :now), "
        "CASE WHEN o.status = 'processing' THEN o.lease_expires_at ELSE COALESCE(o.next_retry_at, o.created_at) END, "
        "o.created_at, o.id LIMIT 1"
    ),
    "claim_operation": (
        "UPDATE operations SET status = 'processing', worker_id = ?, claim_token = ?, lease_expires_at = ?, "
        "updated_at = ? WHERE id = ? RETURNING *"
    ),
    # the claim fence: the last statement of every write transaction a running handler makes (store/fence.py)
    "fence_operation": (
        "UPDATE operations SET progress = COALESCE(?, progress) WHERE id = ? AND claim_token = ? "
        "AND status = 'processing'"
    ),
    "renew_lease": (
        "UPDATE operations SET lease_expires_at = ?, updated_at = ? WHERE id = ? AND claim_token = ? "
        "AND status = 'processing'"
    ),
    # defer / finish / retry / requeue with a token apply only while the claim holds (token NULL: unconditional)
    "defer_operation": (
        "UPDATE operations SET status = 'pending', next_retry_at = ?, updated_at = ?, worker_id = NULL, "
        "lease_expires_at = NULL, claim_token = NULL WHERE id = ? "
        "AND (? IS NULL OR (claim_token = ? AND status = 'processing'))"
    ),
    "finish_operation": (
        "UPDATE operations SET status = ?, result = ?, error = ?, updated_at = ?, completed_at = ?, "
        "lease_expires_at = NULL, claim_token = NULL WHERE id = ? "
        "AND (? IS NULL OR (claim_token = ? AND status = 'processing'))"
    ),
    "retry_operation": (
        "UPDATE operations SET status = 'pending', retry_count = retry_count + 1, next_retry_at = ?, "
        "error = ?, updated_at = ?, worker_id = NULL, lease_expires_at = NULL, claim_token = NULL WHERE id = ? "
        "AND (? IS NULL OR (claim_token = ? AND status = 'processing'))"
    ),
    # ---------------------------------------------------------------- reflect expand / LLM tracing
    "memory_sources": (
        "SELECT m.id, m.document_id, m.chunk_id, c.text AS chunk_text, c.chunk_index, d.original_text "
        "FROM memory_units m "
        "LEFT JOIN documents d ON d.bank_id = m.bank_id AND d.id = m.document_id "
        "LEFT JOIN chunks c ON c.id = m.chunk_id AND c.bank_id = m.bank_id "
        "WHERE m.bank_id = ? AND m.id IN ({marks})"
    ),
    "memory_chunk_sources": (
        "SELECT m.id, m.document_id, m.chunk_id, c.text AS chunk_text, c.chunk_index, NULL AS original_text "
        "FROM memory_units m "
        "LEFT JOIN chunks c ON c.id = m.chunk_id AND c.bank_id = m.bank_id "
        "WHERE m.bank_id = ? AND m.id IN ({marks})"
    ),
    "insert_llm_request": (
        "INSERT INTO llm_requests (id, bank_id, operation_id, scope, provider, model, attempt, request, "
        "response, error, input_tokens, output_tokens, duration_ms, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "list_llm_requests": (
        "SELECT * FROM llm_requests WHERE bank_id = ? AND operation_id = ? ORDER BY created_at, id LIMIT ?"
    ),
    "purge_llm_requests": "DELETE FROM llm_requests WHERE created_at < ?",
    # ---------------------------------------------------------------- scoped API keys (store/api_keys.py)
    "insert_api_key": (
        "INSERT INTO api_keys (id, name, banks, read_only, secret_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)"
    ),
    "get_api_key": "SELECT * FROM api_keys WHERE id = ?",
    "list_api_keys": "SELECT * FROM api_keys ORDER BY created_at, id",
    "revoke_api_key": "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
    # ---------------------------------------------------------------- introspection (the dump test helper)
    # worker heartbeats are process liveness, not data: a running worker writes them whatever a request does
    "list_tables": (
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'memory_fts%' "
        "AND name NOT LIKE 'sqlite_%' AND name != 'worker_heartbeats' ORDER BY name"
    ),
    # {table} is a name list_tables returned
    "dump_table": "SELECT * FROM {table} ORDER BY 1",
}
# documents, directives, webhooks, operation administration, LLM request log, heartbeats: resource_queries.py
Q.update(RESOURCE_Q)
# bank transfer (snapshots, imports) and stored files: transfer_queries.py
Q.update(TRANSFER_Q)
# consolidation (pending facts, observations, the consolidated mark): consolidation_queries.py
Q.update(CONSOLIDATION_Q)

HISTORY_KIND = {
    True: "json_extract(content, '$.kind') = 'refresh_failed'",
    False: "json_extract(content, '$.kind') IS NULL",
}


def marks(count: int) -> str:
    """The ``?,?,…`` of an ``IN`` list of ``count`` values (the ``{marks}`` slot)."""
    return ",".join("?" * count)


def stale_compound(selects: Sequence[str]) -> str:
    """Up to ``MAX_COMPOUND`` ``stale_scope`` branches as one subquery, so the whole staleness statement stays below
    SQLite's compound-SELECT limit however many scopes a page has."""
    return "SELECT * FROM (" + " UNION ALL ".join(selects) + ")"


def tags_json(tags: Sequence[str]) -> str:
    """The stored form of a tag list: a sorted, de-duplicated JSON array (so ``exact`` is string equality)."""
    return json.dumps(sorted(set(tags)), separators=(",", ":"))


def model_tags_clause(tags: Sequence[str], tags_match: str) -> tuple[str, list[Any]]:
    """The ``{where}`` of ``list_mental_models``/``count_mental_models`` for a tag filter on models (empty string:
    no filter): ``exact`` = equal, ``all`` = superset, anything else = overlaps."""
    want = sorted(set(tags))
    if not want:
        return "", []
    if tags_match == "exact":
        return " AND tags = ?", [tags_json(want)]
    if tags_match == "all":
        return f" AND (SELECT COUNT(*) FROM json_each(tags) WHERE value IN ({marks(len(want))})) = {len(want)}", want
    return f" AND EXISTS (SELECT 1 FROM json_each(tags) WHERE value IN ({marks(len(want))}))", want


def _tags_clause(alias: str, wanted: Sequence[str], mode: str) -> tuple[str | None, list[Any]]:
    """One tag filter as SQL (None = no constraint), per the truth table of ``domain.tags``."""
    want = sorted(set(wanted))
    if mode == "exact":
        return f"{alias}.tags = ?", [tags_json(want)]
    if not want:
        return None, []
    if mode in ("any", "any_strict"):
        hit = f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value IN ({marks(len(want))}))"
    elif mode in ("all", "all_strict"):
        hit = f"(SELECT COUNT(*) FROM json_each({alias}.tags) WHERE value IN ({marks(len(want))})) = {len(want)}"
    else:
        raise ValueError(f"unknown tags_match mode: {mode!r}")
    if mode.endswith("strict"):
        return f"({alias}.tags != '[]' AND {hit})", want
    return f"({alias}.tags = '[]' OR {hit})", want


def _group_clause(alias: str, group: dict[str, Any]) -> tuple[str, list[Any]]:
    """A (validated) tag group — ``and``/``or``/``not`` or a ``{"tags", "match"}`` leaf — as SQL."""
    if "and" in group or "or" in group:
        op = "and" if "and" in group else "or"
        parts = [_group_clause(alias, g) for g in group[op]]
        return "(" + f" {op.upper()} ".join(p for p, _ in parts) + ")", [x for _, ps in parts for x in ps]
    if "not" in group:
        inner, params = _group_clause(alias, group["not"])
        return f"(NOT {inner})", params
    clause, params = _tags_clause(alias, group["tags"], group["match"])
    return clause or "1=1", params


def filter_sql(flt: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """Compile a :class:`MemoryFilter` to a SQL predicate over ``alias`` (tag truth table of domain.tags)."""
    clauses: list[str] = []
    params: list[Any] = []
    if flt.fact_types is not None:
        clauses.append(f"{alias}.fact_type IN ({marks(len(flt.fact_types))})")
        params.extend(flt.fact_types)
    if flt.updated_before is not None:
        clauses.append(f"{alias}.updated_at <= ?")
        params.append(to_iso(flt.updated_before))
    if flt.updated_after is not None:
        clauses.append(f"{alias}.updated_at > ?")
        params.append(to_iso(flt.updated_after))
    clause, p = _tags_clause(alias, flt.tags, flt.tags_match)
    if clause is not None:
        clauses.append(clause)
        params.extend(p)
    for group in flt.groups:
        clause, p = _group_clause(alias, group)
        clauses.append(clause)
        params.extend(p)
    return (" AND ".join(clauses) or "1=1"), params


def fts_match(terms: Sequence[str]) -> str:
    """An FTS5 ``MATCH`` expression that matches any of ``terms``, each a quoted phrase (quotes inside a term are
    dropped, so no FTS5 operator can reach the parser)."""
    return " OR ".join('"' + t.replace('"', "") + '"' for t in terms)


def glob_pattern(pattern: str) -> str:
    """A case-folded ``GLOB`` pattern for a tag search: ``*`` is the only wildcard (``[`` and ``?`` match
    themselves); no ``*`` means substring match."""
    glob = pattern.lower() if "*" in pattern else f"*{pattern.lower()}*"
    return glob.replace("[", "[[]").replace("?", "[?]")


def substring_pattern(query: str) -> str:
    """A ``LIKE`` pattern (escape ``\\``) that finds ``query`` anywhere in the text."""
    return "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
