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
