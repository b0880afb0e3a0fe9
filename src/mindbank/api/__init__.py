"""HTTP API (FastAPI), wire-compatible with the reference under ``/v1/default/banks/{bank_id}``."""

from mindbank.api.app import create_app

__all__ = ["create_app"]
