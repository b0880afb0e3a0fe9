"""Turning a tool method into what the MCP SDK registers: domain and validation errors become MCP tool errors, and
a single-bank server's tools lose their ``bank_id`` argument."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from mindbank.errors import MindBankError
from mindbank.mcp.tools.common import validation_message
from mindbank.service import MindBank


def llm_errors() -> tuple[type[BaseException], ...]:
    """The LLM port's error class, when the LLM providers are installed (imported late: optional layer)."""
    try:
        from mindbank.providers.llm.base import LLMError
    except ImportError:  # pragma: no cover - providers absent
        return ()
    return (LLMError,)


def reflect_available(mb: MindBank) -> bool:
    """Whether the engine offers reflect (it arrives with the LLM/agent work; until then the tool is not listed)."""
    return callable(getattr(mb, "reflect", None))


def as_tool(fn: Callable[..., dict[str, Any]], bank: Callable[[], str] | None) -> Callable[..., dict[str, Any]]:
    """A tool function for ``fn``: domain and validation errors become MCP tool errors (message kept); with
    ``bank`` the ``bank_id`` parameter disappears from the signature and is filled from ``bank()`` on each call.

    The SDK builds the input schema from ``__signature__``, so the wrapper carries an evaluated copy of ``fn``'s.
    """
    from mcp.server.mcpserver.exceptions import ToolError

    sig = inspect.signature(fn, eval_str=True)
    takes_bank = "bank_id" in sig.parameters
    params = [p for p in sig.parameters.values() if not (bank is not None and p.name == "bank_id")]

    def tool(*args: Any, **kwargs: Any) -> dict[str, Any]:
        if bank is not None and takes_bank:
            kwargs["bank_id"] = bank()
        try:
            return fn(*args, **kwargs)
        except ValidationError as exc:  # a trigger breaking a rule: report every offending field
            raise ToolError(validation_message(exc)) from exc
        except (MindBankError, ValueError) as exc:  # not found, conflict, invalid input, unparseable timestamp
            raise ToolError(str(exc)) from exc
        except llm_errors() as exc:  # a configured LLM failing (reflect): the agent should know why
            raise ToolError(f"the LLM failed: {exc}") from exc

    tool.__name__ = fn.__name__
    tool.__qualname__ = fn.__name__
    tool.__doc__ = inspect.cleandoc(fn.__doc__ or "")
    tool.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in params} | {"return": sig.return_annotation}
    return tool
