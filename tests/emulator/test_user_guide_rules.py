"""Behaviours the AWS Batch user guide documents outside botocore's model, over HTTP: each test
shows one row of docs/emulator.md's "Every documented behaviour" table holding."""

from __future__ import annotations

import json
from typing import Any

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import (
    MAX_JOB_QUEUES,
    MAX_PAYLOAD_BYTES,
    MAX_SERVICE_ENVIRONMENTS,
    MAX_SUBMIT_REQUEST_BYTES,
    MAX_TAGS,
)
from quota_constructs.scheduling import REASON_CAPACITY_ERROR
from tests.emulator.helpers import refusal, status, submit
from tests.helpers import payload

RUNS_1_MIN = {"quota.local/duration-seconds": "60"}


def sized_payload(size: int) -> str:
    """``payload()`` padded with a hyperparameter to exactly ``size`` bytes."""
    base = json.loads(payload())
    base["HyperParameters"] = {"pad": ""}
    short = size - len(json.dumps(base))
    base["HyperParameters"]["pad"] = "x" * short
    text = json.dumps(base)
    assert len(text.encode()) == size
    return text


def test_a_payload_is_at_most_10_kib(batch: Any, queue: str) -> None:
    submit(batch, queue, "QS1", "fits", serviceRequestPayload=sized_payload(MAX_PAYLOAD_BYTES))

    message = refusal(
        submit,
        batch=batch,
        queue=queue,
        share="QS1",
        name="too-big",
        serviceRequestPayload=sized_payload(MAX_PAYLOAD_BYTES + 1),
    )

    assert message == (
        f"serviceRequestPayload: {MAX_PAYLOAD_BYTES + 1} bytes exceeds the {MAX_PAYLOAD_BYTES}-byte"
        " limit; keep hyperparameters small and move large settings to S3"
    )


def test_a_submit_request_is_at_most_30_kib(batch: Any, queue: str) -> None:
    largest = {
        "serviceRequestPayload": sized_payload(MAX_PAYLOAD_BYTES),
        "tags": {f"k{i:03d}".ljust(128, "k"): "v" * 256 for i in range(MAX_TAGS)},
    }
    submit(batch, queue, "QS1", "large", **largest)
    rule = {"action": "RETRY", "onStatusReason": "x" * 500 + "*"}
    retry = {"attempts": 2, "evaluateOnExit": [rule] * 5}

    message = refusal(
        submit, batch=batch, queue=queue, share="QS1", name="larger", retryStrategy=retry, **largest
    )

    assert message.startswith("SubmitServiceJob: the request is ")
    assert message.endswith(
        f" bytes, over the {MAX_SUBMIT_REQUEST_BYTES}-byte limit of a SubmitServiceJob request; "
        "send fewer or shorter tags"
    )


def environment(batch: Any, name: str) -> None:
    batch.create_service_environment(
        serviceEnvironmentName=name,
        serviceEnvironmentType="SAGEMAKER_TRAINING",
        capacityLimits=[{"capacityUnit": "NUM_INSTANCES", "maxCapacity": 1}],
    )


def test_an_account_has_at_most_50_service_environments(batch: Any) -> None:
    fill_environments(batch)

    message = refusal(environment, batch=batch, name="one-too-many")

    assert message == (
        f"serviceEnvironmentName: an account has at most {MAX_SERVICE_ENVIRONMENTS} service "
        "environments per Region (AWS Batch's service quota, not adjustable) and this one has "
        f"{MAX_SERVICE_ENVIRONMENTS}; delete one first"
    )


def fill_environments(batch: Any) -> None:
    held = len(batch.describe_service_environments()["serviceEnvironments"])
    for n in range(MAX_SERVICE_ENVIRONMENTS - held):
        environment(batch, f"env-{n}")


def queue_on(batch: Any, name: str, env: str) -> None:
    batch.create_job_queue(
        jobQueueName=name,
        priority=1,
        jobQueueType="SAGEMAKER_TRAINING",
        serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env}],
    )


def test_an_account_has_at_most_50_job_queues(batch: Any) -> None:
    fill_environments(batch)
    for n in range(MAX_SERVICE_ENVIRONMENTS - 1):
        queue_on(batch, f"q-{n}", f"env-{n}")
    assert len(batch.describe_job_queues()["jobQueues"]) == MAX_JOB_QUEUES

    message = refusal(queue_on, batch=batch, name="one-too-many", env="env-0")

    assert message == (
        f"jobQueueName: an account has at most {MAX_JOB_QUEUES} job queues per Region (AWS "
        f"Batch's service quota, not adjustable) and this one has {MAX_JOB_QUEUES}; delete one "
        "first"
    )


def test_a_job_that_was_never_preempted_has_no_preemption_summary(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS1", "calm")
    emulator.advance(10)

    described = batch.describe_service_job(jobId=job)

    assert described["status"] == "RUNNING"
    assert "preemptionSummary" not in described


def test_a_succeeded_attempt_says_the_training_job_completed(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS1", "done", tags=RUNS_1_MIN)
    emulator.advance(120)

    described = batch.describe_service_job(jobId=job)

    assert described["status"] == "SUCCEEDED"
    [attempt] = described["attempts"]
    assert attempt["statusReason"] == "Received status from SageMaker: Training job completed"
    assert attempt["serviceResourceId"]["name"] == "TrainingJobArn"


def test_a_job_without_capacity_stays_runnable_indefinitely(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    forty_days = str(40 * 24 * 3600)
    holder = submit(
        batch,
        queue,
        "QS3",
        "holder",
        serviceRequestPayload=payload(runtime_s=40 * 24 * 3600),
        tags={"quota.local/duration-seconds": forty_days},
    )
    waiting = submit(batch, queue, "QS3", "waiting")
    emulator.advance(30 * 24 * 3600)

    assert (status(batch, holder), status(batch, waiting)) == ("RUNNING", "RUNNABLE")


def test_a_share_needs_at_least_one_capacity_limit(batch: Any, queue: str) -> None:
    message = refusal(
        batch.create_quota_share,
        quotaShareName="empty",
        jobQueue=queue,
        capacityLimits=[],
        resourceSharingConfiguration={"strategy": "RESERVE"},
        preemptionConfiguration={"inSharePreemption": "DISABLED"},
    )

    assert "a quota share needs 1 to 5 capacity limits (instance types), got 0" in message


def test_scheduled_at_is_when_the_job_was_dispatched(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    emulator.advance(5)
    job = submit(batch, queue, "QS1", "dispatched")
    before = batch.describe_service_job(jobId=job)
    emulator.advance(0)
    runnable = batch.describe_service_job(jobId=job)
    emulator.advance(1)
    after = batch.describe_service_job(jobId=job)

    assert (before["status"], "scheduledAt" in before) == ("SUBMITTED", False)
    assert (runnable["status"], "scheduledAt" in runnable) == ("RUNNABLE", False)
    assert (after["status"], after["scheduledAt"]) == ("SCHEDULED", before["createdAt"] + 1000)


def test_capacity_usage_is_the_payloads_instance_count(batch: Any, queue: str) -> None:
    job = submit(batch, queue, "QS1", "two", serviceRequestPayload=payload(count=2))

    usage = batch.describe_service_job(jobId=job)["capacityUsage"]

    assert usage == [{"capacityUnit": "ml.g5.xlarge", "quantity": 2.0}]


def test_an_attempt_without_sagemaker_capacity_is_retried_without_using_an_attempt(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    tags = {"quota.local/capacity-errors": "2", **RUNS_1_MIN}
    job = submit(batch, queue, "QS1", "unlucky", tags=tags, retryStrategy={"attempts": 1})
    emulator.advance(120)
    described = batch.describe_service_job(jobId=job)
    first = described["attempts"][0]["serviceResourceId"]["value"].split(":training-job/")[1]
    training = emulator.client("sagemaker").describe_training_job(TrainingJobName=first)

    assert described["status"] == "SUCCEEDED"
    assert [a["statusReason"] for a in described["attempts"]] == [REASON_CAPACITY_ERROR] * 2 + [
        "Received status from SageMaker: Training job completed"
    ]
    assert (training["TrainingJobStatus"], training["FailureReason"]) == (
        "Failed",
        REASON_CAPACITY_ERROR.removeprefix("Received status from SageMaker:"),
    )
