-- Scoped API keys (docs/security.md): created and revoked with the admin key (MINDBANK_API_KEY). The secret is
-- never stored: secret_hash is the SHA-256 hex digest of the whole token. banks is a JSON array of bank ids and
-- prefixes ending in '*'. A revoked key keeps its row (revoked_at set) so listings show what existed.

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    name TEXT,
    banks TEXT NOT NULL,                   -- JSON array
    read_only INTEGER NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
