"""Storage port (``base.py``) and backends (``sqlite/``, ``postgres/``). ``open.open_store(url)`` picks the backend
from a database URL."""
