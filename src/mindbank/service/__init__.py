"""The service layer: :class:`MindBank`, the one facade (``facade.py``), composed from resource modules (``banks``,
``memories``, ``mental_models``, ``operations``, ``reflect``, ``transfer``, ``templates``) over a shared core
(``core.py``), with ``jobs.py`` for what the worker and scheduler run and ``tracing.py`` for LLM request tracing."""

from mindbank.service.facade import MindBank
from mindbank.service.memories import RetainResult

__all__ = ["MindBank", "RetainResult"]
