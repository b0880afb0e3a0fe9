"""Typed Python client of a mindbank server: ``Client`` (sync) and ``AsyncClient`` (asyncio), over httpx.

    from mindbank.client import Client

    with Client("http://127.0.0.1:8888") as mb:
        mb.retain("b", "Alice: I started training for the Berlin marathon.", tags=["user:alice"])
        created = mb.create_mental_model("b", "Alice", "What is Alice training for?", tags=["user:alice"])
        mb.wait("b", created.operation_id)
        print(mb.get_mental_model("b", created.mental_model_id).content)

Every response is a pydantic model (:mod:`mindbank.client.models`); an error answer raises
:class:`MindBankHTTPError` with the status and the server's message.
"""

from mindbank.client._client import DEFAULT_URL, AsyncClient, Client
from mindbank.client.errors import MindBankClientError, MindBankConnectionError, MindBankHTTPError
from mindbank.client.models import (
    BankConfig,
    BankList,
    BankStats,
    CancelResponse,
    CitedBy,
    CitingModel,
    CreateKnowledgePageResponse,
    CreateMentalModelResponse,
    DeleteNodeResponse,
    DryRunResult,
    HistoryEntry,
    KnowledgeBundle,
    KnowledgeNode,
    KnowledgePage,
    KnowledgeSearchResponse,
    KnowledgeTree,
    MentalModel,
    MentalModelList,
    Operation,
    OperationList,
    RecallResponse,
    RecallResult,
    ReflectResponse,
    RefreshResponse,
    RetainResponse,
    StatusResponse,
    TagList,
    TemplateImportResult,
    TransferSubmitted,
)

__all__ = [
    "DEFAULT_URL",
    "AsyncClient",
    "BankConfig",
    "BankList",
    "BankStats",
    "CancelResponse",
    "CitedBy",
    "CitingModel",
    "Client",
    "CreateKnowledgePageResponse",
    "CreateMentalModelResponse",
    "DeleteNodeResponse",
    "DryRunResult",
    "HistoryEntry",
    "KnowledgeBundle",
    "KnowledgeNode",
    "KnowledgePage",
    "KnowledgeSearchResponse",
    "KnowledgeTree",
    "MentalModel",
    "MentalModelList",
    "MindBankClientError",
    "MindBankConnectionError",
    "MindBankHTTPError",
    "Operation",
    "OperationList",
    "RecallResponse",
    "RecallResult",
    "ReflectResponse",
    "RefreshResponse",
    "RetainResponse",
    "StatusResponse",
    "TagList",
    "TemplateImportResult",
    "TransferSubmitted",
]
