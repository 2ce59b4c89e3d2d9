"""SageMaker DescribeTrainingJob over HTTP for the training jobs the emulator's service jobs ran."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.testing import EmulatorServer
from tests.emulator.helpers import status, submit
from tests.helpers import payload

NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")  # SageMaker's TrainingJobName


@pytest.fixture
def sagemaker(emulator: EmulatorServer) -> Any:
    return emulator.client("sagemaker")


def training_job_names(batch: Any, job_id: str) -> list[str]:
    """Names of the training jobs of every attempt so far, the latest last."""
    described = batch.describe_service_job(jobId=job_id)
    arns = [a["serviceResourceId"]["value"] for a in described.get("attempts", [])]
    latest = described.get("latestAttempt", {}).get("serviceResourceId", {}).get("value")
    if latest and latest not in arns:
        arns.append(latest)
    return [arn.split(":training-job/", 1)[1] for arn in arns]


def test_a_running_attempt_is_in_progress(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS1", "train-1")
    emulator.advance(10)
    (name,) = training_job_names(batch, job)

    described = sagemaker.describe_training_job(TrainingJobName=name)

    assert (described["TrainingJobStatus"], described["SecondaryStatus"]) == (
        "InProgress",
        "Training",
    )
    assert described["TrainingJobArn"].endswith(f":training-job/{name}")
    assert re.fullmatch("AWSBatchtrain[0-9a-f]{32}", name)  # the payload's TrainingJobName
    assert NAME.match(name)
    assert described["ResourceConfig"]["InstanceType"] == "ml.g5.xlarge"
    assert described["RoleArn"] == json.loads(payload())["RoleArn"]


def test_a_finished_attempt_is_completed_with_its_model_artifacts(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS3", "done", tags={"quota.local/duration-seconds": "60"})
    emulator.advance(120)
    (name,) = training_job_names(batch, job)

    described = sagemaker.describe_training_job(TrainingJobName=name)

    assert described["TrainingJobStatus"] == "Completed"
    assert described["ModelArtifacts"]["S3ModelArtifacts"] == (
        f"s3://bucket/out/{name}/output/model.tar.gz"
    )
    ran = described["TrainingEndTime"] - described["TrainingStartTime"]
    assert ran.total_seconds() == pytest.approx(61)  # 1 s downloading (STARTING), 60 s training


def test_a_failed_attempt_reports_its_failure_reason(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    tags = {
        "quota.local/duration-seconds": "60",
        "quota.local/failure-reason": "AlgorithmError: NaN",
    }
    job = submit(batch, queue, "QS3", "bad", tags=tags)
    emulator.advance(120)
    (name,) = training_job_names(batch, job)

    described = sagemaker.describe_training_job(TrainingJobName=name)

    assert (described["TrainingJobStatus"], described["FailureReason"]) == (
        "Failed",
        "AlgorithmError: NaN",
    )


def test_a_terminated_attempt_is_stopped(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS3", "stopped")
    emulator.advance(10)
    batch.terminate_service_job(jobId=job, reason="not needed")
    (name,) = training_job_names(batch, job)

    assert sagemaker.describe_training_job(TrainingJobName=name)["TrainingJobStatus"] == "Stopped"


def test_a_preempted_attempt_is_stopped_and_the_next_one_runs(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    submit(batch, queue, "QS1", "own", schedulingPriority=3)
    borrower = submit(batch, queue, "QS1", "borrower", schedulingPriority=2)
    emulator.advance(10)
    lender = submit(batch, queue, "QS2", "lender", tags={"quota.local/duration-seconds": "60"})
    emulator.advance(200)  # the lender finishes; the borrower runs again
    first, second = training_job_names(batch, borrower)

    statuses = [
        sagemaker.describe_training_job(TrainingJobName=n)["TrainingJobStatus"]
        for n in (first, second)
    ]

    assert lender and statuses == ["Stopped", "InProgress"]


def test_names_are_found_in_any_case(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS1", "MixedCase")
    emulator.advance(10)
    (name,) = training_job_names(batch, job)

    described = sagemaker.describe_training_job(TrainingJobName=name.lower())

    assert described["TrainingJobName"] == name


def test_a_long_job_name_makes_a_valid_training_job_name(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    sent = {**json.loads(payload()), "TrainingJobName": "my-" + "x" * 60}
    job = submit(batch, queue, "QS1", "long", serviceRequestPayload=json.dumps(sent))
    emulator.advance(10)
    (name,) = training_job_names(batch, job)

    assert len(name) == 63 and NAME.match(name) and name.startswith("AWSBatchmy-xxx")
    assert sagemaker.describe_training_job(TrainingJobName=name)["TrainingJobName"] == name


def test_rejects_an_unknown_training_job_as_aws_does(sagemaker: Any) -> None:
    with pytest.raises(ClientError) as caught:
        sagemaker.describe_training_job(TrainingJobName="nobody")

    error = caught.value.response["Error"]
    assert (error["Code"], error["Message"]) == (
        "ValidationException",
        "Requested resource not found.",
    )


def test_rejects_other_sagemaker_operations_naming_what_is_served(sagemaker: Any) -> None:
    with pytest.raises(ClientError) as caught:
        sagemaker.list_training_jobs()

    error = caught.value.response["Error"]
    assert error["Code"] == "ValidationException"
    assert "not served by the quota emulator" in error["Message"]
    assert "DescribeTrainingJob" in error["Message"]


def test_the_training_job_is_named_after_the_payloads_training_job_name(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    named = submit(batch, queue, "QS1", "batch_name")
    unnamed_payload = {k: v for k, v in json.loads(payload()).items() if k != "TrainingJobName"}
    unnamed = submit(
        batch, queue, "QS2", "batch_name", serviceRequestPayload=json.dumps(unnamed_payload)
    )
    emulator.advance(10)

    assert re.fullmatch("AWSBatchtrain[0-9a-f]{32}", training_job_names(batch, named)[0])
    assert re.fullmatch("AWSBatchbatch-name[0-9a-f]{32}", training_job_names(batch, unnamed)[0])


def test_each_batch_status_maps_to_sagemakers_status_as_aws_documents(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS1", "mapped")
    emulator.advance(0)
    assert status(batch, job) == "RUNNABLE" and not training_job_names(batch, job)
    seen: list[tuple[str, str, str]] = []
    for _ in range(3):
        emulator.advance(1)
        (name,) = training_job_names(batch, job)
        described = sagemaker.describe_training_job(TrainingJobName=name)
        seen.append(
            (status(batch, job), described["TrainingJobStatus"], described["SecondaryStatus"])
        )

    assert seen == [
        ("SCHEDULED", "InProgress", "Pending"),
        ("STARTING", "InProgress", "Downloading"),
        ("RUNNING", "InProgress", "Training"),
    ]
