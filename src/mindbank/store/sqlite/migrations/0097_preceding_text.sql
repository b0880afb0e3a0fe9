-- The lexical index gains a second field: the text said just before a memory in the same context (the memories at
-- the nearest earlier moment of that conversation session; observations neither have nor lend one). BM25 weighs it
-- at 0.3 of the memory's own text, so a reply is found by the words of the turn it answers ("What did you paint?"
-- -> "A sunset over the lake"). The column is kept by every write (the store sets it for new memories and for the
-- memories said right after them); here it is filled for the memories already stored and the index is rebuilt.
DROP TRIGGER IF EXISTS memory_units_ai;
DROP TRIGGER IF EXISTS memory_units_ad;
DROP TRIGGER IF EXISTS memory_units_au;
DROP TABLE IF EXISTS memory_fts_vocab;
DROP TABLE IF EXISTS memory_fts;
ALTER TABLE memory_units ADD COLUMN preceding_text TEXT;
UPDATE memory_units SET preceding_text = (
    SELECT group_concat(p.text, ' ') FROM memory_units p
    WHERE p.bank_id = memory_units.bank_id AND p.context = memory_units.context AND p.fact_type <> 'observation'
      AND COALESCE(p.occurred_start, p.mentioned_at) = (
        SELECT MAX(COALESCE(x.occurred_start, x.mentioned_at)) FROM memory_units x
        WHERE x.bank_id = memory_units.bank_id AND x.context = memory_units.context
          AND x.fact_type <> 'observation'
          AND COALESCE(x.occurred_start, x.mentioned_at)
              < COALESCE(memory_units.occurred_start, memory_units.mentioned_at)))
WHERE context IS NOT NULL AND fact_type <> 'observation';
CREATE VIRTUAL TABLE memory_fts USING fts5(
    text, preceding_text, content='memory_units', content_rowid='seq', tokenize='porter unicode61'
);
INSERT INTO memory_fts(memory_fts) VALUES ('rebuild');
CREATE TRIGGER memory_units_ai AFTER INSERT ON memory_units BEGIN
    INSERT INTO memory_fts(rowid, text, preceding_text) VALUES (new.seq, new.text, new.preceding_text);
END;
CREATE TRIGGER memory_units_ad AFTER DELETE ON memory_units BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, text, preceding_text)
    VALUES ('delete', old.seq, old.text, old.preceding_text);
END;
CREATE TRIGGER memory_units_au AFTER UPDATE OF text, preceding_text ON memory_units BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, text, preceding_text)
    VALUES ('delete', old.seq, old.text, old.preceding_text);
    INSERT INTO memory_fts(rowid, text, preceding_text) VALUES (new.seq, new.text, new.preceding_text);
END;
CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab(memory_fts, 'row');
