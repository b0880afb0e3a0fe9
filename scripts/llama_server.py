"""llama-cpp-python's OpenAI-compatible server with mean pooling on its embedding models.

``python -m llama_cpp.server`` (0.3.x) takes ``"embedding": true`` per model in its config file but no pooling type,
and a chat model's GGUF then answers ``/v1/embeddings`` with one vector per token. This launcher gives every model
loaded with ``embedding=True`` mean pooling (one sentence vector per text) and then runs the server unchanged.
Its context holds one sequence, so send one text per request (``MINDBANK_EMBEDDING_BATCH_SIZE=1``): several texts
in one request are decoded as one batch of sequences and fail with ``llama_decode returned -1``.

    python scripts/llama_server.py --config_file llama.json

Run it with the python that has ``llama-cpp-python[server]`` (``scripts/llama.sh python``).
"""

from __future__ import annotations

import functools
from typing import Any

import llama_cpp
from llama_cpp.server.__main__ import main

_init = llama_cpp.Llama.__init__


@functools.wraps(_init)
def _with_mean_pooling(self: Any, *args: Any, **kwargs: Any) -> None:
    if kwargs.get("embedding"):
        kwargs.setdefault("pooling_type", llama_cpp.LLAMA_POOLING_TYPE_MEAN)
    _init(self, *args, **kwargs)


llama_cpp.Llama.__init__ = _with_mean_pooling  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
