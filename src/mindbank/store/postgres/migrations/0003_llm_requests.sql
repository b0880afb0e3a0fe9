-- LLM request tracing (MINDBANK_LLM_TRACE_ENABLED, off by default): one row per LLM attempt with the request as sent
-- (messages, tool names, schema; never a credential), the response or the error, and tokens. Purged after
-- MINDBANK_LLM_TRACE_RETENTION_HOURS. No foreign key to banks: retain calls the LLM before its bank row exists.
-- Mirrors the SQLite migration of the same number.

CREATE TABLE llm_requests (
    id text PRIMARY KEY,
    bank_id text NOT NULL,
    operation_id text,
    scope text NOT NULL,
    provider text NOT NULL,
    model text NOT NULL,
    attempt integer NOT NULL,
    request jsonb NOT NULL,
    response jsonb,                        -- NULL when the attempt failed
    error text,
    input_tokens integer NOT NULL DEFAULT 0,
    output_tokens integer NOT NULL DEFAULT 0,
    duration_ms integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL
);
CREATE INDEX idx_llm_requests_operation ON llm_requests(bank_id, operation_id, created_at);
CREATE INDEX idx_llm_requests_created ON llm_requests(created_at);
