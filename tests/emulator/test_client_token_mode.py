"""``quota local serve --client-token-mode``: a repeated clientToken rejected (AWS) or replayed."""

from __future__ import annotations

import signal
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.local.testing import DUMMY_CREDENTIALS
from tests.emulator.helpers import submit
from tests.helpers import start_serve, wait_for_endpoint

QUEUE = "seed-demo-queue"


def twice(*options: str) -> tuple[str, Any]:
    """Serve with ``options``; submit the same request with the same token twice.

    Returns the first job id and the second answer (a job id, or the ClientError).
    """
    process = start_serve("--virtual", *options)
    printed: list[str] = []
    try:
        endpoint = wait_for_endpoint(process, printed)
        batch = boto3.client(
            "batch", endpoint_url=endpoint, region_name="us-east-1", **DUMMY_CREDENTIALS
        )
        first = submit(batch, QUEUE, "QS1", "twice", clientToken="same")
        try:
            second: Any = submit(batch, QUEUE, "QS1", "twice", clientToken="same")
        except ClientError as error:
            second = error
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    return first, second


def test_serve_rejects_a_repeated_client_token_by_default() -> None:
    _, second = twice()

    assert isinstance(second, ClientError)
    assert second.response["Error"]["Code"] == "ClientException"
    assert "was already received" in second.response["Error"]["Message"]


def test_serve_replays_the_first_job_when_asked() -> None:
    first, second = twice("--client-token-mode", "replay")

    assert second == first


@pytest.mark.parametrize("mode", ["Replay", "ignore", ""])
def test_rejects_an_unknown_client_token_mode(mode: str) -> None:
    result = CliRunner().invoke(app, ["local", "serve", "--port", "0", "--client-token-mode", mode])

    assert result.exit_code == 2
    assert "'reject', 'replay'" in " ".join(result.output.split())
