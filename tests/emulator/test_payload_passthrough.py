"""``serviceRequestPayload`` is passed through by Batch without validation (docs/aws-semantics.md
§2.2): a payload AWS accepts is accepted; one naming no schedulable instance type or count is
accepted too and its job FAILS as SageMaker would refuse it (UNCONFIRMED: the reason's text).
``payload_validation="strict"`` (``quota local serve --payload-validation strict``) refuses such
a submit instead, naming the field."""

from __future__ import annotations

import json
import signal
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.local.handlers.submit_request import PAYLOAD_FAILURE_PREFIX
from quota_constructs.local.testing import DUMMY_CREDENTIALS, SEED_DEMO, EmulatorServer
from tests.emulator.helpers import status, submit
from tests.helpers import start_serve, wait_for_endpoint

G5 = {"InstanceType": "ml.g5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 30}


def test_unknown_sagemaker_fields_and_missing_optional_ones_are_accepted(
    batch: Any, queue: str
) -> None:
    payload = {"ResourceConfig": G5, "SomeFutureSageMakerField": {"x": [1, 2]}}

    job_id = submit(batch, queue, "QS1", "future", serviceRequestPayload=json.dumps(payload))

    assert status(batch, job_id) in {"SUBMITTED", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"}
    sent = batch.describe_service_job(jobId=job_id)["serviceRequestPayload"]
    assert json.loads(sent) == payload


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        (
            {"AlgorithmSpecification": {"TrainingImage": "x"}},
            "serviceRequestPayload.ResourceConfig",
        ),
        (
            {"ResourceConfig": {"InstanceType": "ml.nope.xlarge", "InstanceCount": 1}},
            "serviceRequestPayload.ResourceConfig.InstanceType",
        ),
        (
            {"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 0}},
            "serviceRequestPayload.ResourceConfig.InstanceCount",
        ),
    ],
    ids=["no ResourceConfig", "unknown instance type", "zero instances"],
)
def test_an_unschedulable_payload_fails_the_job_not_the_submit(
    batch: Any, queue: str, payload: dict[str, Any], field: str
) -> None:
    job_id = submit(batch, queue, "QS1", "bad", serviceRequestPayload=json.dumps(payload))

    job = batch.describe_service_job(jobId=job_id)
    assert job["status"] == "FAILED"
    assert job["statusReason"].startswith(f"{PAYLOAD_FAILURE_PREFIX}{field}: ")
    assert job.get("attempts", []) == []


def test_a_failed_payload_takes_no_capacity_from_other_jobs(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    submit(batch, queue, "QS3", "bad", serviceRequestPayload="{}")  # QS3 reserves 1 instance
    good = submit(batch, queue, "QS3", "good")

    emulator.advance(10)

    assert status(batch, good) == "RUNNING"


STRICT_CASES = [
    ({"AlgorithmSpecification": {"TrainingImage": "x"}}, "serviceRequestPayload.ResourceConfig"),
    (
        {"ResourceConfig": {"InstanceType": "ml.nope.xlarge", "InstanceCount": 1}},
        "serviceRequestPayload.ResourceConfig.InstanceType",
    ),
]


@pytest.mark.parametrize(("payload", "field"), STRICT_CASES, ids=["no ResourceConfig", "type"])
def test_strict_payload_validation_refuses_the_submit_naming_the_field(
    payload: dict[str, Any], field: str
) -> None:
    with EmulatorServer([SEED_DEMO], payload_validation="strict") as emu:
        batch = emu.client("batch")
        with pytest.raises(ClientError) as refused:
            submit(
                batch,
                emu.queue_arn("seed-demo"),
                "QS1",
                "bad",
                serviceRequestPayload=json.dumps(payload),
            )
        jobs = batch.list_service_jobs(jobQueue=emu.queue_arn("seed-demo"))["jobSummaryList"]

    error = refused.value.response["Error"]
    assert error["Code"] == "ClientException"
    assert error["Message"].startswith(f"{field}: ")
    assert jobs == []


def test_strict_payload_validation_accepts_a_schedulable_payload() -> None:
    with EmulatorServer([SEED_DEMO], payload_validation="strict") as emu:
        batch = emu.client("batch")
        job_id = submit(batch, emu.queue_arn("seed-demo"), "QS1", "good")
        emu.advance(10)

        assert status(batch, job_id) == "RUNNING"


def test_serve_payload_validation_option() -> None:
    bad = json.dumps({"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 0}})
    answers = []
    for options in ((), ("--payload-validation", "strict")):
        process = start_serve("--virtual", *options)
        try:
            endpoint = wait_for_endpoint(process, [])
            batch = boto3.client(
                "batch", endpoint_url=endpoint, region_name="us-east-1", **DUMMY_CREDENTIALS
            )
            try:
                answers.append(
                    status(
                        batch,
                        submit(batch, "seed-demo-queue", "QS1", "bad", serviceRequestPayload=bad),
                    )
                )
            except ClientError as error:
                answers.append(error.response["Error"]["Message"])
        finally:
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=60)

    assert answers[0] == "FAILED"
    assert answers[1].startswith("serviceRequestPayload.ResourceConfig.InstanceCount: ")


def test_rejects_an_unknown_payload_validation() -> None:
    result = CliRunner().invoke(
        app, ["local", "serve", "--port", "0", "--payload-validation", "off"]
    )

    assert result.exit_code == 2
    assert "'passthrough', 'strict'" in " ".join(result.output.split())
