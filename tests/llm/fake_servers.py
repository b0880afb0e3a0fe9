"""Tiny OpenAI- and Anthropic-compatible HTTP servers on 127.0.0.1, driven by a Python responder.

The real SDKs talk to them (``base_url``), so provider code is tested on the wire: request shapes, status codes,
headers, slow replies and malformed bodies. A responder gets the parsed request and returns a :class:`Reply`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the server answers: a status, a JSON body (or raw bytes), extra headers, an optional delay (s)."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: bytes | None = None


@dataclass
class Seen:
    """One request the server received."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]


Responder = Callable[[Seen], Reply]


class FakeServer:
    """Serves ``responder`` until stopped; ``seen`` lists every request, ``url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.seen: list[Seen] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                seen = Seen(self.path, json.loads(raw or b"{}"), {k.lower(): v for k, v in self.headers.items()})
                server.seen.append(seen)
                reply = server.responder(seen)
                if reply.delay:
                    time.sleep(reply.delay)
                body = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                    pass

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                return

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        # a short poll interval: shutdown() waits for the next poll, and tests start and stop many servers
        self._thread = threading.Thread(target=self._http.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()


@contextmanager
def serving(responder: Responder) -> Iterator[FakeServer]:
    """A running :class:`FakeServer` for the block."""
    server = FakeServer(responder).start()
    try:
        yield server
    finally:
        server.stop()


def scripted(*replies: Reply | Callable[[Seen], Reply]) -> Responder:
    """A responder answering the given replies in order (the last one repeats)."""
    queue = list(replies)

    def respond(seen: Seen) -> Reply:
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        return reply(seen) if callable(reply) else reply

    return respond


# ---------------------------------------------------------------- OpenAI chat completions
def openai_reply(
    text: str | None = None, tool_calls: list[tuple[str, dict[str, Any] | str]] = (), **usage: int
) -> Reply:  # type: ignore[assignment]
    """A chat completion with ``text`` and/or ``tool_calls`` [(name, arguments dict or raw string)]."""
    calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
        }
        for i, (name, args) in enumerate(tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return Reply(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "fake-gpt",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {
                "prompt_tokens": usage.get("input", 11),
                "completion_tokens": usage.get("output", 7),
                "total_tokens": usage.get("input", 11) + usage.get("output", 7),
            },
        }
    )


# ---------------------------------------------------------------- Anthropic messages
def anthropic_reply(text: str | None = None, tool_calls: list[tuple[str, dict[str, Any]]] = (), **usage: int) -> Reply:  # type: ignore[assignment]
    """A Messages API reply with ``text`` and/or ``tool_use`` blocks."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args}
        for i, (name, args) in enumerate(tool_calls)
    ]
    return Reply(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "fake-claude",
            "content": content,
            "stop_reason": "tool_use" if tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": usage.get("input", 13), "output_tokens": usage.get("output", 5)},
        }
    )


def error_reply(status: int, message: str = "nope", **headers: str) -> Reply:
    """An error body both SDKs understand."""
    return Reply({"error": {"type": "error", "message": message}}, status=status, headers=headers)


# ---------------------------------------------------------------- OpenAI embeddings
def embeddings_reply(vectors: list[list[float]], *, model: str = "fake-embed", shuffle: bool = False) -> Reply:
    """A ``/v1/embeddings`` reply carrying ``vectors`` (``shuffle``: in reverse order, each with its own index)."""
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    if shuffle:
        data.reverse()
    tokens = sum(len(v) for v in vectors)
    return Reply(
        {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
    )


def hashed_vector(text: str, dimension: int = 8, model: str = "") -> list[float]:
    """A deterministic bag of hashed words (``dimension`` wide), salted by ``model`` when given (so two models place
    one text differently): texts sharing words are near each other under one model."""
    import hashlib

    out = [0.0] * dimension
    for word in text.lower().split():
        digest = hashlib.sha1((model + word.strip(".,!?")).encode()).digest()
        out[digest[0] % dimension] += 1.0 + digest[1] / 255
    return out if any(out) else [1.0] + [0.0] * (dimension - 1)


def hashed_embeddings(dimension: int = 8, *, per_model: bool = False, delay: float = 0.0) -> Responder:
    """A responder embedding each input text with :func:`hashed_vector` (``per_model``: salted by the request's
    model), one vector per input whatever the batch; ``delay``: seconds each reply waits."""

    def respond(seen: Seen) -> Reply:
        inputs = seen.body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        model = str(seen.body.get("model"))
        reply = embeddings_reply([hashed_vector(t, dimension, model if per_model else "") for t in texts], model=model)
        reply.delay = delay
        return reply

    return respond


# ---------------------------------------------------------------- a recording proxy in front of a real server
def forwarding(upstream: str, *, max_tokens: int | None = None, timeout: float = 300.0) -> Responder:
    """A responder that forwards each request to ``upstream`` (``http://host:port``) and answers its reply, so a
    :class:`FakeServer` records (``seen``) what a real server received. ``max_tokens`` caps the reply length of chat
    completions (a small model under a grammar may otherwise write until its context is full)."""
    import urllib.error
    import urllib.request

    def respond(seen: Seen) -> Reply:
        body = dict(seen.body)
        if max_tokens is not None and seen.path.endswith("/chat/completions"):
            body["max_tokens"] = min(int(body.get("max_tokens") or max_tokens), max_tokens)
        request = urllib.request.Request(
            upstream + seen.path,
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return Reply(raw=response.read(), status=response.status)
        except urllib.error.HTTPError as exc:
            return Reply(raw=exc.read(), status=exc.code)

    return respond
