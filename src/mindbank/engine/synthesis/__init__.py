"""Synthesis: the port every engine implements (``port.py``), the offline extractive engine (``extractive.py`` with
its composer and editor in ``compose.py``), the LLM engine (``llm.py``) and structured-output extraction
(``structured.py``)."""
