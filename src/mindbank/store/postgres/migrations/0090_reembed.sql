-- Re-embedding a bank with another model: the staging area of the operation that moves it. Each row is one memory's
-- vector under the target model, computed from the text the memory had then (a memory edited afterwards no longer
-- matches and is embedded again). Recall keeps reading memory_units.embedding (the bank's recorded model) until the
-- commit, one transaction that copies every staged vector into memory_units, records the target model in
-- bank_embedding_models and empties the bank's staging rows. The database has one vector width, so the target model
-- has the same dimension as the models before it.
CREATE TABLE reembed_vectors (
    memory_id TEXT PRIMARY KEY REFERENCES memory_units(id) ON DELETE CASCADE,
    bank_id TEXT NOT NULL REFERENCES banks(bank_id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    embedding vector({dimension}) NOT NULL
);
CREATE INDEX idx_reembed_vectors_bank ON reembed_vectors(bank_id, model);
