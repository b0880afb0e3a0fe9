"""Adapters to the outside world behind ports: embeddings (and, later, LLMs)."""
