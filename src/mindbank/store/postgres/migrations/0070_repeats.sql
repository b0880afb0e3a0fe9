-- Repeats: a fact retained again (same text, speaker, type and tags, from an item without a document_id)
-- is one fact with a mention count and the time it was last mentioned, found by its repeat key (a SHA-256 of the
-- normalised statement: domain/repeats.py). Only facts of items without a document_id carry a key.
-- Consolidation reads its pending facts through a partial index, and already consolidated facts as neighbours.
-- A document re-retained with the same content and new tags, metadata, context or time is updated in place: its
-- history gains document_events.kind 'update'.
-- Mirrors the SQLite migration of the same number.

ALTER TABLE memory_units ADD COLUMN mention_count integer NOT NULL DEFAULT 1;
ALTER TABLE memory_units ADD COLUMN last_mentioned_at timestamptz;   -- NULL until the first repeat
ALTER TABLE memory_units ADD COLUMN repeat_key text;
CREATE INDEX idx_memory_units_repeat ON memory_units(bank_id, repeat_key) WHERE repeat_key IS NOT NULL;
CREATE INDEX idx_memory_units_pending ON memory_units(bank_id, seq)
    WHERE fact_type <> 'observation' AND consolidated_at IS NULL;
