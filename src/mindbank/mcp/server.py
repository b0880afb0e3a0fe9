"""Build an MCP server (official ``mcp`` SDK, ``MCPServer``) over a MindBank, and run it over stdio."""

from __future__ import annotations

from collections.abc import Callable, Collection

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from mindbank.mcp.tools import FAMILIES, MULTI_BANK_ONLY
from mindbank.mcp.wrap import as_tool, reflect_available
from mindbank.service.facade import MindBank
from mindbank.version import __version__

INSTRUCTIONS = (
    "mindbank is a long-term memory. Store facts with retain, search them with recall. Mental models are curated, "
    "cited answers to standing questions that mindbank keeps up to date: read them with list_mental_models and "
    "get_mental_model (is_stale says whether newer memories exist), create them with create_mental_model, and "
    "refresh them with refresh_mental_model (a background operation: poll get_operation)."
)


def build_server(
    mb: MindBank,
    *,
    bank: str | Callable[[], str] | None = None,
    enabled_tools: Collection[str] | None = None,
) -> MCPServer:
    """An MCP server exposing ``mb``'s tools.

    ``bank``: None for a multi-bank server (every bank tool takes ``bank_id``); a bank id, or a callable returning one
    per call, for a single-bank server (no ``bank_id`` argument; ``list_banks`` is not offered). ``enabled_tools``
    limits the tools (None: all); ``reflect`` is listed only when the engine provides it.
    """
    resolve: Callable[[], str] | None
    if bank is None:
        resolve = None
    elif isinstance(bank, str):
        fixed = bank
        resolve = lambda: fixed  # noqa: E731 - a one-line resolver reads best here
    else:
        resolve = bank
    server = MCPServer(
        "mindbank",
        title="mindbank memory",
        instructions=INSTRUCTIONS,
        version=__version__,
        # the SDK calls logging.basicConfig at construction; WARNING keeps that equal to Python's default level
        log_level="WARNING",
    )
    for family in FAMILIES:
        tools = family(mb)
        for name in family.TOOLS:
            if enabled_tools is not None and name not in enabled_tools:
                continue
            if resolve is not None and name in MULTI_BANK_ONLY:
                continue
            if name == "reflect" and not reflect_available(mb):
                continue
            reads = name in family.READS
            fn = as_tool(getattr(tools, name), resolve, reads=reads)
            # readOnlyHint tells a client which tools a read-only API key may call (the others answer "read-only")
            hints = ToolAnnotations(read_only_hint=reads, destructive_hint=name.startswith(("delete", "clear")) or None)
            server.add_tool(fn, name=name, description=fn.__doc__, annotations=hints, structured_output=True)
    return server


def run_stdio(mb: MindBank, *, bank: str | None = None, enabled_tools: Collection[str] | None = None) -> None:
    """Serve MCP over stdin/stdout until the client closes the stream; the worker runs refreshes meanwhile."""
    server = build_server(mb, bank=bank, enabled_tools=enabled_tools)
    mb.start_worker()
    try:
        server.run("stdio")
    finally:
        mb.close()
