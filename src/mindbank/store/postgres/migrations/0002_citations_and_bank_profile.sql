-- Per-model provenance index (which memories a model's document cites) so a page of models can learn in one query
-- whether any cited memory was deleted; and the bank profile fields of the reference's bank API.
-- Mirrors the SQLite migration of the same number.

CREATE TABLE mental_model_citations (
    bank_id text NOT NULL,
    mental_model_id text NOT NULL,
    memory_id text NOT NULL,
    PRIMARY KEY (bank_id, mental_model_id, memory_id),
    FOREIGN KEY (bank_id, mental_model_id) REFERENCES mental_models(bank_id, id) ON DELETE CASCADE
);
CREATE INDEX idx_mm_citations_memory ON mental_model_citations(bank_id, memory_id);

ALTER TABLE banks ADD COLUMN mission text;
ALTER TABLE banks ADD COLUMN disposition jsonb;

-- set by `clear`: the model counts as stale (against any in-scope memory) until its next completed refresh
ALTER TABLE mental_models ADD COLUMN cleared_at timestamptz;
