-- Any embedding width per database, one per bank: a bank moves to a model of another width by a re-embedding, while
-- the other banks keep theirs. The vector columns lose their fixed width (pgvector's untyped `vector`); each width in
-- use gets its own partial HNSW index over the column cast to that width, for the rows of that width only
-- (idx_memory_units_embedding_N: vector up to 2,000 dimensions, halfvec up to 4,000, none beyond). The store creates
-- the index of each width as it opens (its configured model's, and every bank's recorded model's), and the switch of
-- a re-embedding creates the target width's in its own transaction; searches name the width they ask for
-- (vector_dims(embedding) = N, embedding::vector(N)) so the planner takes that index.
-- The index a fresh database's first migration made is dropped too: on a column of that very width PostgreSQL folds
-- the cast away, and the index would lose its width with the column's.
DROP INDEX IF EXISTS idx_memory_units_embedding;
DROP INDEX IF EXISTS idx_memory_units_embedding_{dimension};
ALTER TABLE memory_units ALTER COLUMN embedding TYPE vector;
ALTER TABLE reembed_vectors ALTER COLUMN embedding TYPE vector;
{embedding_index}
