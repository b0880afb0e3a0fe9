"""PostgreSQL (+pgvector) backend of the Store port: the scale-out system of record.

Import :class:`mindbank.store.postgres.store.PostgresStore` lazily (``open_store`` does): it needs the optional
``postgres`` extra (psycopg 3, psycopg-pool, pgvector).
"""
