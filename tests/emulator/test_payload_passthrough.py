"""``serviceRequestPayload`` is passed through by Batch without validation (docs/aws-semantics.md
§2.2): a payload AWS accepts is accepted; one naming no schedulable instance type or count is
accepted too and its job FAILS as SageMaker would refuse it (UNCONFIRMED: the reason's text)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from quota_constructs.local.handlers.submit_request import PAYLOAD_FAILURE_PREFIX
from quota_constructs.local.testing import EmulatorServer
from tests.emulator.helpers import status, submit

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
