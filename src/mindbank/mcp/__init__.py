"""MCP surface (official ``mcp`` SDK): streamable HTTP at ``/mcp`` and ``/mcp/{bank_id}``, and stdio
(``mindbank mcp``). Tools are defined once in :mod:`mindbank.mcp.tools`."""

from mindbank.mcp.server import build_server, run_stdio
from mindbank.mcp.tools import TOOL_NAMES, parse_enabled_tools

__all__ = ["TOOL_NAMES", "build_server", "parse_enabled_tools", "run_stdio"]
