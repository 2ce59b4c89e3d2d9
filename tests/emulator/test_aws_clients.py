"""What AWS's own clients of this API rely on, over HTTP (docs/emulator.md, "AWS's own code").

AWS's quota-management sample helper and the SageMaker SDK's integration tests (run unmodified
by ``tools/run_aws_code.py``) match on error texts, send values and build set-ups that these
tests reproduce: a duplicate name answers exactly ``Object already exists`` (the helper compares
the ``message`` member with ``==``), a duplicate share a message with "already exists", a deleted
share's describe an error with "does not exist" (the SDK's tests wait for it), ``evaluateOnExit``
actions in any case (the SDK's tests send ``"Retry"``), and their set-ups as they send them.
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.testing import EmulatorServer
from tests.emulator.helpers import status, submit
from tests.helpers import payload

INSTANCE = "ml.m5.2xlarge"
FIFO_POLICY = {"idleResourceAssignmentStrategy": "FIFO"}


@pytest.fixture
def batch(emulator: EmulatorServer) -> Any:
    return emulator.client("batch")


def refusal(call: Any, *args: Any, **params: Any) -> ClientError:
    with pytest.raises(ClientError) as caught:
        call(*args, **params)
    return caught.value


def quota_stack(batch: Any, name: str) -> dict[str, str]:
    """The SDK integration tests' set-up: environment (no ``state``), policy, queue by the
    environment's ARN with an empty ``computeEnvironmentOrder``, one RESERVE share."""
    env = batch.create_service_environment(
        serviceEnvironmentName=f"{name}-se",
        serviceEnvironmentType="SAGEMAKER_TRAINING",
        capacityLimits=[{"maxCapacity": 10, "capacityUnit": INSTANCE}],
    )
    policy = batch.create_scheduling_policy(name=f"{name}-sp", quotaSharePolicy=FIFO_POLICY)
    queue = batch.create_job_queue(
        jobQueueName=f"{name}-jq",
        priority=1,
        computeEnvironmentOrder=[],
        serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env["serviceEnvironmentArn"]}],
        jobQueueType="SAGEMAKER_TRAINING",
        schedulingPolicyArn=policy["arn"],
    )
    share = batch.create_quota_share(
        quotaShareName=f"{name}-qs",
        jobQueue=f"{name}-jq",
        capacityLimits=[{"maxCapacity": 10, "capacityUnit": INSTANCE}],
        resourceSharingConfiguration={"strategy": "RESERVE"},
        preemptionConfiguration={"inSharePreemption": "DISABLED"},
        state="ENABLED",
    )
    return {"queue": queue["jobQueueArn"], "share": share["quotaShareArn"], "policy": policy["arn"]}


def fifo_stack(batch: Any, name: str, instances: int = 1) -> str:
    """The sample helper's ``create_resources``: a plain FIFO SAGEMAKER_TRAINING queue on a
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


# --- error texts the clients match -----------------------------------------------------------


def test_a_duplicate_environment_queue_or_policy_answers_exactly_object_already_exists(
    batch: Any,
) -> None:
    quota_stack(batch, "a")
    env = refusal(
        batch.create_service_environment,
        serviceEnvironmentName="a-se",
        serviceEnvironmentType="SAGEMAKER_TRAINING",
        capacityLimits=[{"maxCapacity": 1, "capacityUnit": INSTANCE}],
    )
    policy = refusal(batch.create_scheduling_policy, name="a-sp", quotaSharePolicy=FIFO_POLICY)
    queue = refusal(
        batch.create_job_queue,
        jobQueueName="a-jq",
        priority=1,
        serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": "a-se"}],
        jobQueueType="SAGEMAKER_TRAINING",
    )

    for error in (env, policy, queue):
        assert error.response["message"] == "Object already exists"  # the modelled member
        assert error.response["Error"] == {
            "Code": "ClientException",
            "Message": "Object already exists",
        }


def test_a_duplicate_share_says_already_exists(batch: Any) -> None:
    quota_stack(batch, "b")
    error = refusal(
        batch.create_quota_share,
        quotaShareName="b-qs",
        jobQueue="b-jq",
        capacityLimits=[{"maxCapacity": 1, "capacityUnit": INSTANCE}],
        resourceSharingConfiguration={"strategy": "RESERVE"},
        preemptionConfiguration={"inSharePreemption": "DISABLED"},
    )

    assert "already exists" in error.response["message"]


def test_a_deleted_share_is_described_as_does_not_exist(batch: Any) -> None:
    arns = quota_stack(batch, "c")
    batch.update_quota_share(quotaShareArn=arns["share"], state="DISABLED")
    batch.delete_quota_share(quotaShareArn=arns["share"])

    error = refusal(batch.describe_quota_share, quotaShareArn=arns["share"])

    assert "does not exist" in str(error)
    assert error.response["Error"]["Message"] == (
        f"quotaShareArn: quota share {arns['share']!r} does not exist; use an ARN from "
        "ListQuotaShares (job-queue/<queue>/quota-share/<share>)"
    )


def test_deleted_queue_and_environment_describe_as_empty_lists(batch: Any) -> None:
    arns = quota_stack(batch, "d")
    batch.update_quota_share(quotaShareArn=arns["share"], state="DISABLED")
    batch.delete_quota_share(quotaShareArn=arns["share"])
    batch.update_job_queue(jobQueue="d-jq", state="DISABLED")
    batch.delete_job_queue(jobQueue="d-jq")
    batch.delete_scheduling_policy(arn=arns["policy"])
    batch.update_service_environment(serviceEnvironment="d-se", state="DISABLED")
    batch.delete_service_environment(serviceEnvironment="d-se")

    assert batch.describe_job_queues(jobQueues=["d-jq"])["jobQueues"] == []
    assert (
        batch.describe_service_environments(serviceEnvironments=["d-se"])["serviceEnvironments"]
        == []
    )


# --- the values they send --------------------------------------------------------------------


def test_the_integration_tests_set_up_is_valid_and_enabled(batch: Any) -> None:
    quota_stack(batch, "e")

    env = batch.describe_service_environments(serviceEnvironments=["e-se"])
    queue = batch.describe_job_queues(jobQueues=["e-jq"])["jobQueues"][0]
    policies = batch.get_paginator("list_scheduling_policies").paginate()
    arns = [p["arn"] for page in policies for p in page["schedulingPolicies"]]

    assert (env["serviceEnvironments"][0]["state"], env["serviceEnvironments"][0]["status"]) == (
        "ENABLED",
        "VALID",
    )
    assert (queue["state"], queue["status"]) == ("ENABLED", "VALID")
    assert any("e-sp" in arn for arn in arns)  # found by name in the ARN, as the tests do


def submit_with_rules(
    batch: Any, rules: list[dict[str, str]], reason: str, share: str = "QS1"
) -> str:
    queue = "arn:aws:batch:us-east-1:123456789012:job-queue/seed-demo-queue"
    return submit(
        batch,
        queue,
        share,
        "rules",
        retryStrategy={"attempts": 2, "evaluateOnExit": rules},
        tags={"quota.local/failure-reason": reason, "quota.local/duration-seconds": "60"},
    )


def test_evaluate_on_exit_actions_are_case_insensitive(
    batch: Any, emulator: EmulatorServer
) -> None:
    rules = [
        {"action": "Retry", "onStatusReason": "Received status from SageMaker: AlgorithmError: *"},
        {"action": "exit", "onStatusReason": "*"},
    ]
    retried = submit_with_rules(batch, rules, " AlgorithmError: boom")
    exited = submit_with_rules(batch, rules, " ValidationError: bad", share="QS3")
    for _ in range(4):
        emulator.advance(60)

    assert len(batch.describe_service_job(jobId=retried)["attempts"]) == 2  # Retry: retried
    assert status(batch, exited) == "FAILED"
    assert len(batch.describe_service_job(jobId=exited)["attempts"]) == 1  # exit: at once


def test_an_unknown_evaluate_on_exit_action_is_refused_naming_the_member(batch: Any) -> None:
    error = refusal(submit_with_rules, batch, [{"action": "Later", "onStatusReason": "*"}], "x")

    assert error.response["Error"]["Message"] == (
        "SubmitServiceJob: retryStrategy.evaluateOnExit[0].action: must be one of RETRY, EXIT "
        "(got 'Later')"
    )


# --- the plain FIFO queue (the sample helper's create_resources) -----------------------------


def test_the_fifo_set_up_is_valid_and_enabled_without_a_policy(batch: Any) -> None:
    fifo_stack(batch, "f")

    env = batch.describe_service_environments(serviceEnvironments=["f-se"])["serviceEnvironments"]
    queue = batch.describe_job_queues(jobQueues=["f-jq"])["jobQueues"][0]

    assert env[0]["capacityLimits"] == [{"maxCapacity": 1, "capacityUnit": "NUM_INSTANCES"}]
    assert (queue["state"], queue["status"]) == ("ENABLED", "VALID")
    assert "schedulingPolicyArn" not in queue


def test_fifo_jobs_dispatch_in_submit_order_within_num_instances(
    batch: Any, emulator: EmulatorServer
) -> None:
    queue = fifo_stack(batch, "g", instances=2)
    first = submit(batch, queue, None, "first", serviceRequestPayload=payload(count=2))
    second = submit(batch, queue, None, "second", schedulingPriority=9)
    third = submit(batch, queue, None, "third", serviceRequestPayload=payload(INSTANCE))
    emulator.advance(5)

    assert [status(batch, j) for j in (first, second, third)] == [
        "RUNNING",
        "RUNNABLE",
        "RUNNABLE",
    ]  # priority 9 does not overtake; two instances of any type fill NUM_INSTANCES=2
    batch.terminate_service_job(jobId=first, reason="make room")
    emulator.advance(5)
    assert [status(batch, j) for j in (first, second, third)] == ["FAILED", "RUNNING", "RUNNING"]
    described = batch.describe_service_job(jobId=second)
    assert "quotaShareName" not in described
    assert described["capacityUsage"] == [{"capacityUnit": "NUM_INSTANCES", "quantity": 1}]


def test_fifo_queue_refusals_name_the_field_and_the_fix(batch: Any) -> None:
    queue = fifo_stack(batch, "h")
    share = refusal(
        batch.create_quota_share,
        quotaShareName="s",
        jobQueue=queue,
        capacityLimits=[{"maxCapacity": 1, "capacityUnit": INSTANCE}],
        resourceSharingConfiguration={"strategy": "RESERVE"},
        preemptionConfiguration={"inSharePreemption": "DISABLED"},
    )
    job = refusal(submit, batch, queue, "QS1", "j")
    mixed = refusal(
        batch.create_service_environment,
        serviceEnvironmentName="mixed",
        serviceEnvironmentType="SAGEMAKER_TRAINING",
        capacityLimits=[
            {"maxCapacity": 1, "capacityUnit": "NUM_INSTANCES"},
            {"maxCapacity": 1, "capacityUnit": INSTANCE},
        ],
    )

    assert share.response["message"] == (
        "jobQueue: job queue 'h-jq' has no quota management (a FIFO queue of a NUM_INSTANCES "
        "service environment); create quota shares on a queue with a quotaSharePolicy"
    )
    assert "quotaShareName: job queue 'h-jq' has no quota management" in job.response["message"]
    assert "leave quotaShareName out" in job.response["message"]
    assert (
        "NUM_INSTANCES (a queue without quota management) and instance types"
        in (mixed.response["message"])
    )


def test_a_fifo_queue_cannot_have_a_scheduling_policy_added(batch: Any) -> None:
    fifo_stack(batch, "i")
    policy = batch.create_scheduling_policy(name="i-fair", fairsharePolicy={"shareDecaySeconds": 0})

    error = refusal(batch.update_job_queue, jobQueue="i-jq", schedulingPolicyArn=policy["arn"])

    assert error.response["message"] == (
        "schedulingPolicyArn: job queue 'i-jq' is a FIFO queue (a NUM_INSTANCES service "
        "environment); its scheduling policy cannot be set"
    )
