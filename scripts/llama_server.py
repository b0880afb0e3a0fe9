"""llama-cpp-python's OpenAI-compatible server with mean pooling and batched requests on its embedding models.

``python -m llama_cpp.server`` (0.3.x) takes ``"embedding": true`` per model in its config file but neither a pooling
type nor a number of sequences:

* a chat model's GGUF then answers ``/v1/embeddings`` with one vector per token: this launcher gives every model
  loaded with ``embedding=True`` mean pooling (one sentence vector per text);
* its context then holds one sequence, while ``Llama.embed`` decodes the texts of one request together, one sequence
  each (as many as fit in ``n_batch`` tokens), so a request of several texts fails with ``llama_decode returned -1``.
  This launcher opens embedding models' contexts with ``MINDBANK_LLAMA_EMBEDDING_SEQUENCES`` sequences (default 64,
  mindbank's default ``MINDBANK_EMBEDDING_BATCH_SIZE``) sharing one KV cache of ``n_ctx`` cells (``kv_unified``:
  the texts of a batch take what they need of it, rather than ``n_ctx`` / sequences each). Send at most that many
  texts per request; each text is cut to ``n_batch`` tokens (512 unless the config file says otherwise).

    python scripts/llama_server.py --config_file llama.json

Run it with the python that has ``llama-cpp-python[server]`` (``scripts/llama.sh python``).
"""

from __future__ import annotations

import functools
import os
from typing import Any

import llama_cpp
import llama_cpp.llama_cpp as low_level
from llama_cpp.server.__main__ import main

_init = llama_cpp.Llama.__init__
_default_params = low_level.llama_context_default_params
SEQUENCES = int(os.environ.get("MINDBANK_LLAMA_EMBEDDING_SEQUENCES", "64"))


def _batched_params() -> Any:
    """Context parameters for an embedding model: ``SEQUENCES`` sequences over one shared KV cache."""
    params = _default_params()
    params.n_seq_max = SEQUENCES
    params.kv_unified = True
    return params


@functools.wraps(_init)
def _embedding_model(self: Any, *args: Any, **kwargs: Any) -> None:
    if not kwargs.get("embedding"):
        _init(self, *args, **kwargs)
        return
    kwargs.setdefault("pooling_type", llama_cpp.LLAMA_POOLING_TYPE_MEAN)
    # Llama.__init__ reads its context defaults from this function and sets only the fields it knows; the server
    # loads one model at a time, so swapping it for the call affects this model alone
    low_level.llama_context_default_params = _batched_params
    try:
        _init(self, *args, **kwargs)
    finally:
        low_level.llama_context_default_params = _default_params


llama_cpp.Llama.__init__ = _embedding_model  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
