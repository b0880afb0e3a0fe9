"""llama-cpp-python's OpenAI-compatible server with mean pooling on its embedding models.

``python -m llama_cpp.server`` (0.3.x) takes ``"embedding": true`` per model in its config file but no pooling type,
and a chat model's GGUF then answers ``/v1/embeddings`` with one vector per token; and its context holds one sequence,
so a request embedding several texts at once (which llama-cpp-python decodes as one batch of sequences) fails with
``llama_decode returned -1``. This launcher gives every model loaded with ``embedding=True`` mean pooling (one
sentence vector per text) and room for ``EMBED_SEQUENCES`` texts per batch, then runs the server unchanged:

    python scripts/llama_server.py --config_file llama.json

Run it with the python that has ``llama-cpp-python[server]`` (``scripts/llama.sh python``).
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import llama_cpp
import llama_cpp.llama_cpp as low_level
from llama_cpp.server.__main__ import main

EMBED_SEQUENCES = 64  # texts one embeddings batch may hold (a chat model keeps one sequence: its whole context)

_init = llama_cpp.Llama.__init__
_default_params = low_level.llama_context_default_params
_loading = threading.local()


@functools.wraps(_default_params)
def _context_params() -> Any:
    params = _default_params()
    if getattr(_loading, "embedding", False):
        params.n_seq_max = EMBED_SEQUENCES
    return params


@functools.wraps(_init)
def _with_mean_pooling(self: Any, *args: Any, **kwargs: Any) -> None:
    embedding = bool(kwargs.get("embedding"))
    if embedding:
        kwargs.setdefault("pooling_type", llama_cpp.LLAMA_POOLING_TYPE_MEAN)
    _loading.embedding = embedding
    try:
        _init(self, *args, **kwargs)
    finally:
        _loading.embedding = False


low_level.llama_context_default_params = _context_params
llama_cpp.Llama.__init__ = _with_mean_pooling  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
