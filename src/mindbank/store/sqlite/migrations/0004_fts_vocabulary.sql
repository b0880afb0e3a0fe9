-- Document frequencies of the full-text index, so keyword search can skip terms that occur in a large share of all
-- memories (they cost the most to score and weigh the least in BM25).
CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab(memory_fts, 'row');
