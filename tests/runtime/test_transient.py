"""Which refusals submit_many submits again: only those that may succeed later."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ParamValidationError

from quota_constructs.runtime.queue import is_transient


def client_error(code: str, status: int) -> ClientError:
    response = {
        "Error": {"Code": code, "Message": "m"},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    return ClientError(response, "SubmitServiceJob")


@pytest.mark.parametrize(
    "error",
    [
        client_error("ThrottlingException", 400),
        client_error("TooManyRequestsException", 429),
        client_error("ServerException", 500),
        client_error("InternalFailure", 503),
        EndpointConnectionError(endpoint_url="http://127.0.0.1:1"),
    ],
)
def test_throttling_server_errors_and_broken_connections_are_transient(error: Exception) -> None:
    assert is_transient(error)


@pytest.mark.parametrize(
    "error",
    [
        client_error("ClientException", 400),
        client_error("AccessDeniedException", 403),
        ParamValidationError(report="jobName is missing"),
    ],
)
def test_client_mistakes_are_not_transient(error: Exception) -> None:
    assert not is_transient(error)
