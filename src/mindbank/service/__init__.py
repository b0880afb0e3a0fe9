"""The service layer: :class:`MindBank`, the one facade (``facade.py``), which builds a tree of resource services
(``banks``, ``memories``, ``mental_models``, ``operations``, ``reflect``, ``transfer``, ``templates``, ...) and
components (``governance``, ``jobs``, ``metrics``, ``events``) over one shared state (``core.py``) and delegates to
them; no module below it imports the facade."""

from mindbank.service.facade import MindBank
from mindbank.service.memories import RetainResult

__all__ = ["MindBank", "RetainResult"]
