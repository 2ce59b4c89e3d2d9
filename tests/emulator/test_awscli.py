"""The AWS CLI (awscli from PyPI) against the emulator, as a second real client."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import botocore
import pytest

from quota_constructs.local.testing import EmulatorServer
from tests.helpers import AWS, ROOT, payload

NEWER_THAN_THE_CLI = {"terminate-service-jobs"}
"""Batch commands the pinned awscli's bundled botocore (1.43.62) lacks: every awscli on PyPI
(1.46.3 the newest) bundles that model or needs a botocore as old, which boto3 1.44 rules out."""
BOTOCORE_DATA = str(Path(botocore.__file__).parent / "data")
"""boto3's botocore models: ``AWS_DATA_PATH`` makes the CLI read them before its own."""


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


# --- the pinned CLI knows what the docs show ---------------------------------------------------

DOC_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BATCH_COMMAND = re.compile(r"\baws batch ([a-z][a-z-]*[a-z])")


def shown_batch_commands() -> list[str]:
    """Every ``aws batch <command>`` of README and docs/."""
    found = {m for page in DOC_PAGES for m in BATCH_COMMAND.findall(page.read_text("utf-8"))}
    return sorted(found)


def test_the_docs_show_batch_commands() -> None:
    assert {"submit-service-job", "describe-service-job", "terminate-service-jobs"} <= set(
        shown_batch_commands()
    )


@pytest.mark.parametrize("command", shown_batch_commands())
def test_every_batch_command_the_docs_show_is_known_to_the_cli(
    emulator: EmulatorServer, command: str
) -> None:
    """The pinned awscli knows each command (its skeleton needs no call); those its bundled
    botocore model is too old for, only with AWS_DATA_PATH naming boto3's botocore model, as
    docs/emulator.md says (no awscli release on PyPI bundles a model with them yet)."""
    skeleton = aws(emulator, "batch", command, "--generate-cli-skeleton", endpoint=False)
    if command in NEWER_THAN_THE_CLI:
        assert skeleton.returncode != 0 and "Invalid choice" in skeleton.stderr
        env = {**os.environ, **emulator.env, "AWS_DATA_PATH": BOTOCORE_DATA}
        command_line = [str(AWS), "batch", command, "--generate-cli-skeleton"]
        skeleton = subprocess.run(command_line, capture_output=True, text=True, env=env, timeout=60)
    assert skeleton.returncode == 0, skeleton.stderr
    assert isinstance(json.loads(skeleton.stdout), dict)


def test_terminate_service_jobs_with_the_newer_model_terminates_a_job(
    emulator: EmulatorServer,
) -> None:
    """``aws batch terminate-service-jobs`` with ``AWS_DATA_PATH`` naming boto3's botocore
    models, as docs/emulator.md shows it."""
    batch = emulator.client("batch")
    job = batch.submit_service_job(
        jobName="doomed",
        jobQueue="seed-demo-queue",
        serviceJobType="SAGEMAKER_TRAINING",
        quotaShareName="QS1",
        serviceRequestPayload=payload(),
    )["jobId"]
    env = {
        **os.environ,
        **emulator.env,
        "AWS_DATA_PATH": BOTOCORE_DATA,
        "AWS_CONFIG_FILE": os.devnull,
    }
    command = [str(AWS), "batch", "terminate-service-jobs", "--jobs", job, "--reason", "cli"]
    result = subprocess.run(
        [*command, "--output", "json"], capture_output=True, text=True, env=env, timeout=60
    )

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"successful": [job], "errors": []}
    assert batch.describe_service_job(jobId=job)["isTerminated"] is True
