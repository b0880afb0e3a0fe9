-- Bank resources of the reference's API beyond memories and mental models: a document's change history,
-- directives, webhooks with their delivery log, and worker heartbeats (GET /health/ready).

CREATE TABLE document_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    bank_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    kind TEXT NOT NULL,                    -- retain | append | reprocess | retag | fact_edited | fact_deleted
    operation_id TEXT,
    fact_id TEXT,
    facts_added INTEGER NOT NULL DEFAULT 0,
    facts_removed INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    FOREIGN KEY (bank_id, document_id) REFERENCES documents(bank_id, id) ON DELETE CASCADE
);
CREATE INDEX idx_document_events ON document_events(bank_id, document_id, created_at DESC, id DESC);

CREATE TABLE directives (
    bank_id TEXT NOT NULL REFERENCES banks(bank_id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    content TEXT NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    is_active INTEGER NOT NULL DEFAULT 1,
    tags TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (bank_id, id)
);

CREATE TABLE webhooks (
    bank_id TEXT NOT NULL REFERENCES banks(bank_id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    url TEXT NOT NULL,
    secret TEXT,
    event_types TEXT NOT NULL DEFAULT '[]',
    enabled INTEGER NOT NULL DEFAULT 1,
    http_config TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (bank_id, id)
);

-- one row per (event, webhook); the worker operation operation_id delivers it
CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    bank_id TEXT NOT NULL,
    webhook_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    url TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    operation_id TEXT,
    next_retry_at TEXT,
    last_error TEXT,
    last_response_status INTEGER,
    last_response_body TEXT,
    last_attempt_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    FOREIGN KEY (bank_id, webhook_id) REFERENCES webhooks(bank_id, id) ON DELETE CASCADE
);
CREATE INDEX idx_webhook_deliveries ON webhook_deliveries(bank_id, webhook_id, created_at DESC, id DESC);

CREATE TABLE worker_heartbeats (
    worker_id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL
);

-- GET /documents pages by write (or creation) time
CREATE INDEX idx_documents_updated ON documents(bank_id, updated_at);
CREATE INDEX idx_documents_created ON documents(bank_id, created_at);
-- operation counts by type and status (GET /metrics) and the oldest pending operation
CREATE INDEX idx_operations_status_type ON operations(status, operation_type);
-- a bank's traced LLM requests, newest first (GET /llm-requests)
CREATE INDEX idx_llm_requests_bank ON llm_requests(bank_id, created_at);
