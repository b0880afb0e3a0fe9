-- Stored files: the archives of bank exports (fetched from GET /v1/default/files/download/{key}) and uploaded
-- archives waiting for their import operation. Kept in the database, in chunks, so every process sharing it (API
-- and workers on other machines) reads the same files, and a file of any size is written and streamed in pieces.
-- No foreign key to banks: the backup of a deleted bank stays downloadable until it expires.
-- Mirrors the SQLite migration of the same number.

CREATE TABLE file_storage (
    key text PRIMARY KEY,
    bank_id text NOT NULL,
    filename text NOT NULL,
    content_type text NOT NULL,
    byte_size bigint NOT NULL,
    chunk_count integer NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX idx_file_storage_created ON file_storage(created_at);

CREATE TABLE file_storage_chunks (
    key text NOT NULL REFERENCES file_storage(key) ON DELETE CASCADE,
    seq integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (key, seq)
);
