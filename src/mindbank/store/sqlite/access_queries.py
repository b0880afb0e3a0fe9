"""Scoped API keys and the LLM request log's records (written per call, read per operation, purged by age)."""

from __future__ import annotations

ACCESS_Q: dict[str, str] = {
    "insert_llm_request": (
        "INSERT INTO llm_requests (id, bank_id, operation_id, scope, provider, model, attempt, request, "
        "response, error, input_tokens, output_tokens, duration_ms, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "list_llm_requests": (
        "SELECT * FROM llm_requests WHERE bank_id = ? AND operation_id = ? ORDER BY created_at, id LIMIT ?"
    ),
    "purge_llm_requests": "DELETE FROM llm_requests WHERE created_at < ?",
    "insert_api_key": (
        "INSERT INTO api_keys (id, name, banks, read_only, secret_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)"
    ),
    "get_api_key": "SELECT * FROM api_keys WHERE id = ?",
    "list_api_keys": "SELECT * FROM api_keys ORDER BY created_at, id",
    "revoke_api_key": "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
}
