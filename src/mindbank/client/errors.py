"""Errors the client raises: an HTTP error answer, or a server that could not be reached."""

from __future__ import annotations

from typing import Any


class MindBankClientError(Exception):
    """Base class of every client error."""


class MindBankHTTPError(MindBankClientError):
    """The server answered with a non-2xx status. ``status_code`` is the HTTP status, ``message`` the server's
    message (for 422, ``field: message`` parts), ``detail`` the raw ``detail`` of the error body."""

    def __init__(self, status_code: int, message: str, *, detail: Any = None, method: str = "", path: str = "") -> None:
        super().__init__(f"{status_code}: {message}")
        self.status_code = status_code
        self.message = message
        self.detail = detail
        self.method = method
        self.path = path


class MindBankConnectionError(MindBankClientError):
    """The server could not be reached (refused, DNS, timeout)."""
