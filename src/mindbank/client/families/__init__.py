"""The client's methods, one module per family; ``Client`` and ``AsyncClient`` both inherit :class:`Families`.

A family is a class of :class:`~mindbank.client._wire.endpoint` methods, each returning the
:class:`~mindbank.client._wire.Request` it sends. A new family (knowledge base, documents, webhooks...) is a module
here and one more base of :class:`Families`; both clients then have its methods, sync and async.
"""

from mindbank.client.families.api_keys import ApiKeyMethods
from mindbank.client.families.banks import BankMethods
from mindbank.client.families.curation import CurationMethods
from mindbank.client.families.directives import DirectiveMethods
from mindbank.client.families.documents import DocumentMethods
from mindbank.client.families.knowledge_base import KnowledgeBaseMethods
from mindbank.client.families.memories import MemoryMethods
from mindbank.client.families.mental_models import MentalModelMethods
from mindbank.client.families.monitoring import MonitoringMethods
from mindbank.client.families.observations import ObservationMethods
from mindbank.client.families.operations import OperationMethods
from mindbank.client.families.transfer import TransferMethods
from mindbank.client.families.webhooks import WebhookMethods

__all__ = [
    "ApiKeyMethods", "BankMethods", "CurationMethods", "DirectiveMethods", "DocumentMethods", "Families",
    "KnowledgeBaseMethods", "MemoryMethods", "MentalModelMethods", "MonitoringMethods", "ObservationMethods",
    "OperationMethods",
    "TransferMethods", "WebhookMethods",
]  # fmt: skip


class Families(
    MemoryMethods, BankMethods, MentalModelMethods, OperationMethods, DocumentMethods, DirectiveMethods,
    WebhookMethods, MonitoringMethods, ApiKeyMethods, KnowledgeBaseMethods, TransferMethods, CurationMethods,
    ObservationMethods,
):  # fmt: skip
    """Every method family of the client (one line each)."""
