"""Batch resources over HTTP: provisioning as the stack would, create/describe/list/update/delete
rules from the domain model, pagination, tags and AWS-format ARNs."""

from __future__ import annotations

import re
from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.testing import EmulatorServer

ARN = re.compile(r"^arn:aws:batch:us-east-1:[0-9]{12}:")
SHARE_ARN = re.compile(
    r"^arn:aws[a-z\-]*:batch:[a-z0-9\-]+:[0-9]{12}:job-queue/[a-zA-Z0-9_\-]{1,128}"
    r"/quota-share/[a-zA-Z0-9_\-]{1,128}$"
)  # the CloudFormation schema's pattern (docs/aws-semantics.md §1.2)


def share_params(queue: str, name: str, **overrides: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "quotaShareName": name,
        "jobQueue": queue,
        "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
        "resourceSharingConfiguration": {"strategy": "LEND"},
        "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
    }
    params.update(overrides)
    return params


def error_of(call: Any, **params: Any) -> dict[str, Any]:
    with pytest.raises(ClientError) as caught:
        call(**params)
    return dict(caught.value.response["Error"])


# --- provisioning ---------------------------------------------------------------------------


def test_provisions_seed_demo_with_contract_names(batch: Any) -> None:
    queue = batch.describe_job_queues(jobQueues=["seed-demo-queue"])["jobQueues"][0]
    env = batch.describe_service_environments()["serviceEnvironments"][0]

    assert (queue["state"], queue["status"], queue["statusReason"]) == (
        "ENABLED",
        "VALID",
        "JobQueue Healthy",
    )
    assert queue["jobQueueType"] == "SAGEMAKER_TRAINING"
    assert queue["schedulingPolicyArn"].endswith(":scheduling-policy/seed-demo-quota-policy")
    assert env["serviceEnvironmentName"] == "seed-demo-training"
    assert queue["serviceEnvironmentOrder"] == [
        {"order": 1, "serviceEnvironment": env["serviceEnvironmentArn"]}
    ]
    # sized from the shares: three shares of one ml.g5.xlarge each
    assert env["capacityLimits"] == [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 3}]
    assert {a["maxTimeSeconds"] for a in queue["jobStateTimeLimitActions"]} == {3600}
    assert queue["tags"] == {"project": "gpu-quota-sharing"}


def test_provisioned_shares_match_the_organisation_file(batch: Any, queue: str) -> None:
    shares = {
        s["quotaShareName"]: s for s in batch.list_quota_shares(jobQueue=queue)["quotaShares"]
    }

    assert list(shares) == ["QS1", "QS2", "QS3"]
    assert shares["QS1"]["resourceSharingConfiguration"] == {
        "strategy": "LEND_AND_BORROW",
        "borrowLimit": 200,
    }
    assert shares["QS1"]["preemptionConfiguration"] == {"inSharePreemption": "ENABLED"}
    assert shares["QS2"]["resourceSharingConfiguration"] == {"strategy": "LEND"}
    assert shares["QS3"]["resourceSharingConfiguration"] == {"strategy": "RESERVE"}
    assert all(SHARE_ARN.match(s["quotaShareArn"]) for s in shares.values())
    assert all(s["status"] == "VALID" and s["state"] == "ENABLED" for s in shares.values())


def test_ssm_parameters_resolve_the_queue_by_organisation(emulator: EmulatorServer) -> None:
    ssm = emulator.client("ssm")

    arn = ssm.get_parameter(Name="/quota/seed-demo/job-queue/arn")["Parameter"]["Value"]
    name = ssm.get_parameter(Name="/quota/seed-demo/job-queue/name")["Parameter"]["Value"]
    pages = ssm.get_paginator("get_parameters_by_path").paginate(
        Path="/quota/seed-demo/quota-shares", Recursive=True, PaginationConfig={"PageSize": 2}
    )
    shares = {p["Name"]: p["Value"] for page in pages for p in page["Parameters"]}

    assert (name, arn) == ("seed-demo-queue", emulator.queue_arn("seed-demo"))
    assert shares == {
        f"/quota/seed-demo/quota-shares/{s}/arn": f"{arn}/quota-share/{s}"
        for s in ("QS1", "QS2", "QS3")
    }


def test_ssm_non_recursive_path_lists_one_level(emulator: EmulatorServer) -> None:
    ssm = emulator.client("ssm")

    found = ssm.get_parameters_by_path(Path="/quota/seed-demo/job-queue")["Parameters"]

    assert sorted(p["Name"] for p in found) == [
        "/quota/seed-demo/job-queue/arn",
        "/quota/seed-demo/job-queue/name",
    ]
    top = ssm.get_parameters_by_path(Path="/quota/seed-demo")["Parameters"]
    assert [p["Name"] for p in top] == ["/quota/seed-demo/training-plans"]


def test_rejects_unknown_ssm_parameter(emulator: EmulatorServer) -> None:
    error = error_of(emulator.client("ssm").get_parameter, Name="/quota/other-org/job-queue/arn")

    assert error["Code"] == "ParameterNotFound"
    assert "/quota/other-org/job-queue/arn" in error["Message"]


# --- quota shares ---------------------------------------------------------------------------


def test_creates_describes_updates_and_deletes_a_share(batch: Any, queue: str) -> None:
    created = batch.create_quota_share(**share_params(queue, "team-x", tags={"team": "x"}))
    arn = created["quotaShareArn"]
    batch.update_quota_share(
        quotaShareArn=arn,
        capacityLimits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}],
        resourceSharingConfiguration={"strategy": "LEND_AND_BORROW", "borrowLimit": 50},
    )
    described = batch.describe_quota_share(quotaShareArn=arn)
    batch.update_quota_share(quotaShareArn=arn, state="DISABLED")
    batch.delete_quota_share(quotaShareArn=arn)

    assert arn == f"{queue}/quota-share/team-x"
    assert described["capacityLimits"] == [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}]
    assert described["resourceSharingConfiguration"] == {
        "strategy": "LEND_AND_BORROW",
        "borrowLimit": 50,
    }
    assert described["tags"] == {"team": "x"}
    assert "team-x" not in [
        s["quotaShareName"] for s in batch.list_quota_shares(jobQueue=queue)["quotaShares"]
    ]
    assert "does not exist" in error_of(batch.describe_quota_share, quotaShareArn=arn)["Message"]


def test_rejects_duplicate_share_name(batch: Any, queue: str) -> None:
    error = error_of(batch.create_quota_share, **share_params(queue, "QS1"))

    assert error["Code"] == "ClientException"
    assert "already exists" in error["Message"]


def test_rejects_borrow_limit_without_lend_and_borrow(batch: Any, queue: str) -> None:
    params = share_params(
        queue, "lender", resourceSharingConfiguration={"strategy": "LEND", "borrowLimit": 100}
    )

    message = error_of(batch.create_quota_share, **params)["Message"]

    assert "borrow_limit is only allowed with strategy LEND_AND_BORROW, not LEND" in message


def test_rejects_share_that_is_not_an_instance_type(batch: Any, queue: str) -> None:
    params = share_params(
        queue, "cpu", capacityLimits=[{"capacityUnit": "NUM_INSTANCES", "maxCapacity": 4}]
    )

    message = error_of(batch.create_quota_share, **params)["Message"]

    assert "'NUM_INSTANCES'" in message and "ml.g5.xlarge" in message


def test_rejects_more_than_five_capacity_limits(batch: Any, queue: str) -> None:
    limits = [{"capacityUnit": f"ml.g{n}.xlarge", "maxCapacity": 1} for n in range(3, 9)]

    message = error_of(
        batch.create_quota_share, **share_params(queue, "wide", capacityLimits=limits)
    )["Message"]

    assert "1 to 5 capacity limits" in message


def test_rejects_the_twenty_first_share(batch: Any, queue: str) -> None:
    for n in range(17):  # seed-demo has 3
        batch.create_quota_share(**share_params(queue, f"extra-{n}"))

    message = error_of(batch.create_quota_share, **share_params(queue, "one-too-many"))["Message"]

    assert "1 to 20 quota shares" in message
    assert len(batch.list_quota_shares(jobQueue=queue)["quotaShares"]) == 20


def test_rejects_share_on_unknown_queue(batch: Any) -> None:
    message = error_of(batch.create_quota_share, **share_params("no-such-queue", "x"))["Message"]

    assert "no job queue 'no-such-queue'" in message and "seed-demo-queue" in message


def test_rejects_deleting_an_enabled_share(batch: Any, queue: str) -> None:
    message = error_of(batch.delete_quota_share, quotaShareArn=f"{queue}/quota-share/QS1")[
        "Message"
    ]

    assert "disable it first" in message


def test_list_quota_shares_pages_with_next_token(batch: Any, queue: str) -> None:
    for n in range(5):
        batch.create_quota_share(**share_params(queue, f"extra-{n}"))

    first = batch.list_quota_shares(jobQueue=queue, maxResults=3)
    pages = batch.get_paginator("list_quota_shares").paginate(
        jobQueue=queue, PaginationConfig={"PageSize": 3}
    )
    names = [s["quotaShareName"] for page in pages for s in page["quotaShares"]]

    assert len(first["quotaShares"]) == 3 and first["nextToken"]
    assert names == ["QS1", "QS2", "QS3"] + [f"extra-{n}" for n in range(5)]


def test_rejects_a_forged_next_token(batch: Any, queue: str) -> None:
    message = error_of(batch.list_quota_shares, jobQueue=queue, nextToken="not-a-token")["Message"]

    assert "nextToken" in message


# --- environments, queues, policies ---------------------------------------------------------


def create_stack(batch: Any, name: str) -> str:
    """A second quota-managed queue created with the API, as the AWS sample does."""
    policy = batch.create_scheduling_policy(
        name=f"{name}-policy", quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"}
    )
    env = batch.create_service_environment(
        serviceEnvironmentName=f"{name}-env",
        serviceEnvironmentType="SAGEMAKER_TRAINING",
        capacityLimits=[{"capacityUnit": "ml.p4d.24xlarge", "maxCapacity": 2}],
    )
    created = batch.create_job_queue(
        jobQueueName=f"{name}-queue",
        priority=1,
        jobQueueType="SAGEMAKER_TRAINING",
        schedulingPolicyArn=policy["arn"],
        serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env["serviceEnvironmentArn"]}],
    )
    return str(created["jobQueueArn"])


def test_creates_a_queue_with_the_api_and_tears_it_down_in_order(batch: Any) -> None:
    queue = create_stack(batch, "other")
    batch.create_quota_share(
        **share_params(
            queue, "team", capacityLimits=[{"capacityUnit": "ml.p4d.24xlarge", "maxCapacity": 2}]
        )
    )
    share = f"{queue}/quota-share/team"
    batch.update_quota_share(quotaShareArn=share, state="DISABLED")
    batch.delete_quota_share(quotaShareArn=share)
    batch.update_job_queue(jobQueue=queue, state="DISABLED")
    batch.delete_job_queue(jobQueue=queue)
    batch.update_service_environment(serviceEnvironment="other-env", state="DISABLED")
    batch.delete_service_environment(serviceEnvironment="other-env")
    policy = [
        p["arn"]
        for p in batch.list_scheduling_policies()["schedulingPolicies"]
        if "other" in p["arn"]
    ]
    batch.delete_scheduling_policy(arn=policy[0])

    assert ARN.match(queue) and queue.endswith(":job-queue/other-queue")
    assert [q["jobQueueName"] for q in batch.describe_job_queues()["jobQueues"]] == [
        "seed-demo-queue"
    ]
    assert len(batch.list_scheduling_policies()["schedulingPolicies"]) == 1


def test_rejects_duplicate_job_queue_and_environment_names(batch: Any) -> None:
    create_stack(batch, "other")

    env_error = error_of(
        batch.create_service_environment,
        serviceEnvironmentName="other-env",
        serviceEnvironmentType="SAGEMAKER_TRAINING",
        capacityLimits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
    )
    policy_error = error_of(
        batch.create_scheduling_policy,
        name="other-policy",
        quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"},
    )

    assert env_error["Message"] == "Object already exists"
    assert policy_error["Message"] == "Object already exists"


def test_rejects_a_second_queue_on_the_same_environment(batch: Any) -> None:
    message = error_of(
        batch.create_job_queue,
        jobQueueName="second",
        priority=1,
        jobQueueType="SAGEMAKER_TRAINING",
        schedulingPolicyArn="arn:aws:batch:us-east-1:123456789012:scheduling-policy/seed-demo-quota-policy",
        serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": "seed-demo-training"}],
    )["Message"]

    assert "already connected to job queue" in message


def test_rejects_deleting_an_enabled_queue(batch: Any, queue: str) -> None:
    assert "disable it first" in error_of(batch.delete_job_queue, jobQueue=queue)["Message"]


def test_rejects_switching_a_quota_share_policy_to_fair_share(batch: Any) -> None:
    arn = batch.list_scheduling_policies()["schedulingPolicies"][0]["arn"]

    message = error_of(
        batch.update_scheduling_policy, arn=arn, fairsharePolicy={"shareDecaySeconds": 60}
    )["Message"]

    assert "cannot be switched" in message


def test_tags_resources_by_arn(batch: Any, queue: str) -> None:
    batch.tag_resource(resourceArn=queue, tags={"owner": "ml-platform"})
    batch.untag_resource(resourceArn=queue, tagKeys=["project"])

    assert batch.list_tags_for_resource(resourceArn=queue)["tags"] == {"owner": "ml-platform"}


def test_rejects_tags_with_the_aws_prefix(batch: Any, queue: str) -> None:
    message = error_of(batch.tag_resource, resourceArn=queue, tags={"aws:owner": "x"})["Message"]

    assert "may not start with 'aws:'" in message
