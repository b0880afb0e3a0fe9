-- Stored files: the archives of bank exports (fetched from GET /v1/default/files/download/{key}) and uploaded
-- archives waiting for their import operation. Kept in the database, in chunks, so every process sharing it (API
-- and workers on other machines) reads the same files, and a file of any size is written and streamed in pieces.
-- No foreign key to banks: the backup of a deleted bank stays downloadable until it expires.

CREATE TABLE file_storage (
    key TEXT PRIMARY KEY,
    bank_id TEXT NOT NULL,
    filename TEXT NOT NULL,
    content_type TEXT NOT NULL,
    byte_size INTEGER NOT NULL,
    chunk_count INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_file_storage_created ON file_storage(created_at);

CREATE TABLE file_storage_chunks (
    key TEXT NOT NULL REFERENCES file_storage(key) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (key, seq)
);
