"""The neutral wire layer: response shapes (``shapes.py``) and request-item adapters (``items.py``) that the HTTP API
and MCP share. It imports only the domain."""
