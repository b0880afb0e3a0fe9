"""Operations: submission (once, coalesced), claims with leases, fencing, renewal, deferral, finishing and retries."""

from __future__ import annotations

# when a pending refresh was asked for: its latest manual request or its creation, or, parked or retried, the moment
# it became due
_ASKED = "GREATEST(COALESCE((o.payload->>'requested_at')::timestamptz, o.created_at), o.next_retry_at)"

OPERATION_Q: dict[str, str] = {
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
    "coalesce_operation": "UPDATE operations SET payload = %s, next_retry_at = %s, updated_at = now() WHERE id = %s",
    "count_operations": "SELECT COUNT(*) AS n FROM operations WHERE bank_id = %s{where}",
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
    # A pending refresh waits for its bank's consolidation (the observations it writes are in the model's scope: a
    # refresh running first would leave the model stale at once): it is skipped while a consolidation of its bank is
    # processing, or pending and queued at or before the refresh was asked for (its latest manual request,
    # ``requested_at``, else its creation; a parked or retried refresh: the moment it became due) — a consolidation
    # finishing earlier work counts from when that work was queued (``queued_at``) — or while a queued retain of its
    # bank asked for before it is pending or running (its facts, then their consolidation); unless it was asked for
    # longer ago than the wait bound (%(wait)s seconds), so a failing or stuck operation never holds it longer.
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
        f"AND (o.operation_type <> 'refresh_mental_model' OR o.status <> 'pending' OR {_ASKED} "
        "< clock.at - make_interval(secs => %(wait)s) OR NOT EXISTS (SELECT 1 FROM operations c "
        "WHERE c.bank_id = o.bank_id AND ((c.operation_type = 'consolidation' AND (c.status = 'processing' "
        f"OR (c.status = 'pending' AND COALESCE((c.payload->>'queued_at')::timestamptz, c.created_at) <= {_ASKED}))) "
        "OR (c.operation_type = 'batch_retain' AND c.status IN ('pending', 'processing') "
        f"AND c.created_at <= {_ASKED})))) "
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
}
