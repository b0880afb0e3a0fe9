"""The embedded default backend: one SQLite file (WAL), FTS5 for BM25, an in-process exact vector index."""
