"""Consolidation: facts folded into observations. The port and shapes (``plan.py``), the extractive consolidator
(``extractive.py``), the LLM consolidator (``llm.py``) and the bounded round that runs either (``rounds.py``)."""
