"""Size limits and their validated types, one definition each for every surface (HTTP, MCP, CLI, in-process).

``max_tokens`` of a mental model: the reference accepts 256–8192 tokens and defaults to 2048 (spec "Create a Mental
Model"). :data:`MaxTokens` carries the range as pydantic constraints so request models and MCP tool signatures
publish it in their schemas; :func:`check_max_tokens` applies the same rule to in-process calls.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

from mindbank.errors import InvalidInputError

MIN_MAX_TOKENS, MAX_MAX_TOKENS, DEFAULT_MAX_TOKENS = 256, 8192, 2048
MODEL_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*$")

MaxTokens = Annotated[
    int,
    Field(ge=MIN_MAX_TOKENS, le=MAX_MAX_TOKENS, description="Document size target in tokens (256-8192)."),
]


def check_max_tokens(value: int, field: str = "max_tokens") -> int:
    """``value`` when it is a document budget the spec allows; raises :class:`InvalidInputError` naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_MAX_TOKENS <= value <= MAX_MAX_TOKENS:
        raise InvalidInputError(field, f"must be an integer between {MIN_MAX_TOKENS} and {MAX_MAX_TOKENS}")
    return value
