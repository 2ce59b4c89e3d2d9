"""The AWS CLI (awscli from PyPI) against the emulator, as a second real client."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from quota_constructs.local.testing import EmulatorServer
from tests.helpers import AWS, payload


def aws(emulator: EmulatorServer, *args: str, endpoint: bool = True) -> subprocess.CompletedProcess:
    """Run ``aws <args> --output json`` with dummy credentials (and ``--endpoint-url``)."""
    command = [str(AWS), *args, "--output", "json"]
    if endpoint:
        command += ["--endpoint-url", emulator.endpoint_url]
    env = {**os.environ, **emulator.env, "AWS_CONFIG_FILE": os.devnull}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)


def ok(result: subprocess.CompletedProcess) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_cli_lists_quota_shares(emulator: EmulatorServer) -> None:
    shares = ok(aws(emulator, "batch", "list-quota-shares", "--job-queue", "seed-demo-queue"))

    assert [s["quotaShareName"] for s in shares["quotaShares"]] == ["QS1", "QS2", "QS3"]


def test_cli_submits_and_describes_a_service_job(emulator: EmulatorServer) -> None:
    submitted = ok(
        aws(
            emulator,
            "batch",
            "submit-service-job",
            "--job-queue",
            "seed-demo-queue",
            "--job-name",
            "from-cli",
            "--service-job-type",
            "SAGEMAKER_TRAINING",
            "--quota-share-name",
            "QS2",
            "--scheduling-priority",
            "5",
            "--service-request-payload",
            payload(),
        )
    )
    emulator.advance(10)
    # endpoint from AWS_ENDPOINT_URL_BATCH only, as a user's shell would have it
    described = ok(
        aws(
            emulator,
            "batch",
            "describe-service-job",
            "--job-id",
            submitted["jobArn"],  # AWS takes the ARN wherever it takes a job id
            endpoint=False,
        )
    )

    assert described["jobId"] == submitted["jobId"]
    assert (described["jobName"], described["status"]) == ("from-cli", "RUNNING")
    assert (described["quotaShareName"], described["schedulingPriority"]) == ("QS2", 5)


def test_cli_terminates_a_job_named_by_arn(emulator: EmulatorServer) -> None:
    batch = emulator.client("batch")
    submitted = batch.submit_service_job(
        jobName="doomed",
        jobQueue="seed-demo-queue",
        serviceJobType="SAGEMAKER_TRAINING",
        quotaShareName="QS1",
        serviceRequestPayload=payload(),
    )

    result = aws(
        emulator,
        "batch",
        "terminate-service-job",
        "--job-id",
        submitted["jobArn"],
        "--reason",
        "cleanup",
    )

    assert result.returncode == 0, result.stderr
    described = batch.describe_service_job(jobId=submitted["jobId"])
    assert (described["status"], described["isTerminated"]) == ("FAILED", True)


def test_cli_reports_a_client_exception(emulator: EmulatorServer) -> None:
    result = aws(
        emulator,
        "batch",
        "submit-service-job",
        "--job-queue",
        "seed-demo-queue",
        "--job-name",
        "bad",
        "--service-job-type",
        "SAGEMAKER_TRAINING",
        "--quota-share-name",
        "QS9",
        "--service-request-payload",
        payload(),
    )

    assert result.returncode != 0
    assert "(ClientException)" in result.stderr and "use one of: QS1, QS2, QS3" in result.stderr


def test_cli_reads_ssm_parameters_of_an_organisation(emulator: EmulatorServer) -> None:
    found = ok(
        aws(
            emulator,
            "ssm",
            "get-parameter",
            "--name",
            "/quota/seed-demo/job-queue/name",
            endpoint=False,
        )
    )

    assert found["Parameter"]["Value"] == "seed-demo-queue"
