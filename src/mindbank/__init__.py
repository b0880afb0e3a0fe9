"""mindbank: an agent-memory server whose headline feature is mental models.

In-process use: ``from mindbank import MindBank; bank = MindBank.open()``.
"""

from mindbank.config import Settings
from mindbank.domain.records import MemoryUnit, MentalModel, Operation, RetainItem, ScoredMemory
from mindbank.errors import ConflictError, InvalidInputError, MindBankError, NotFoundError
from mindbank.service.facade import MindBank
from mindbank.service.memories import RetainResult
from mindbank.version import __version__

__all__ = [
    "ConflictError",
    "InvalidInputError",
    "MemoryUnit",
    "MentalModel",
    "MindBank",
    "MindBankError",
    "NotFoundError",
    "Operation",
    "RetainItem",
    "RetainResult",
    "ScoredMemory",
    "Settings",
    "__version__",
]
