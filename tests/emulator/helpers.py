"""Helpers for the emulator's tests: submit and status shortcuts over HTTP, a queue built on the
state layer directly."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.state.registry import SAGEMAKER_TRAINING, JobQueue, Registry
from tests.helpers import payload


def submit(batch: Any, queue: str, share: str | None, name: str, **extra: Any) -> str:
    """Submit a one-instance ml.g5.xlarge job; returns its job id."""
    params: dict[str, Any] = {
        "jobName": name,
        "jobQueue": queue,
        "serviceJobType": "SAGEMAKER_TRAINING",
        "serviceRequestPayload": extra.pop("serviceRequestPayload", payload()),
        **extra,
    }
    if share is not None:
        params["quotaShareName"] = share
    return str(batch.submit_service_job(**params)["jobId"])


def fifo_stack(batch: Any, name: str, instances: int = 1) -> str:
    """AWS's sample helper's ``create_resources``: a plain FIFO SAGEMAKER_TRAINING queue on a
    ``NUM_INSTANCES`` environment, no scheduling policy; returns the queue's ARN."""
    batch.create_service_environment(
        serviceEnvironmentName=f"{name}-se",
        serviceEnvironmentType="SAGEMAKER_TRAINING",
        state="ENABLED",
        capacityLimits=[{"maxCapacity": instances, "capacityUnit": "NUM_INSTANCES"}],
    )
    queue = batch.create_job_queue(
        jobQueueName=f"{name}-jq",
        jobQueueType="SAGEMAKER_TRAINING",
        state="ENABLED",
        priority=1,
        serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": f"{name}-se"}],
    )
    return str(queue["jobQueueArn"])


def refusal(call: Any, **params: Any) -> str:
    """The message of the ClientException ``call(**params)`` gets."""
    with pytest.raises(ClientError) as caught:
        call(**params)
    assert caught.value.response["Error"]["Code"] == "ClientException"
    return str(caught.value.response["Error"]["Message"])


def status(batch: Any, job_id: str) -> str:
    return str(batch.describe_service_job(jobId=job_id)["status"])


GPU = "ml.g5.xlarge"
"""The instance type of the state tests' queues."""
FIFO = {"idleResourceAssignmentStrategy": "FIFO"}
"""A ``quotaSharePolicy`` as clients send it."""


def create_queue(registry: Registry, name: str = "q", capacity: int = 2) -> JobQueue:
    """A quota-share policy, a service environment of ``capacity`` GPUs and an ENABLED queue."""
    policy = registry.create_scheduling_policy(f"{name}-policy", quota_share_policy=FIFO)
    registry.create_service_environment(f"{name}-env", {GPU: capacity})
    return registry.create_job_queue(
        name,
        priority=1,
        queue_type=SAGEMAKER_TRAINING,
        service_environments=[f"{name}-env"],
        scheduling_policy=policy.arn,
    )
