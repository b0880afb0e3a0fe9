"""Operations: submission (once, coalesced), claims with leases, fencing, renewal, deferral, finishing and retries."""

from __future__ import annotations

# when a pending refresh was asked for: its latest manual request or its creation, or, parked or retried, the moment
# it became due (ISO strings of one fixed width sort in time order)
_ASKED = (
    "MAX(COALESCE(json_extract(o.payload, '$.requested_at'), o.created_at), COALESCE(o.next_retry_at, o.created_at))"
)

OPERATION_Q: dict[str, str] = {
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
    "coalesce_operation": "UPDATE operations SET payload = ?, next_retry_at = ?, updated_at = ? WHERE id = ?",
    "count_operations": "SELECT COUNT(*) AS n FROM operations WHERE bank_id = ?{where}",
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
    # only, 'work' everything else, NULL anything.
    # A pending refresh waits for its bank's consolidation (the observations it writes are in the model's scope: a
    # refresh running first would leave the model stale at once): it is skipped while a consolidation of its bank is
    # processing, or pending and queued at or before the refresh was asked for (its latest manual request,
    # ``requested_at``, else its creation; a parked or retried refresh: the moment it became due) — a consolidation
    # finishing earlier work counts from when that work was queued (``queued_at``) — or while a queued retain of its
    # bank asked for before it is pending or running (its facts, then their consolidation); unless it was asked for
    # before :wait_from (now minus the wait bound), so a failing or stuck operation never holds it longer than that
    "claim_candidate": (
        "SELECT o.id FROM operations o WHERE ((o.status = 'pending' AND (o.next_retry_at IS NULL OR "
        "o.next_retry_at <= :now)) OR (o.status = 'processing' AND o.lease_expires_at < :now)) "
        "AND (o.mental_model_id IS NULL OR NOT EXISTS (SELECT 1 FROM operations p WHERE "
        "p.bank_id = o.bank_id AND p.mental_model_id = o.mental_model_id AND p.status = 'processing' "
        "AND p.lease_expires_at >= :now AND p.id != o.id)) "
        "AND (o.operation_type != 'consolidation' OR NOT EXISTS (SELECT 1 FROM operations p WHERE "
        "p.bank_id = o.bank_id AND p.operation_type = 'consolidation' AND p.status = 'processing' "
        "AND p.lease_expires_at >= :now AND p.id != o.id)) "
        f"AND (o.operation_type != 'refresh_mental_model' OR o.status != 'pending' OR {_ASKED} < :wait_from "
        "OR NOT EXISTS (SELECT 1 FROM operations c WHERE c.bank_id = o.bank_id AND ((c.operation_type = "
        "'consolidation' AND (c.status = 'processing' OR (c.status = 'pending' AND "
        f"COALESCE(json_extract(c.payload, '$.queued_at'), c.created_at) <= {_ASKED}))) "
        "OR (c.operation_type = 'batch_retain' AND c.status IN ('pending', 'processing') "
        f"AND c.created_at <= {_ASKED})))) "
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
}
