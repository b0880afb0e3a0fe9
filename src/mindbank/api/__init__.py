"""The HTTP API: FastAPI routers (``routes/``), request bodies (``schemas.py``), error mapping and the API-key
guard. The application with MCP and the worker is ``mindbank.server.create_app``."""
