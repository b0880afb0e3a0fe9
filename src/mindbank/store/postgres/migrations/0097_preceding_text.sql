-- The lexical index gains a second field: the text said just before a memory in the same context (the memories at
-- the nearest earlier moment of that conversation session; observations neither have nor lend one). The tsvector
-- weighs the memory's own words 'A' and the preceding text's 'B', which keyword search ranks at 0.3 of 'A', so a
-- reply is found by the words of the turn it answers. The column is kept by every write (the store sets it for new
-- memories and for the memories said right after them); here it is filled for the memories already stored and the
-- generated tsvector and its index are rebuilt.
DROP INDEX IF EXISTS idx_memory_units_fts;
ALTER TABLE memory_units DROP COLUMN text_tsv;
ALTER TABLE memory_units ADD COLUMN preceding_text text;
UPDATE memory_units m SET preceding_text = (
    SELECT string_agg(p.text, ' ' ORDER BY p.seq) FROM memory_units p
    WHERE p.bank_id = m.bank_id AND p.context = m.context AND p.fact_type <> 'observation'
      AND COALESCE(p.occurred_start, p.mentioned_at) = (
        SELECT MAX(COALESCE(x.occurred_start, x.mentioned_at)) FROM memory_units x
        WHERE x.bank_id = m.bank_id AND x.context = m.context AND x.fact_type <> 'observation'
          AND COALESCE(x.occurred_start, x.mentioned_at) < COALESCE(m.occurred_start, m.mentioned_at)))
WHERE m.context IS NOT NULL AND m.fact_type <> 'observation';
ALTER TABLE memory_units ADD COLUMN text_tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', text), 'A')
    || setweight(to_tsvector('english', COALESCE(preceding_text, '')), 'B')
) STORED;
CREATE INDEX idx_memory_units_fts ON memory_units USING gin (text_tsv);
