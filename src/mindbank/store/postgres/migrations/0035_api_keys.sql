-- Scoped API keys (docs/security.md): created and revoked with the admin key (MINDBANK_API_KEY). The secret is
-- never stored: secret_hash is the SHA-256 hex digest of the whole token. banks is a JSON array of bank ids and
-- prefixes ending in '*'. A revoked key keeps its row (revoked_at set) so listings show what existed.
-- Mirrors the SQLite migration of the same number.

CREATE TABLE api_keys (
    id text PRIMARY KEY,
    name text,
    banks jsonb NOT NULL,
    read_only boolean NOT NULL,
    secret_hash text NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);
