"""The MCP tools, one family per module (``memories``, ``banks``, ``mental_models``, ``operations``,
``knowledge_base``), each a :class:`~mindbank.mcp.tools.common.ToolFamily`. Every tool is written once with a
required keyword-only ``bank_id``; ``mcp/server.py`` registers it as is for a multi-bank server or, for a single-bank
server, without ``bank_id`` (``mcp/wrap.py``). Return shapes follow the reference's MCP tools (reference facts §9)
and reuse ``mindbank.wire``, so a model, an operation or a recall hit looks the same over HTTP and MCP. Docstrings are
the tool descriptions an agent reads. A new family: a module here and one entry in :data:`FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Collection

from mindbank.mcp.tools.banks import BankTools
from mindbank.mcp.tools.common import ToolFamily, ToolInputError
from mindbank.mcp.tools.curation import CurationTools
from mindbank.mcp.tools.directives import DirectiveTools
from mindbank.mcp.tools.documents import DocumentTools
from mindbank.mcp.tools.knowledge_base import KnowledgeBaseTools
from mindbank.mcp.tools.memories import MemoryTools
from mindbank.mcp.tools.mental_models import MentalModelTools
from mindbank.mcp.tools.operations import OperationTools

FAMILIES: tuple[type[ToolFamily], ...] = (
    MemoryTools, BankTools, MentalModelTools, OperationTools, DocumentTools, DirectiveTools, KnowledgeBaseTools,
    CurationTools,
)  # fmt: skip

# Every tool name, in the order tools are listed; MINDBANK_MCP_ENABLED_TOOLS picks from these.
TOOL_NAMES: tuple[str, ...] = tuple(name for family in FAMILIES for name in family.TOOLS)
# Tools about the server rather than one bank: absent from single-bank servers.
MULTI_BANK_ONLY = frozenset({"list_banks"})

__all__ = ["FAMILIES", "MULTI_BANK_ONLY", "TOOL_NAMES", "ToolInputError", "parse_enabled_tools"]


def parse_enabled_tools(raw: str | Collection[str] | None) -> frozenset[str] | None:
    """``MINDBANK_MCP_ENABLED_TOOLS`` (comma list or names) as a set; None (all tools) when empty.

    Raises ``ValueError`` naming unknown tools, so a typo fails at start-up instead of silently hiding a tool.
    """
    names = [n.strip() for n in (raw.split(",") if isinstance(raw, str) else raw or ()) if n.strip()]
    if not names:
        return None
    unknown = sorted(set(names) - set(TOOL_NAMES))
    if unknown:
        raise ValueError(
            f"MINDBANK_MCP_ENABLED_TOOLS: unknown tool(s) {', '.join(unknown)}; known: {', '.join(TOOL_NAMES)}"
        )
    return frozenset(names)
