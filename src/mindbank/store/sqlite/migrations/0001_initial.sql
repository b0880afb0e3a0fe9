-- mindbank schema v1 (SQLite). Times are fixed-width ISO-8601 UTC strings (sortable); JSON columns are text.

CREATE TABLE banks (
    bank_id TEXT PRIMARY KEY,
    name TEXT,
    config TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- newest memory write stamp (insert, edit, delete); memory stamps are strictly increasing per bank
    last_memory_write_at TEXT,
    -- bumped by every memory write; lets an in-process vector index detect writes from other processes
    memory_version INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE documents (
    bank_id TEXT NOT NULL REFERENCES banks(bank_id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    original_text TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    metadata TEXT NOT NULL DEFAULT '{}',
    context TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (bank_id, id)
);

CREATE TABLE chunks (
    id TEXT PRIMARY KEY,
    bank_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    text TEXT NOT NULL,
    FOREIGN KEY (bank_id, document_id) REFERENCES documents(bank_id, id) ON DELETE CASCADE
);
CREATE INDEX idx_chunks_document ON chunks(bank_id, document_id);

CREATE TABLE memory_units (
    seq INTEGER PRIMARY KEY,               -- stable rowid for the FTS index
    id TEXT NOT NULL UNIQUE,
    bank_id TEXT NOT NULL REFERENCES banks(bank_id) ON DELETE CASCADE,
    document_id TEXT,
    chunk_id TEXT,
    text TEXT NOT NULL,
    fact_type TEXT NOT NULL CHECK (fact_type IN ('world', 'experience', 'observation')),
    tags TEXT NOT NULL DEFAULT '[]',       -- sorted, de-duplicated JSON array
    context TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    occurred_start TEXT,
    occurred_end TEXT,
    mentioned_at TEXT,
    embedding BLOB NOT NULL,               -- float32 little-endian, L2-normalised
    source_memory_ids TEXT,                -- observations: JSON array of fact ids
    proof_count INTEGER,
    consolidated_at TEXT,                  -- bookkeeping only: never counts as a write
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_memory_units_bank_updated ON memory_units(bank_id, updated_at);
CREATE INDEX idx_memory_units_document ON memory_units(bank_id, document_id);

CREATE VIRTUAL TABLE memory_fts USING fts5(
    text, content='memory_units', content_rowid='seq', tokenize='porter unicode61'
);
CREATE TRIGGER memory_units_ai AFTER INSERT ON memory_units BEGIN
    INSERT INTO memory_fts(rowid, text) VALUES (new.seq, new.text);
END;
CREATE TRIGGER memory_units_ad AFTER DELETE ON memory_units BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, text) VALUES ('delete', old.seq, old.text);
END;
CREATE TRIGGER memory_units_au AFTER UPDATE OF text ON memory_units BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, text) VALUES ('delete', old.seq, old.text);
    INSERT INTO memory_fts(rowid, text) VALUES (new.seq, new.text);
END;

CREATE TABLE mental_models (
    bank_id TEXT NOT NULL REFERENCES banks(bank_id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    source_query TEXT NOT NULL,
    content TEXT NOT NULL DEFAULT '',
    structured_document TEXT,              -- authoritative document (JSON); content is its render
    reflect_response TEXT,                 -- JSON
    tags TEXT NOT NULL DEFAULT '[]',
    max_tokens INTEGER NOT NULL DEFAULT 2048,
    trigger TEXT NOT NULL,                 -- JSON, every trigger field stored
    last_refreshed_at TEXT NOT NULL,
    last_memory_seen_at TEXT,
    last_refreshed_source_query TEXT,
    last_refresh_failed_at TEXT,
    last_full_refreshed_at TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (bank_id, id)
);
CREATE INDEX idx_mental_models_order ON mental_models(bank_id, last_refreshed_at DESC, id DESC);

CREATE TABLE mental_model_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    bank_id TEXT NOT NULL,
    mental_model_id TEXT NOT NULL,
    content TEXT NOT NULL,                 -- JSON: version snapshot or failure record
    changed_at TEXT NOT NULL,
    FOREIGN KEY (bank_id, mental_model_id) REFERENCES mental_models(bank_id, id) ON DELETE CASCADE
);
CREATE INDEX idx_mm_history ON mental_model_history(bank_id, mental_model_id, changed_at DESC, id DESC);

CREATE TABLE operations (
    id TEXT PRIMARY KEY,
    bank_id TEXT NOT NULL,
    operation_type TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'cancelled')),
    payload TEXT NOT NULL DEFAULT '{}',
    result TEXT,
    error TEXT,
    retry_count INTEGER NOT NULL DEFAULT 0,
    next_retry_at TEXT,
    mental_model_id TEXT,
    worker_id TEXT,
    lease_expires_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    completed_at TEXT
);
CREATE INDEX idx_operations_claim ON operations(status, next_retry_at, created_at);
CREATE INDEX idx_operations_bank ON operations(bank_id, created_at DESC);
CREATE INDEX idx_operations_model ON operations(bank_id, mental_model_id, status);
