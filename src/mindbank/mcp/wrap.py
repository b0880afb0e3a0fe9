"""Turning a tool method into what the MCP SDK registers: domain and validation errors become MCP tool errors, a
single-bank server's tools lose their ``bank_id`` argument, and every call is checked the same way whatever the tool:
a NUL character in any argument is refused (naming it), and a scoped API key (``mcp/caller.py``) reaches only the
banks of its scopes (another bank is "not found") and, when read-only, only the tools of its family's ``READS``."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from mindbank.domain.access import check_new_bank
from mindbank.domain.limits import scan_json
from mindbank.errors import MindBankError
from mindbank.mcp.caller import current_principal
from mindbank.mcp.tools.common import ToolInputError, validation_message
from mindbank.service.facade import MindBank


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


def check_call(kwargs: dict[str, Any], *, reads: bool) -> None:
    """Refuse a call with a NUL character in an argument, an invalid bank id (the URL's included), or one a scoped
    API key may not make. Raises :class:`ToolInputError` (NUL, read-only key), :class:`InvalidInputError` (bank id)
    or :class:`NotFoundError` (a bank outside the key's scopes)."""
    problem = scan_json(kwargs)
    if problem is not None:
        raise ToolInputError(f"{'.'.join(map(str, problem[0]))}: {problem[2]}")
    caller = current_principal()
    bank_id = kwargs.get("bank_id")
    if bank_id is not None:
        check_new_bank(caller, bank_id, "bank_id")
    if caller is None or caller.admin:
        return
    if not reads and caller.read_only:
        raise ToolInputError("this API key is read-only")


def as_tool(
    fn: Callable[..., dict[str, Any]], bank: Callable[[], str] | None, *, reads: bool = False
) -> Callable[..., dict[str, Any]]:
    """A tool function for ``fn``: domain and validation errors become MCP tool errors (message kept); with
    ``bank`` the ``bank_id`` parameter disappears from the signature and is filled from ``bank()`` on each call;
    ``reads``: the tool writes nothing (read-only keys may call it); every call goes through :func:`check_call`.

    The SDK builds the input schema from ``__signature__``, so the wrapper carries an evaluated copy of ``fn``'s.
    """
    from mcp.server.mcpserver.exceptions import ToolError

    sig = inspect.signature(fn, eval_str=True)
    takes_bank = "bank_id" in sig.parameters
    params = [p for p in sig.parameters.values() if not (bank is not None and p.name == "bank_id")]

    def tool(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            if bank is not None and takes_bank:
                kwargs["bank_id"] = bank()
            check_call(kwargs, reads=reads)
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
    tool.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]  # the schema MCP derives
    tool.__annotations__ = {p.name: p.annotation for p in params} | {"return": sig.return_annotation}
    return tool
