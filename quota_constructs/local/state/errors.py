"""Owns the emulator's domain errors: what its state refuses, before any wire code is chosen.

State (registry, job service, parameter store) and handlers raise these; the wire layer
(:func:`quota_constructs.local.wire.api_errors.api_error`) is the one place that turns them,
and the model's :class:`~quota_constructs.model.QuotaConfigError`, into AWS error codes and
HTTP statuses.
"""

from __future__ import annotations

from collections.abc import Sequence

from quota_constructs.model import Problem


class EmulatorError(Exception):
    """A request the emulator refuses; ``message`` names the field, the value and the fix."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(EmulatorError):
    """The request names a resource, job or parameter that does not exist."""


class ResourceNotFound(NotFound):
    """SageMaker's ``ResourceNotFound`` (training plans, offerings), unlike DescribeTrainingJob's
    ``ValidationException`` for an unknown name."""


class ResourceInUse(EmulatorError):
    """SageMaker's ``ResourceInUse``: the name is taken."""


class VersionNotFound(NotFound):
    """An SSM ``name:version`` selector names a version the parameter does not have."""


class InvalidRequest(EmulatorError):
    """The request breaks a rule or conflicts with the current state."""


class InvalidParameter(InvalidRequest):
    """A parameter's value is outside what the API accepts (SSM: ``ValidationException``)."""


class InvalidToken(InvalidRequest):
    """A pagination token this emulator did not issue for the listing (SSM:
    ``InvalidNextToken``, Service Quotas: ``InvalidPaginationTokenException``)."""


def refuse(problems: Sequence[Problem], *, context: str) -> None:
    """Raise :class:`InvalidRequest` listing every problem after ``context``, when there are any."""
    if problems:
        raise InvalidRequest(f"{context}: " + "; ".join(str(p) for p in problems))


class AccessDenied(EmulatorError):
    """The caller may not do this (STS: a role the emulator cannot assume)."""
