-- Model identity: the embedding model (name and dimension) a bank's vectors were made with, recorded when the bank
-- first stores one. A server configured with another model refuses the bank's retains and recalls (HTTP 409) instead
-- of mixing two models' vector spaces. Banks that already hold memories were embedded by the only model that existed
-- before this record: the bundled all-MiniLM-L6-v2 (int8, 384 dimensions).
CREATE TABLE bank_embedding_models (
    bank_id TEXT PRIMARY KEY REFERENCES banks(bank_id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    recorded_at TEXT NOT NULL
);
INSERT INTO bank_embedding_models (bank_id, model, dimension, recorded_at)
SELECT b.bank_id, 'all-MiniLM-L6-v2-int8', 384, strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now') FROM banks b
WHERE EXISTS (SELECT 1 FROM memory_units m WHERE m.bank_id = b.bank_id);
