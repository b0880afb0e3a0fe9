"""Retain: content turned into chunks and facts ready to store (``extractive.py``), with optional LLM fact
extraction (``llm.py``)."""
