"""The API key an OpenAI-SDK client is built with, for the LLM and the embedding providers alike."""

from __future__ import annotations

import os

NO_KEY = "not-needed"  # local OpenAI-compatible servers ignore the key, but the SDK insists on one


def openai_key(api_key: str | None, base_url: str | None, *, setting: str) -> str:
    """``api_key``, else ``OPENAI_API_KEY``, else :data:`NO_KEY` for a local server named by ``base_url``.

    Raises ``ValueError`` naming ``MINDBANK_{setting}_API_KEY`` when the public OpenAI endpoint would get no key."""
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if not base_url:
        raise ValueError(
            f"the openai provider needs MINDBANK_{setting}_API_KEY (or OPENAI_API_KEY), or MINDBANK_{setting}_BASE_URL "
            "pointing at a local OpenAI-compatible server"
        )
    return NO_KEY
