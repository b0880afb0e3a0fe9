"""Domain errors raised by the service layer; every surface maps them to its own form once (HTTP: api/errors.py)."""

from __future__ import annotations


class MindBankError(Exception):
    """Base class of errors a caller can act on."""


class TransientError(MindBankError):
    """A failure worth retrying later (provider timeout, rate limit, 5xx). The worker retries the operation with
    backoff; a refresh hitting one records no failure and changes nothing."""


class NotFoundError(MindBankError):
    """A bank, mental model or operation does not exist (HTTP 404)."""


class ConflictError(MindBankError):
    """The request collides with existing state, e.g. a taken mental-model id (HTTP 409)."""


class InvalidInputError(MindBankError):
    """Input that passed the schema but breaks a rule (HTTP 422). ``field`` names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class PayloadTooLargeError(MindBankError):
    """A request over a size limit that another form of the request can carry (HTTP 413). ``field`` names what is
    too large; the message says the limit, its setting and what to send instead."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class RefreshPreviewError(MindBankError):
    """A dry run whose synthesis failed in a way its result cannot express (the dry-run ``outcome`` is one of the
    five executor outcomes): ``reason`` is the refresh failure reason (``no_answer``, ``retrieval_failed``,
    ``unexpected_error``). HTTP 502 when the engine gave no answer (``upstream``), else 500."""

    def __init__(self, message: str, *, reason: str, upstream: bool) -> None:
        super().__init__(message)
        self.reason = reason
        self.upstream = upstream


class UnsupportedTypeError(MindBankError):
    """A file of a type mindbank cannot read (HTTP 415); ``media_type`` names the type."""

    def __init__(self, media_type: str, message: str) -> None:
        super().__init__(message)
        self.media_type = media_type


class EmbeddingProviderError(MindBankError):
    """The embedding provider refused a request or answered unusably (HTTP 502); retrying will not help."""


class EmbeddingUnavailableError(EmbeddingProviderError, TransientError):
    """The embedding provider is unreachable, timed out or kept answering 429/5xx after the SDK's retries (HTTP 503).
    Being a :class:`TransientError`, the worker retries an operation that hit it with backoff."""


class EmbeddingModelMismatchError(ConflictError):
    """A bank's vectors were made by another embedding model than the one configured (HTTP 409): searching or adding
    vectors would mix two models' spaces. ``bank_model`` and ``configured_model`` name both."""

    def __init__(self, bank_id: str, bank_model: str, bank_dimension: int, model: str, dimension: int) -> None:
        super().__init__(
            f"bank '{bank_id}' holds vectors of embedding model {bank_model!r} ({bank_dimension} dimensions) but "
            f"this server embeds with {model!r} ({dimension} dimensions): set MINDBANK_EMBEDDING_MODEL back to "
            f"{bank_model!r}, keep this bank on a server configured for it, or move the bank to {model!r} with a "
            f"re-embedding (POST /v1/default/banks/{bank_id}/reembed, `mindbank bank reembed`)"
        )
        self.bank_model = bank_model
        self.configured_model = model
