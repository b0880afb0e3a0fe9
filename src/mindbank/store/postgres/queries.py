"""Every SQL statement of the PostgreSQL store, by name, plus the compiler of :class:`MemoryFilter` predicates.

Statements use psycopg's positional ``%s`` placeholders. A few carry a ``{where}`` (a compiled filter, itself
parameterised) or ``{kind}`` slot that the store's query mixins fill with ``str.format`` before execution; nothing
user-supplied is ever formatted into SQL text, only fixed fragments built here.

Text ordering that SQLite does byte-wise (ids, tags) is spelled ``COLLATE "C"`` so both backends page identically
whatever the database's default collation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from mindbank.domain.scope import MemoryFilter
from mindbank.domain.tags import TAGS_MATCH_MODES
from mindbank.store.postgres.consolidation_queries import CONSOLIDATION_Q, MEMORY_COLUMNS
from mindbank.store.postgres.resource_queries import RESOURCE_Q
from mindbank.store.postgres.transfer_queries import TRANSFER_Q

_STAMP = "GREATEST(clock_timestamp(), last_memory_write_at + interval '1 microsecond')"

# whether a mental model is a knowledge page (a page is a model placed in the knowledge-base tree), read with it
IS_PAGE = (
    "EXISTS (SELECT 1 FROM knowledge_nodes k WHERE k.bank_id = mental_models.bank_id "
    "AND k.mental_model_id = mental_models.id) AS is_knowledge_page"
)

Q: dict[str, str] = {
    # ---------------------------------------------------------------- clock
    "db_now": "SELECT clock_timestamp()",
    "vector_version": "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
    # ---------------------------------------------------------------- banks
    "ensure_bank": (
        "INSERT INTO banks (bank_id, name, created_at, updated_at) VALUES (%s, %s, now(), now()) "
        "ON CONFLICT (bank_id) DO NOTHING"
    ),
    "bank_exists": "SELECT 1 FROM banks WHERE bank_id = %s",
    "get_bank": "SELECT * FROM banks WHERE bank_id = %s",
    "list_banks": (
        "SELECT b.*, (SELECT COUNT(*) FROM memory_units m WHERE m.bank_id = b.bank_id) AS n "
        'FROM banks b ORDER BY b.bank_id COLLATE "C"'
    ),
    "upsert_bank": (
        "UPDATE banks SET name = COALESCE(%s, name), mission = COALESCE(%s, mission), "
        "disposition = COALESCE(%s::jsonb, disposition), updated_at = now() WHERE bank_id = %s RETURNING *"
    ),
    "lock_bank_config": "SELECT config FROM banks WHERE bank_id = %s FOR UPDATE",
    "set_bank_config": "UPDATE banks SET config = %s, updated_at = now() WHERE bank_id = %s",
    # NO KEY UPDATE: serialises memory writers of the bank exactly like FOR UPDATE, but does not block the
    # FOR KEY SHARE locks that foreign-key checks take, so creating a model or queueing an operation in the bank
    # never waits behind a long retain
    "lock_bank": "SELECT memory_version FROM banks WHERE bank_id = %s FOR NO KEY UPDATE",
    "lock_bank_for_delete": "SELECT 1 FROM banks WHERE bank_id = %s FOR UPDATE",
    "count_bank_memories": "SELECT COUNT(*) FROM memory_units WHERE bank_id = %s",
    "delete_bank_operations": "DELETE FROM operations WHERE bank_id = %s",
    "delete_bank": "DELETE FROM banks WHERE bank_id = %s",
    "stats_by_type": "SELECT fact_type, COUNT(*) FROM memory_units WHERE bank_id = %s GROUP BY fact_type",
    "stats_by_status": "SELECT status, COUNT(*) FROM operations WHERE bank_id = %s GROUP BY status",
    "stats_documents": "SELECT COUNT(*) FROM documents WHERE bank_id = %s",
    "stats_pending_consolidation": (
        "SELECT COUNT(*) FROM memory_units WHERE bank_id = %s AND fact_type <> 'observation' "
        "AND consolidated_at IS NULL"
    ),
    "stats_last_consolidated": "SELECT MAX(consolidated_at) FROM memory_units WHERE bank_id = %s",
    "bank_last_write": "SELECT last_memory_write_at FROM banks WHERE bank_id = %s",
    # the caller holds the bank row lock (lock_bank), so this statement's snapshot sees the latest stamp and no other
    # writer can stamp until we commit: stamps are strictly increasing in commit order
    "stamp_bank": (
        f"WITH s AS (SELECT {_STAMP} AS stamp FROM banks WHERE bank_id = %s) "
        "UPDATE banks SET last_memory_write_at = s.stamp, updated_at = s.stamp, memory_version = memory_version + 1 "
        "FROM s WHERE banks.bank_id = %s RETURNING banks.last_memory_write_at, banks.memory_version"
    ),
    # ---------------------------------------------------------------- documents and memories
    "get_document": "SELECT original_text, created_at FROM documents WHERE bank_id = %s AND id = %s",
    "count_document_chunks": "SELECT COUNT(*) FROM chunks WHERE bank_id = %s AND document_id = %s",
    "delete_document_memories": "DELETE FROM memory_units WHERE bank_id = %s AND document_id = %s",
    "delete_document_chunks": "DELETE FROM chunks WHERE bank_id = %s AND document_id = %s",
    "upsert_document": (
        "INSERT INTO documents (bank_id, id, original_text, content_hash, tags, metadata, context, created_at, "
        "updated_at) VALUES (%s, %s, %s, %s, %s::text[], %s, %s, %s, %s) "
        "ON CONFLICT (bank_id, id) DO UPDATE SET original_text = excluded.original_text, "
        "content_hash = excluded.content_hash, tags = excluded.tags, metadata = excluded.metadata, "
        "context = excluded.context, updated_at = excluded.updated_at"
    ),
    "insert_chunk": "INSERT INTO chunks (id, bank_id, document_id, chunk_index, text) VALUES (%s, %s, %s, %s, %s)",
    "insert_memory": (
        "INSERT INTO memory_units (id, bank_id, document_id, chunk_id, text, fact_type, tags, context, metadata, "
        "occurred_start, occurred_end, mentioned_at, embedding, source_memory_ids, proof_count, created_at, "
        "updated_at, repeat_key) VALUES (%s, %s, %s, %s, %s, %s, %s::text[], %s, %s, %s, %s, %s, %s::vector, "
        "%s::text[], %s, %s, %s, %s)"
    ),
    # ---------------------------------------------------------------- repeats and restatements (store/retention.py)
    "document_hashes": "SELECT id, content_hash FROM documents WHERE bank_id = %s AND id = ANY(%s::text[])",
    # oldest first: the first fact with a key is the one its repeats land on
    "repeat_lookup": (
        "SELECT repeat_key, id FROM memory_units WHERE bank_id = %s AND repeat_key = ANY(%s::text[]) ORDER BY seq"
    ),
    # a repeat is a memory write (updated_at); the newest mention wins
    "record_repeat": (
        "UPDATE memory_units SET mention_count = mention_count + %s, last_mentioned_at = "
        "GREATEST(COALESCE(last_mentioned_at, mentioned_at, %s), COALESCE(%s, last_mentioned_at, mentioned_at)), "
        "updated_at = %s WHERE bank_id = %s AND id = %s"
    ),
    "document_state": "SELECT content_hash, tags, metadata, context FROM documents WHERE bank_id = %s AND id = %s",
    "document_fact_times": (
        "SELECT id, occurred_start FROM memory_units WHERE bank_id = %s AND document_id = %s "
        "AND fact_type <> 'observation' ORDER BY seq"
    ),
    "restate_document": (
        "UPDATE documents SET tags = %s::text[], metadata = %s, context = %s, updated_at = %s "
        "WHERE bank_id = %s AND id = %s"
    ),
    # in place, same ids; new tags send the facts back to consolidation (the CASE reads the old tags)
    "restate_document_memories": (
        "UPDATE memory_units SET tags = %s::text[], metadata = %s, context = %s, "
        "occurred_start = COALESCE(%s, occurred_start), occurred_end = COALESCE(%s, occurred_end), "
        "mentioned_at = COALESCE(%s, mentioned_at), "
        "consolidated_at = CASE WHEN tags = %s::text[] THEN consolidated_at END, updated_at = %s "
        "WHERE bank_id = %s AND document_id = %s AND fact_type <> 'observation'"
    ),
    "delete_memory": "DELETE FROM memory_units WHERE bank_id = %s AND id = %s",
    # an edit is a memory write; the fact goes back to consolidation
    "update_memory": (
        "UPDATE memory_units SET text = COALESCE(%s, text), embedding = COALESCE(%s::vector, embedding), "
        "context = COALESCE(%s, context), tags = COALESCE(%s::text[], tags), metadata = COALESCE(%s, metadata), "
        "consolidated_at = NULL, updated_at = %s, repeat_key = CASE WHEN %s THEN NULL ELSE repeat_key END "
        "WHERE bank_id = %s AND id = %s"
    ),
    "get_memories": f"SELECT {MEMORY_COLUMNS} FROM memory_units m WHERE m.bank_id = %s AND m.id = ANY(%s::text[])",
    "count_memories": "SELECT COUNT(*) FROM memory_units WHERE bank_id = %s",
    # search knobs are transaction-local (set_config(..., true) == SET LOCAL) so pooled connections stay clean
    "set_ef_search": "SELECT set_config('hnsw.ef_search', %s, true)",
    "set_iterative_scan": "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)",
    "vector_search": (
        "SELECT m.id, m.embedding <=> %s::vector AS distance FROM memory_units m "
        "WHERE m.bank_id = %s AND {where} ORDER BY m.embedding <=> %s::vector LIMIT %s"
    ),
    "keyword_search": (
        "SELECT m.id, ts_rank_cd(m.text_tsv, q.query) AS score FROM memory_units m, "
        "to_tsquery('english', %s) AS q(query) "
        "WHERE m.bank_id = %s AND m.text_tsv @@ q.query AND {where} ORDER BY score DESC, m.seq LIMIT %s"
    ),
    "list_memories": (
        f"SELECT {MEMORY_COLUMNS}, COUNT(*) OVER () AS total FROM memory_units m WHERE m.bank_id = %s AND {{where}} "
        "ORDER BY m.updated_at DESC, m.seq DESC LIMIT %s OFFSET %s"
    ),
    "count_filtered": "SELECT COUNT(*) FROM memory_units m WHERE m.bank_id = %s AND {where}",
    "count_in_scope": (
        "SELECT m.fact_type, COUNT(*) FROM memory_units m WHERE m.bank_id = %s AND {where} GROUP BY m.fact_type"
    ),
    # {table} is one of two fixed names chosen in code
    "list_tags": (
        "SELECT j.tag, COUNT(*) AS n, COUNT(*) OVER () AS total FROM {table} t CROSS JOIN LATERAL unnest(t.tags) "
        'AS j(tag) WHERE t.bank_id = %s{where} GROUP BY j.tag ORDER BY n DESC, j.tag COLLATE "C" LIMIT %s OFFSET %s'
    ),
    "count_tags": (
        "SELECT COUNT(DISTINCT j.tag) FROM {table} t CROSS JOIN LATERAL unnest(t.tags) AS j(tag) "
        "WHERE t.bank_id = %s{where}"
    ),
    # recall's temporal arm: memories whose own dates fall inside a window, latest first
    "memories_in_window": (
        "SELECT m.id FROM memory_units m WHERE m.bank_id = %s AND {where} AND ("
        "(m.occurred_start >= %s AND m.occurred_start <= %s) OR (m.occurred_end >= %s AND m.occurred_end <= %s) "
        "OR (m.mentioned_at >= %s AND m.mentioned_at <= %s)) "
        "ORDER BY COALESCE(m.occurred_start, m.mentioned_at) DESC, m.id LIMIT %s"
    ),
    "scope_watermark": (
        "SELECT m.updated_at FROM memory_units m WHERE m.bank_id = %s AND {where} ORDER BY m.updated_at DESC LIMIT 1"
    ),
    # staleness_reads is assembled from these branches into ONE UNION ALL statement
    "stale_bank": (
        "SELECT 'bank' AS kind, NULL::text AS key, last_memory_write_at AS at, NULL::text AS memory_id "
        "FROM banks WHERE bank_id = %s"
    ),
    "stale_scope": (
        "SELECT 'scope', %s::text, (SELECT MAX(m.updated_at) FROM memory_units m WHERE m.bank_id = %s "
        "AND m.updated_at > %s AND {where}), NULL::text"
    ),
    "stale_citations": (
        "SELECT CASE WHEN m.id IS NULL THEN 'cite' ELSE 'written' END, c.mental_model_id, m.updated_at, c.memory_id "
        "FROM mental_model_citations c LEFT JOIN memory_units m ON m.id = c.memory_id "
        "WHERE c.bank_id = %s AND c.mental_model_id = ANY(%s::text[]) "
        "AND (m.id IS NULL OR m.updated_at > %s::timestamptz)"
    ),
    # ---------------------------------------------------------------- mental models
    "insert_mental_model": (
        "INSERT INTO mental_models (bank_id, id, name, source_query, content, structured_document, reflect_response, "
        "tags, max_tokens, trigger, last_refreshed_at, last_memory_seen_at, last_refreshed_source_query, "
        "last_refresh_failed_at, last_full_refreshed_at, created_at, cleared_at, refresh_state) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s::text[], %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    "get_mental_model": f"SELECT *, {IS_PAGE} FROM mental_models WHERE bank_id = %s AND id = %s",
    "count_mental_models": "SELECT COUNT(*) FROM mental_models WHERE bank_id = %s{where}",
    "list_mental_models": (
        f"SELECT {{columns}}, {IS_PAGE}, (SELECT COUNT(*) FROM mental_models WHERE bank_id = %s{{where}}) "
        f"AS total_rows FROM mental_models WHERE bank_id = %s{{where}} "
        'ORDER BY last_refreshed_at DESC, id COLLATE "C" DESC LIMIT %s OFFSET %s'
    ),
    "update_mental_model": (
        "UPDATE mental_models SET name = %s, source_query = %s, content = %s, structured_document = %s, "
        "reflect_response = %s, tags = %s::text[], max_tokens = %s, trigger = %s, last_refreshed_at = %s, "
        "last_memory_seen_at = %s, last_refreshed_source_query = %s, last_refresh_failed_at = %s, "
        "last_full_refreshed_at = %s, cleared_at = %s, refresh_state = %s WHERE bank_id = %s AND id = %s"
    ),
    "delete_citations": "DELETE FROM mental_model_citations WHERE bank_id = %s AND mental_model_id = %s",
    "insert_citation": (
        "INSERT INTO mental_model_citations (bank_id, mental_model_id, memory_id) VALUES (%s, %s, %s) "
        "ON CONFLICT DO NOTHING"
    ),
    "insert_history": (
        "INSERT INTO mental_model_history (bank_id, mental_model_id, content, changed_at) "
        "VALUES (%s, %s, %s, clock_timestamp())"
    ),
    # {kind} is one of the two fixed predicates of HISTORY_KIND
    "trim_history": (
        "DELETE FROM mental_model_history WHERE bank_id = %s AND mental_model_id = %s AND {kind} "
        "AND id NOT IN (SELECT id FROM mental_model_history WHERE bank_id = %s AND mental_model_id = %s AND {kind} "
        "ORDER BY changed_at DESC, id DESC LIMIT %s)"
    ),
    "delete_mental_model": "DELETE FROM mental_models WHERE bank_id = %s AND id = %s",
    "list_history": (
        "SELECT id, mental_model_id, content, changed_at FROM mental_model_history "
        "WHERE bank_id = %s AND mental_model_id = %s ORDER BY changed_at DESC, id DESC"
    ),
    # ---------------------------------------------------------------- refresh spend and governance (issue 14)
    "add_refresh_spend": (
        "INSERT INTO refresh_spend (bank_id, mental_model_id, day, refreshes, llm_calls, input_tokens, output_tokens) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (bank_id, day, mental_model_id) DO UPDATE SET "
        "refreshes = refresh_spend.refreshes + excluded.refreshes, "
        "llm_calls = refresh_spend.llm_calls + excluded.llm_calls, "
        "input_tokens = refresh_spend.input_tokens + excluded.input_tokens, "
        "output_tokens = refresh_spend.output_tokens + excluded.output_tokens"
    ),
    # spend summed per model of a list, split into one UTC day (``today``: the first parameter) and the other days
    "refresh_spend_models": (
        "SELECT mental_model_id, day = %s AS today, SUM(refreshes) AS refreshes, SUM(llm_calls) AS llm_calls, "
        "SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, NULL AS bank_config "
        "FROM refresh_spend WHERE bank_id = %s AND mental_model_id = ANY(%s::text[]) GROUP BY 1, 2"
    ),
    # a last row carrying the bank's overrides, UNION ALL-ed after refresh_spend_models (refresh_status_reads)
    "bank_config_row": "SELECT NULL, NULL, NULL, NULL, NULL, NULL, config FROM banks WHERE bank_id = %s",
    # the same for the whole bank (a deleted model's spend still counts)
    "refresh_spend_bank": (
        "SELECT day = %s AS today, SUM(refreshes) AS refreshes, SUM(llm_calls) AS llm_calls, "
        "SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens "
        "FROM refresh_spend WHERE bank_id = %s GROUP BY 1"
    ),
    # models whose last refreshes failed (the bank-level circuit breaker counts them)
    "count_failing_models": (
        "SELECT COUNT(*) AS n FROM mental_models "
        "WHERE bank_id = %s AND COALESCE((refresh_state->>'failures')::int, 0) > 0"
    ),
    # ---------------------------------------------------------------- knowledge base (store/knowledge.py)
    # one knowledge-base writer per bank at a time (SQLite: BEGIN IMMEDIATE): the parent checks, the cycle check
    # and the write then see one tree
    "lock_knowledge_tree": "SELECT pg_advisory_xact_lock(hashtextextended('mindbank.knowledge:' || %s, 0))",
    "list_knowledge_nodes": "SELECT * FROM knowledge_nodes WHERE bank_id = %s",
    "get_knowledge_node": "SELECT * FROM knowledge_nodes WHERE bank_id = %s AND id = %s",
    # the node and its ancestors, nearest first (depth-bounded: a stored cycle cannot loop the query)
    "knowledge_ancestors": (
        "WITH RECURSIVE chain(id, depth) AS (SELECT id, 0 FROM knowledge_nodes WHERE bank_id = %s AND id = %s "
        "UNION ALL SELECT k.parent_id, chain.depth + 1 FROM knowledge_nodes k JOIN chain ON k.id = chain.id "
        "WHERE k.bank_id = %s AND k.parent_id IS NOT NULL AND chain.depth < 10000) "
        "SELECT k.* FROM chain JOIN knowledge_nodes k ON k.id = chain.id AND k.bank_id = %s ORDER BY chain.depth"
    ),
    "knowledge_subtree": (
        "WITH RECURSIVE sub(id, depth) AS (SELECT id, 0 FROM knowledge_nodes WHERE bank_id = %s AND id = %s "
        "UNION ALL SELECT k.id, sub.depth + 1 FROM knowledge_nodes k JOIN sub ON k.parent_id = sub.id "
        "WHERE k.bank_id = %s AND sub.depth < 10000) "
        "SELECT k.* FROM sub JOIN knowledge_nodes k ON k.id = sub.id AND k.bank_id = %s"
    ),
    "insert_knowledge_node": (
        "INSERT INTO knowledge_nodes (bank_id, id, kind, name, parent_id, mental_model_id, created_at, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    "update_knowledge_node": (
        "UPDATE knowledge_nodes SET name = %s, parent_id = %s, updated_at = %s WHERE bank_id = %s AND id = %s"
    ),
    # a page's settings only: a concurrent refresh's content, watermark and history stay untouched
    "update_page_settings": (
        "UPDATE mental_models SET name = %s, source_query = %s, tags = %s, max_tokens = %s, trigger = %s "
        "WHERE bank_id = %s AND id = %s"
    ),
    # the pages' mental models of a subtree (their nodes go with them: ON DELETE CASCADE)
    "delete_subtree_models": (
        "DELETE FROM mental_models WHERE bank_id = %s AND id IN (WITH RECURSIVE sub(id, depth) AS ("
        "SELECT id, 0 FROM knowledge_nodes WHERE bank_id = %s AND id = %s UNION ALL SELECT k.id, sub.depth + 1 "
        "FROM knowledge_nodes k JOIN sub ON k.parent_id = sub.id WHERE k.bank_id = %s AND sub.depth < 10000) "
        "SELECT k.mental_model_id FROM sub JOIN knowledge_nodes k ON k.id = sub.id AND k.bank_id = %s "
        "WHERE k.mental_model_id IS NOT NULL)"
    ),
    "delete_knowledge_node": "DELETE FROM knowledge_nodes WHERE bank_id = %s AND id = %s",
    # a {where} fragment of list_mental_models / count_mental_models
    "exclude_knowledge_pages": (
        " AND NOT EXISTS (SELECT 1 FROM knowledge_nodes k WHERE k.bank_id = mental_models.bank_id "
        "AND k.mental_model_id = mental_models.id)"
    ),
    "knowledge_page_models": (
        "SELECT {columns} FROM mental_models WHERE bank_id = %s AND EXISTS (SELECT 1 FROM knowledge_nodes k "
        "WHERE k.bank_id = mental_models.bank_id AND k.mental_model_id = mental_models.id)"
    ),
    "page_vectors": "SELECT mental_model_id, text_hash, embedding FROM knowledge_page_vectors WHERE bank_id = %s",
    # a page deleted meanwhile gets no vector (the WHERE EXISTS), rather than a foreign-key error
    "upsert_page_vector": (
        "INSERT INTO knowledge_page_vectors (bank_id, mental_model_id, text_hash, embedding) SELECT %s, %s, %s, %s "
        "WHERE EXISTS (SELECT 1 FROM mental_models WHERE bank_id = %s AND id = %s) "
        "ON CONFLICT (bank_id, mental_model_id) DO UPDATE SET text_hash = excluded.text_hash, "
        "embedding = excluded.embedding"
    ),
    "knowledge_history_log": (
        "SELECT h.mental_model_id, h.changed_at, h.content->>'kind' AS kind, "
        "h.content->>'outcome' AS outcome, h.content->>'failure_reason' AS reason "
        "FROM mental_model_history h JOIN knowledge_nodes k ON k.bank_id = h.bank_id "
        "AND k.mental_model_id = h.mental_model_id WHERE h.bank_id = %s"
    ),
    # ---------------------------------------------------------------- operations
    "insert_operation": (
        "INSERT INTO operations (id, bank_id, operation_type, status, payload, result, error, retry_count, "
        "next_retry_at, mental_model_id, created_at, updated_at, completed_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    # serialises submit_coalesced per (bank, model, type) across processes (transaction-scoped, released at commit)
    "lock_coalesce_key": "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
    "find_pending_coalesced": (
        "SELECT * FROM operations WHERE bank_id = %s AND mental_model_id IS NOT DISTINCT FROM %s "
        "AND status = 'pending' AND operation_type = %s ORDER BY created_at, id LIMIT 1"
    ),
    "find_pending_refresh": (
        "SELECT * FROM operations WHERE bank_id = %s AND mental_model_id = %s AND status = 'pending' "
        "AND operation_type = 'refresh_mental_model' ORDER BY created_at, id LIMIT 1"
    ),
    "coalesce_operation": "UPDATE operations SET payload = %s, next_retry_at = %s, updated_at = now() WHERE id = %s",
    "count_operations": "SELECT COUNT(*) FROM operations WHERE bank_id = %s{where}",
    "list_operations": (
        "SELECT * FROM operations WHERE bank_id = %s{where} "
        'ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT %s OFFSET %s'
    ),
    "cancel_operation": (
        "UPDATE operations SET status = 'cancelled', updated_at = now(), completed_at = now() "
        "WHERE bank_id = %s AND id = %s AND status = 'pending'"
    ),
    "get_operation": "SELECT * FROM operations WHERE bank_id = %s AND id = %s",
    "insert_operation_once": (
        "INSERT INTO operations (id, bank_id, operation_type, status, payload, result, error, retry_count, "
        "next_retry_at, mental_model_id, created_at, updated_at, completed_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING"
    ),
    # One statement: pick a runnable row, lock it (skipping rows other claimers hold), mark it ours under a fresh
    # claim token. "now" is the caller's clock when given (workers pass theirs, so next_retry_at and leases they
    # computed compare on one clock), else the database's. A model with ANY processing row is skipped: a live one is
    # running, an expired one is itself runnable and is reclaimed first; likewise a bank with a processing
    # consolidation (two would both fold the same facts). The partial unique indexes
    # uq_operations_one_running_per_model and uq_operations_one_consolidation_per_bank settle the remaining race
    # (two claimers picking two rows from snapshots that predate each other's commit): the loser gets a unique
    # violation and the store retries.
    # Fair order: banks with fewer live claims first, then operation types with fewer live claims, then the time
    # the row became runnable (a parked, retried or yielding row queues behind rows that were ready before it; a
    # crashed worker's row became runnable when its lease expired).
    "claim_operation": (
        "WITH clock AS (SELECT COALESCE(%(now)s::timestamptz, now()) AS at), "
        "candidate AS ("
        "SELECT o.id FROM operations o, clock WHERE o.status IN ('pending', 'processing') "
        "AND ((o.status = 'pending' AND (o.next_retry_at IS NULL OR o.next_retry_at <= clock.at)) "
        "OR (o.status = 'processing' AND o.lease_expires_at < clock.at)) "
        "AND (o.mental_model_id IS NULL OR NOT EXISTS (SELECT 1 FROM operations p WHERE p.bank_id = o.bank_id "
        "AND p.mental_model_id = o.mental_model_id AND p.status = 'processing' AND p.id <> o.id)) "
        "AND (o.operation_type <> 'consolidation' OR NOT EXISTS (SELECT 1 FROM operations p "
        "WHERE p.bank_id = o.bank_id AND p.operation_type = 'consolidation' AND p.status = 'processing' "
        "AND p.id <> o.id)) "
        "AND (%(lane)s::text IS NULL OR (o.operation_type = 'webhook_delivery') = (%(lane)s::text = 'deliveries')) "
        "ORDER BY (SELECT COUNT(*) FROM operations r WHERE r.status = 'processing' AND r.bank_id = o.bank_id "
        "AND r.lease_expires_at >= clock.at), "
        "(SELECT COUNT(*) FROM operations r WHERE r.status = 'processing' AND r.operation_type = o.operation_type "
        "AND r.lease_expires_at >= clock.at), "
        "CASE WHEN o.status = 'processing' THEN o.lease_expires_at ELSE COALESCE(o.next_retry_at, o.created_at) END, "
        "o.created_at, o.id LIMIT 1 FOR UPDATE OF o SKIP LOCKED) "
        "UPDATE operations SET status = 'processing', worker_id = %(worker)s, claim_token = %(token)s, "
        "lease_expires_at = clock.at + make_interval(secs => %(lease)s), updated_at = clock.at "
        "FROM candidate, clock WHERE operations.id = candidate.id RETURNING operations.*"
    ),
    # the claim fence: the last statement of every write transaction a running handler makes (store/fence.py)
    "fence_operation": (
        "UPDATE operations SET progress = COALESCE(%s::jsonb, progress) WHERE id = %s AND claim_token = %s "
        "AND status = 'processing'"
    ),
    "renew_lease": (
        "UPDATE operations SET lease_expires_at = %s, updated_at = %s WHERE id = %s AND claim_token = %s "
        "AND status = 'processing'"
    ),
    # defer / finish / retry with a token apply only while the claim holds (token NULL: unconditional)
    "defer_operation": (
        "UPDATE operations SET status = 'pending', next_retry_at = %s, updated_at = now(), worker_id = NULL, "
        "lease_expires_at = NULL, claim_token = NULL WHERE id = %s "
        "AND (%s::text IS NULL OR (claim_token = %s AND status = 'processing'))"
    ),
    # "truthy" as the SQLite store reads it: present and not null, false, 0 or ""
    "list_models_with_trigger": (
        "SELECT * FROM mental_models WHERE trigger -> %s::text IS NOT NULL "
        "AND trigger -> %s::text NOT IN ('null'::jsonb, 'false'::jsonb, '0'::jsonb, '\"\"'::jsonb) "
        "AND (%s::text IS NULL OR bank_id = %s::text) "
        'ORDER BY created_at, bank_id COLLATE "C", id COLLATE "C"'
    ),
    "finish_operation": (
        "UPDATE operations SET status = %s, result = %s, error = %s, updated_at = now(), completed_at = now(), "
        "lease_expires_at = NULL, claim_token = NULL WHERE id = %s "
        "AND (%s::text IS NULL OR (claim_token = %s AND status = 'processing'))"
    ),
    "retry_operation": (
        "UPDATE operations SET status = 'pending', retry_count = retry_count + 1, next_retry_at = %s, error = %s, "
        "updated_at = now(), worker_id = NULL, lease_expires_at = NULL, claim_token = NULL WHERE id = %s "
        "AND (%s::text IS NULL OR (claim_token = %s AND status = 'processing'))"
    ),
    # ---------------------------------------------------------------- reflect expand / LLM tracing
    "memory_sources": (
        "SELECT m.id, m.document_id, m.chunk_id, c.text AS chunk_text, c.chunk_index, d.original_text "
        "FROM memory_units m "
        "LEFT JOIN chunks c ON c.id = m.chunk_id AND c.bank_id = m.bank_id "
        "LEFT JOIN documents d ON d.bank_id = m.bank_id AND d.id = m.document_id "
        "WHERE m.bank_id = %s AND m.id = ANY(%s::text[])"
    ),
    "memory_chunk_sources": (
        "SELECT m.id, m.document_id, m.chunk_id, c.text AS chunk_text, c.chunk_index, NULL AS original_text "
        "FROM memory_units m "
        "LEFT JOIN chunks c ON c.id = m.chunk_id AND c.bank_id = m.bank_id "
        "WHERE m.bank_id = %s AND m.id = ANY(%s::text[])"
    ),
    "insert_llm_request": (
        "INSERT INTO llm_requests (id, bank_id, operation_id, scope, provider, model, attempt, request, response, "
        "error, input_tokens, output_tokens, duration_ms, created_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    "list_llm_requests": (
        "SELECT * FROM llm_requests WHERE bank_id = %s AND operation_id = %s "
        'ORDER BY created_at, id COLLATE "C" LIMIT %s'
    ),
    "purge_llm_requests": "DELETE FROM llm_requests WHERE created_at < %s",
    # ---------------------------------------------------------------- scoped API keys (store/api_keys.py)
    "insert_api_key": (
        "INSERT INTO api_keys (id, name, banks, read_only, secret_hash, created_at) VALUES (%s, %s, %s, %s, %s, %s)"
    ),
    "get_api_key": "SELECT * FROM api_keys WHERE id = %s",
    "list_api_keys": "SELECT * FROM api_keys ORDER BY created_at, id",
    "revoke_api_key": "UPDATE api_keys SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
    # ---------------------------------------------------------------- introspection
    # worker heartbeats are process liveness, not data: a running worker writes them whatever a request does
    "list_tables": (
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
        "AND table_type = 'BASE TABLE' AND table_name != 'worker_heartbeats' ORDER BY table_name"
    ),
}
# documents, directives, webhooks, operation administration, LLM request log, heartbeats: resource_queries.py
Q.update(RESOURCE_Q)
# bank transfer (snapshots, imports) and stored files: transfer_queries.py
Q.update(TRANSFER_Q)
# consolidation (pending facts, observations, neighbours): consolidation_queries.py
Q.update(CONSOLIDATION_Q)

HISTORY_KIND = {
    True: "content->>'kind' = 'refresh_failed'",
    False: "content->>'kind' IS NULL",
}


def tag_list(values: Sequence[str]) -> list[str]:
    """Canonical stored form of a tag list (sorted, de-duplicated), as a list psycopg adapts to ``text[]``."""
    return sorted(set(values))


def tags_clause(alias: str, wanted: Sequence[str], mode: str) -> tuple[str | None, list[Any]]:
    """One tag filter as SQL (None = no constraint), per the truth table of :mod:`mindbank.domain.tags`.

    Tags are stored sorted and de-duplicated, so ``exact`` is plain array equality (empty wanted = untagged only);
    ``&&`` (overlap) and ``@>`` (contains) are served by the GIN index on ``tags``.
    Raises ``ValueError`` for an unknown mode.
    """
    if mode not in TAGS_MATCH_MODES:
        raise ValueError(f"unknown tags_match mode: {mode!r}")
    want = tag_list(wanted)
    if mode == "exact":
        return f"{alias}.tags = %s::text[]", [want]
    if not want:
        return None, []
    hit = f"{alias}.tags && %s::text[]" if mode.startswith("any") else f"{alias}.tags @> %s::text[]"
    if mode.endswith("strict"):
        return f"({alias}.tags <> '{{}}' AND {hit})", [want]
    return f"({alias}.tags = '{{}}' OR {hit})", [want]


def group_clause(alias: str, group: dict[str, Any]) -> tuple[str, list[Any]]:
    """A (validated) tag group — ``{"and": [...]}``, ``{"or": [...]}``, ``{"not": g}`` or a leaf
    ``{"tags": [...], "match": mode}`` — as SQL. Empty ``and`` is true and empty ``or`` false, like numpy's
    ``logical_and.reduce([])`` / ``logical_or.reduce([])`` in the in-process index."""
    if "and" in group or "or" in group:
        op = "and" if "and" in group else "or"
        parts = [group_clause(alias, g) for g in group[op]]
        if not parts:
            return ("TRUE" if op == "and" else "FALSE"), []
        return "(" + f" {op.upper()} ".join(p for p, _ in parts) + ")", [x for _, ps in parts for x in ps]
    if "not" in group:
        inner, params = group_clause(alias, group["not"])
        return f"(NOT {inner})", params
    clause, params = tags_clause(alias, group["tags"], group["match"])
    return clause or "TRUE", params


def filter_sql(flt: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """Compile a :class:`MemoryFilter` to a SQL predicate over ``alias`` and its parameters.

    Same semantics as the SQLite store's ``filter_sql``: fact types, ``updated_before`` (inclusive),
    ``updated_after`` (exclusive), the flat tag filter and every tag group AND-ed together.
    """
    clauses: list[str] = []
    params: list[Any] = []
    if flt.fact_types is not None:
        clauses.append(f"{alias}.fact_type = ANY(%s::text[])")
        params.append(list(flt.fact_types))
    if flt.updated_before is not None:
        clauses.append(f"{alias}.updated_at <= %s")
        params.append(flt.updated_before)
    if flt.updated_after is not None:
        clauses.append(f"{alias}.updated_at > %s")
        params.append(flt.updated_after)
    clause, p = tags_clause(alias, flt.tags, flt.tags_match)
    if clause is not None:
        clauses.append(clause)
        params.extend(p)
    for group in flt.groups:
        clause, p = group_clause(alias, group)
        clauses.append(clause)
        params.extend(p)
    return (" AND ".join(clauses) or "TRUE"), params


_WORD = re.compile(r"[^\W_]+")


def tsquery(terms: Sequence[str]) -> str | None:
    """A ``to_tsquery`` input that matches any of ``terms`` (None when no term has a word in it).

    Each term becomes a phrase of its words (``a <-> b``, like an FTS5 quoted phrase) and the phrases are OR-ed.
    Only letters and digits survive, so no tsquery operator, quote or backslash can reach the parser.
    """
    phrases = []
    for term in terms:
        words = _WORD.findall(term)
        if words:
            phrases.append("(" + " <-> ".join(words) + ")")
    return " | ".join(phrases) if phrases else None


def like_pattern(pattern: str) -> str:
    """A case-folded ``LIKE`` pattern (escape ``\\``) for a tag search: ``*`` is the only wildcard; no ``*`` means
    substring match. Mirrors the SQLite store's GLOB translation."""
    glob = pattern.lower() if "*" in pattern else f"*{pattern.lower()}*"
    escaped = glob.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%")


def substring_pattern(query: str) -> str:
    """An ``ILIKE`` pattern (escape ``\\``) that finds ``query`` anywhere in the text."""
    return "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
