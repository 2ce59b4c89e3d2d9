"""Owns the emulator's API errors (code, HTTP status, message) and the one domain-error mapping.

Domain errors are :mod:`..state.errors` and the model's ``QuotaConfigError``; nothing else in the
emulator picks an AWS error code for them.

Batch answers every refusal as ``ClientException`` (HTTP 400), and reports a malformed job id
inside a bulk answer (``TerminateServiceJobs`` ``errors``, the ``batch-item`` context) as
``ValidationException``, as its model documents; SSM and SageMaker answer an unknown name as
``ParameterNotFound`` / ``ValidationException`` and a malformed one as ``ValidationException``
(a pagination token they did not issue: SSM ``InvalidNextToken``, Service Quotas
``InvalidPaginationTokenException``, each declared by its model)
(SageMaker's training plans: ``ResourceNotFound``, ``ResourceInUse``);
STS answers ``AccessDenied`` (HTTP 403) and ``ValidationError``.
"""

from __future__ import annotations

from quota_constructs.local.state.errors import (
    AccessDenied,
    EmulatorError,
    InvalidParameter,
    InvalidToken,
    NotFound,
    ResourceInUse,
    ResourceNotFound,
    VersionNotFound,
)
from quota_constructs.model import QuotaConfigError

CLIENT_EXCEPTION = "ClientException"
DOMAIN_ERRORS = (EmulatorError, QuotaConfigError)
"""What a refused request raises below the wire; :func:`api_error` answers it."""

_CODES: dict[str, tuple[tuple[type[Exception], str], ...]] = {
    "batch": ((Exception, CLIENT_EXCEPTION),),
    "batch-item": ((InvalidParameter, "ValidationException"), (Exception, CLIENT_EXCEPTION)),
    "ssm": (
        (VersionNotFound, "ParameterVersionNotFound"),
        (NotFound, "ParameterNotFound"),
        (InvalidToken, "InvalidNextToken"),
        (InvalidParameter, "ValidationException"),
        (Exception, CLIENT_EXCEPTION),
    ),
    "sagemaker": (
        (ResourceNotFound, "ResourceNotFound"),
        (ResourceInUse, "ResourceInUse"),
        (Exception, "ValidationException"),
    ),
    "sts": ((AccessDenied, "AccessDenied"), (Exception, "ValidationError")),
    "service-quotas": (
        (NotFound, "NoSuchResourceException"),
        (InvalidToken, "InvalidPaginationTokenException"),
        (Exception, "IllegalArgumentException"),
    ),
}
_STATUS = {"AccessDenied": 403}


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


def validation_error(service: str, message: str) -> ApiError:
    """A request breaking its input shape: Batch ``ClientException``, STS ``ValidationError``,
    SSM and SageMaker ``ValidationException`` (HTTP 400)."""
    codes = {"batch": CLIENT_EXCEPTION, "sts": "ValidationError"}
    return ApiError(codes.get(service, "ValidationException"), message, 400)


def server_error(message: str) -> ApiError:
    """Batch's ``ServerException`` (HTTP 500)."""
    return ApiError("ServerException", message, 500)


def api_error(service: str, error: Exception) -> ApiError:
    """What ``service`` (``batch``, ``batch-item``, ``ssm``, ``sagemaker``, ``sts``) answers for
    a refused request.

    The code of the error's kind (a :data:`DOMAIN_ERRORS` member, or any other refusal a batch
    response reports per item), its HTTP status (400; 403 for ``AccessDenied``) and the error's
    message.
    """
    code = next(code for kind, code in _CODES[service] if isinstance(error, kind))
    return ApiError(code, str(error), _STATUS.get(code, 400))
