"""Owns the emulator's API errors: AWS error code, HTTP status and message, and the one mapping
from domain errors (:mod:`.errors`, the model's ``QuotaConfigError``) to them.

Batch answers every refusal as ``ClientException`` (HTTP 400); SSM answers an unknown
parameter as ``ParameterNotFound`` and a malformed parameter as ``ValidationException``.
"""

from __future__ import annotations

from quota_constructs.local.errors import InvalidParameter, NotFound

CLIENT_EXCEPTION = "ClientException"

_CODES: dict[str, tuple[tuple[type[Exception], str], ...]] = {
    "batch": ((Exception, CLIENT_EXCEPTION),),
    "ssm": (
        (NotFound, "ParameterNotFound"),
        (InvalidParameter, "ValidationException"),
        (Exception, CLIENT_EXCEPTION),
    ),
}


class ApiError(Exception):
    """An error answered to the client: AWS error ``code``, HTTP ``status`` and ``message``."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


def client_error(message: str) -> ApiError:
    """Batch's ``ClientException`` (HTTP 400): the request is wrong, the message says how."""
    return ApiError(CLIENT_EXCEPTION, message, 400)


def server_error(message: str) -> ApiError:
    """Batch's ``ServerException`` (HTTP 500)."""
    return ApiError("ServerException", message, 500)


def api_error(service: str, error: Exception) -> ApiError:
    """What ``service`` (``batch`` or ``ssm``) answers for a refused request: HTTP 400 with the
    code of the error's kind and its message."""
    code = next(code for kind, code in _CODES[service] if isinstance(error, kind))
    return ApiError(code, str(error), 400)
