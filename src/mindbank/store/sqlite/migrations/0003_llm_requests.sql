-- LLM request tracing (MINDBANK_LLM_TRACE_ENABLED, off by default): one row per LLM attempt with the request as sent
-- (messages, tool names, schema; never a credential), the response or the error, and tokens. Purged after
-- MINDBANK_LLM_TRACE_RETENTION_HOURS. No foreign key to banks: retain calls the LLM before its bank row exists.

CREATE TABLE llm_requests (
    id TEXT PRIMARY KEY,
    bank_id TEXT NOT NULL,
    operation_id TEXT,
    scope TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    request TEXT NOT NULL,                 -- JSON
    response TEXT,                         -- JSON; NULL when the attempt failed
    error TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    duration_ms INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_llm_requests_operation ON llm_requests(bank_id, operation_id, created_at);
CREATE INDEX idx_llm_requests_created ON llm_requests(created_at);
