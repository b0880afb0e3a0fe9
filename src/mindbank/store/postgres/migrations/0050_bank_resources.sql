-- Bank resources of the reference's API beyond memories and mental models: a document's change history,
-- directives, webhooks with their delivery log, and worker heartbeats (GET /health/ready). Same tables as SQLite's
-- 0050, with native types.

CREATE TABLE document_events (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bank_id text NOT NULL,
    document_id text NOT NULL,
    kind text NOT NULL,                    -- retain | append | reprocess | retag | fact_edited | fact_deleted
    operation_id text,
    fact_id text,
    facts_added integer NOT NULL DEFAULT 0,
    facts_removed integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    FOREIGN KEY (bank_id, document_id) REFERENCES documents(bank_id, id) ON DELETE CASCADE
);
CREATE INDEX idx_document_events ON document_events(bank_id, document_id, created_at DESC, id DESC);

CREATE TABLE directives (
    bank_id text NOT NULL REFERENCES banks(bank_id) ON DELETE CASCADE,
    id text NOT NULL,
    name text NOT NULL,
    content text NOT NULL,
    priority integer NOT NULL DEFAULT 0,
    is_active boolean NOT NULL DEFAULT true,
    tags text[] NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (bank_id, id)
);

CREATE TABLE webhooks (
    bank_id text NOT NULL REFERENCES banks(bank_id) ON DELETE CASCADE,
    id text NOT NULL,
    url text NOT NULL,
    secret text,
    event_types text[] NOT NULL DEFAULT '{}',
    enabled boolean NOT NULL DEFAULT true,
    http_config jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (bank_id, id)
);

-- one row per (event, webhook); the worker operation operation_id delivers it
CREATE TABLE webhook_deliveries (
    id text PRIMARY KEY,
    bank_id text NOT NULL,
    webhook_id text NOT NULL,
    event_id text NOT NULL,
    event_type text NOT NULL,
    url text NOT NULL,
    payload jsonb NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    operation_id text,
    next_retry_at timestamptz,
    last_error text,
    last_response_status integer,
    last_response_body text,
    last_attempt_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    FOREIGN KEY (bank_id, webhook_id) REFERENCES webhooks(bank_id, id) ON DELETE CASCADE
);
CREATE INDEX idx_webhook_deliveries ON webhook_deliveries(bank_id, webhook_id, created_at DESC, id DESC);

CREATE TABLE worker_heartbeats (
    worker_id text PRIMARY KEY,
    host text NOT NULL,
    pid integer NOT NULL,
    started_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
);

-- GET /documents pages by write (or creation) time
CREATE INDEX idx_documents_updated ON documents(bank_id, updated_at);
CREATE INDEX idx_documents_created ON documents(bank_id, created_at);
-- operation counts by type and status (GET /metrics) and the oldest pending operation
CREATE INDEX idx_operations_status_type ON operations(status, operation_type);
-- a bank's traced LLM requests, newest first (GET /llm-requests)
CREATE INDEX idx_llm_requests_bank ON llm_requests(bank_id, created_at);
