"""Documented rules of the resource operations, over HTTP: each test shows one sentence of
botocore's documentation holding (listed with its sentence in ``documented_rules.py`` and
docs/emulator.md)."""

from __future__ import annotations

from typing import Any

import pytest

from quota_constructs.local.testing import EmulatorServer
from tests.emulator.helpers import refusal, submit

POLICY_ARN = "arn:aws:batch:us-east-1:123456789012:scheduling-policy/seed-demo-quota-policy"
QUOTA_POLICY = {"idleResourceAssignmentStrategy": "FIFO"}
ONE_G5 = [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}]


def new_environment(batch: Any, name: str, **extra: Any) -> str:
    created = batch.create_service_environment(
        serviceEnvironmentName=name,
        serviceEnvironmentType="SAGEMAKER_TRAINING",
        capacityLimits=ONE_G5,
        **extra,
    )
    return str(created["serviceEnvironmentArn"])


def queue_params(name: str, environment: str, **extra: Any) -> dict[str, Any]:
    return {
        "jobQueueName": name,
        "priority": 1,
        "jobQueueType": "SAGEMAKER_TRAINING",
        "schedulingPolicyArn": POLICY_ARN,
        "serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": environment}],
        **extra,
    }


def share_params(queue: str, name: str, **extra: Any) -> dict[str, Any]:
    return {
        "quotaShareName": name,
        "jobQueue": queue,
        "capacityLimits": ONE_G5,
        "resourceSharingConfiguration": {"strategy": "LEND"},
        "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
        **extra,
    }


# --- names --------------------------------------------------------------------------------------

NAMED: dict[str, Any] = {
    "CreateSchedulingPolicy.name": lambda b, q, n: b.create_scheduling_policy(
        name=n, quotaSharePolicy=QUOTA_POLICY
    ),
    "CreateServiceEnvironment.serviceEnvironmentName": lambda b, q, n: new_environment(b, n),
    "CreateJobQueue.jobQueueName": lambda b, q, n: b.create_job_queue(
        **queue_params(n, new_environment(b, f"env{len(n)}"))
    ),
    "CreateQuotaShare.quotaShareName": lambda b, q, n: b.create_quota_share(**share_params(q, n)),
    "SubmitServiceJob.jobName": lambda b, q, n: submit(b, q, "QS1", n),
}


@pytest.mark.parametrize("member", list(NAMED))
def test_name_rule(batch: Any, queue: str, member: str) -> None:
    create = NAMED[member]

    refused = [refusal(create, b=batch, q=queue, n=bad) for bad in ("a" * 129, "team.a", "a b")]
    create(batch, queue, "A_b-9" + "z" * 123)  # 128 characters of the allowed kinds

    assert all("1-128 characters of letters, digits, '-' or '_'" in m for m in refused)


# --- scheduling policies ------------------------------------------------------------------------


def test_rejects_a_policy_with_both_kinds(batch: Any) -> None:
    message = refusal(
        batch.create_scheduling_policy,
        name="both",
        quotaSharePolicy=QUOTA_POLICY,
        fairsharePolicy={"shareDecaySeconds": 600},
    )

    assert "either quotaSharePolicy or fairsharePolicy, not both" in message


def test_rejects_switching_a_fair_share_policy_to_quota_shares(batch: Any) -> None:
    arn = batch.create_scheduling_policy(name="fair", fairsharePolicy={"shareDecaySeconds": 600})[
        "arn"
    ]

    message = refusal(batch.update_scheduling_policy, arn=arn, quotaSharePolicy=QUOTA_POLICY)

    assert "fair-share policy; its type cannot be switched" in message


FAIR_SHARE_BOUNDS = {
    "shareDecaySeconds": ({"shareDecaySeconds": 604_800}, {"shareDecaySeconds": 604_801}),
    "computeReservation": ({"computeReservation": 99}, {"computeReservation": 100}),
    "weightFactor": (
        {"shareDistribution": [{"shareIdentifier": "a", "weightFactor": 999.9999}]},
        {"shareDistribution": [{"shareIdentifier": "a", "weightFactor": 0.00009}]},
    ),
    "shareIdentifier": (
        {"shareDistribution": [{"shareIdentifier": "A" * 255 + "*"}]},
        {"shareDistribution": [{"shareIdentifier": "team-a"}]},
    ),
    "overlap": (
        {"shareDistribution": [{"shareIdentifier": "UserA*"}, {"shareIdentifier": "UserB1"}]},
        {"shareDistribution": [{"shareIdentifier": "UserA*"}, {"shareIdentifier": "UserA1"}]},
    ),
}


@pytest.mark.parametrize("rule", list(FAIR_SHARE_BOUNDS))
def test_fair_share_policy_rule(batch: Any, rule: str) -> None:
    inside, outside = FAIR_SHARE_BOUNDS[rule]

    message = refusal(batch.create_scheduling_policy, name="out", fairsharePolicy=outside)
    batch.create_scheduling_policy(name="in", fairsharePolicy=inside)

    assert message.startswith("CreateSchedulingPolicy: fairsharePolicy.")
    expected = "can't overlap" if rule == "overlap" else rule
    assert expected in message


def test_rejects_describing_more_than_100_policies(batch: Any) -> None:
    arns = [f"{POLICY_ARN}{n}" for n in range(101)]

    message = refusal(batch.describe_scheduling_policies, arns=arns)
    batch.describe_scheduling_policies(arns=arns[:100])

    assert "arns: a list of up to 100 entries (got 101)" in message


def test_rejects_deleting_a_policy_a_queue_uses(batch: Any) -> None:
    message = refusal(batch.delete_scheduling_policy, arn=POLICY_ARN)

    assert "is used by job queue(s) seed-demo-queue" in message


# --- service environments -----------------------------------------------------------------------


def test_rejects_num_instances_as_a_quota_capacity_unit(batch: Any) -> None:
    batch.create_service_environment(
        serviceEnvironmentName="counted",
        serviceEnvironmentType="SAGEMAKER_TRAINING",
        capacityLimits=[{"capacityUnit": "NUM_INSTANCES", "maxCapacity": 4}],
    )  # a FIFO queue's environment
    policy = batch.create_scheduling_policy(
        name="counted-policy", quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"}
    )
    message = refusal(
        batch.create_job_queue,
        jobQueueName="counted-queue",
        priority=1,
        jobQueueType="SAGEMAKER_TRAINING",
        serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": "counted"}],
        schedulingPolicyArn=policy["arn"],
    )

    assert message == (
        "schedulingPolicyArn: service environment 'counted' counts capacity in NUM_INSTANCES; "
        "quota management ('counted-policy') needs instance-type capacity limits; leave "
        "schedulingPolicyArn out for a FIFO queue, or give the environment instance-type limits "
        "such as ml.g5.xlarge"
    )


def test_a_new_environment_is_enabled_by_default(batch: Any) -> None:
    arn = new_environment(batch, "fresh")

    (env,) = batch.describe_service_environments(serviceEnvironments=[arn])["serviceEnvironments"]

    assert env["state"] == "ENABLED"


def test_a_disabled_environment_takes_no_new_jobs(batch: Any, queue: str) -> None:
    batch.update_service_environment(serviceEnvironment="seed-demo-training", state="DISABLED")

    message = refusal(submit, batch=batch, queue=queue, share="QS1", name="late")

    assert "service environment 'seed-demo-training'" in message and "DISABLED" in message


def test_a_disabled_environment_places_no_queued_job(
    batch: Any, queue: str, emulator: EmulatorServer
) -> None:
    tags = {"quota.local/duration-seconds": "60"}
    running = submit(batch, queue, "QS3", "running", tags=tags)
    queued = submit(batch, queue, "QS3", "queued", tags=tags)
    emulator.advance(5)
    batch.update_service_environment(serviceEnvironment="seed-demo-training", state="DISABLED")
    emulator.advance(120)

    described = batch.describe_service_job(jobId=queued)
    assert batch.describe_service_job(jobId=running)["status"] == "SUCCEEDED"  # placed: runs on
    assert described["status"] == "RUNNABLE" and "statusReason" not in described  # as AWS
    assert emulator.explain(queued)["pending"]["message"] == (
        "the service environment is DISABLED: no job is placed until it is ENABLED"
    )
    batch.update_service_environment(serviceEnvironment="seed-demo-training", state="ENABLED")
    emulator.advance(5)
    assert batch.describe_service_job(jobId=queued)["status"] == "RUNNING"


def test_rejects_deleting_an_environment_enabled_or_in_use(batch: Any) -> None:
    enabled = refusal(batch.delete_service_environment, serviceEnvironment="seed-demo-training")
    batch.update_service_environment(serviceEnvironment="seed-demo-training", state="DISABLED")
    in_use = refusal(batch.delete_service_environment, serviceEnvironment="seed-demo-training")

    assert "disable it first" in enabled
    assert "still used by job queue" in in_use


# --- job queues ---------------------------------------------------------------------------------


def test_a_disabled_queue_takes_no_new_jobs_but_runs_its_own(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    running = submit(batch, queue, "QS3", "early", tags={"quota.local/duration-seconds": "60"})
    batch.update_job_queue(jobQueue=queue, state="DISABLED")

    message = refusal(submit, batch=batch, queue=queue, share="QS3", name="late")
    emulator.advance(120)

    assert "DISABLED and accepts no new jobs" in message
    assert batch.describe_service_job(jobId=running)["status"] == "SUCCEEDED"


def test_a_queue_policy_can_be_replaced_but_not_removed(batch: Any, queue: str) -> None:
    other = batch.create_scheduling_policy(name="other", quotaSharePolicy=QUOTA_POLICY)["arn"]

    message = refusal(batch.update_job_queue, jobQueue=queue, schedulingPolicyArn="")
    batch.update_job_queue(jobQueue=queue, schedulingPolicyArn=other)

    assert "can be replaced but not removed" in message
    (described,) = batch.describe_job_queues(jobQueues=[queue])["jobQueues"]
    assert described["schedulingPolicyArn"] == other


def test_rejects_a_queue_with_service_and_compute_environments(batch: Any) -> None:
    params = queue_params(
        "mixed",
        new_environment(batch, "mixed-env"),
        computeEnvironmentOrder=[{"order": 1, "computeEnvironment": "ce"}],
    )

    message = refusal(batch.create_job_queue, **params)

    assert "can't have both a serviceEnvironmentOrder and a computeEnvironmentOrder" in message


def test_rejects_a_queue_that_is_not_sagemaker_training(batch: Any) -> None:
    params = queue_params("ecs", new_environment(batch, "ecs-env"), jobQueueType="ECS")

    message = refusal(batch.create_job_queue, **params)

    assert "SAGEMAKER_TRAINING queues only" in message


def time_limit(seconds: int, action: str = "TERMINATE") -> list[dict[str, Any]]:
    return [
        {
            "reason": "MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT",
            "state": "RUNNABLE",
            "maxTimeSeconds": seconds,
            "action": action,
        }
    ]


def test_time_limit_is_ten_minutes_to_a_day(batch: Any) -> None:
    too_short, too_long = (
        refusal(
            batch.create_job_queue,
            **queue_params(
                f"q{s}", new_environment(batch, f"e{s}"), jobStateTimeLimitActions=time_limit(s)
            ),
        )
        for s in (599, 86_401)
    )
    for seconds in (600, 86_400):
        params = queue_params(f"ok{seconds}", new_environment(batch, f"ok{seconds}"))
        batch.create_job_queue(**params, jobStateTimeLimitActions=time_limit(seconds))

    assert "between 600 and 86400" in too_short and "between 600 and 86400" in too_long


def test_time_limit_action_on_sagemaker_training_is_terminate(batch: Any) -> None:
    params = queue_params("cancel", new_environment(batch, "cancel-env"))

    message = refusal(
        batch.create_job_queue, **params, jobStateTimeLimitActions=time_limit(600, "CANCEL")
    )

    assert "SAGEMAKER_TRAINING queues only support TERMINATE" in message


def test_rejects_describing_more_than_100_queues(batch: Any, queue: str) -> None:
    message = refusal(batch.describe_job_queues, jobQueues=[queue] * 101)
    batch.describe_job_queues(jobQueues=[queue] * 100)

    assert "jobQueues: a list of up to 100 entries (got 101)" in message


# --- quota shares -------------------------------------------------------------------------------


def test_borrow_limit_defaults_to_unlimited(batch: Any, queue: str) -> None:
    sharing = {"strategy": "LEND_AND_BORROW"}
    arn = batch.create_quota_share(
        **share_params(queue, "borrower", resourceSharingConfiguration=sharing)
    )["quotaShareArn"]

    described = batch.describe_quota_share(quotaShareArn=arn)

    assert described["resourceSharingConfiguration"]["borrowLimit"] == -1


def test_a_new_share_is_enabled_by_default(batch: Any, queue: str) -> None:
    arn = batch.create_quota_share(**share_params(queue, "fresh"))["quotaShareArn"]

    assert batch.describe_quota_share(quotaShareArn=arn)["state"] == "ENABLED"


def test_a_disabled_share_takes_no_new_jobs_but_runs_its_own(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    running = submit(batch, queue, "QS3", "early", tags={"quota.local/duration-seconds": "60"})
    batch.update_quota_share(quotaShareArn=f"{queue}/quota-share/QS3", state="DISABLED")

    message = refusal(submit, batch=batch, queue=queue, share="QS3", name="late")
    emulator.advance(120)

    assert "DISABLED and accepts no new jobs" in message
    assert batch.describe_service_job(jobId=running)["status"] == "SUCCEEDED"


# --- tags ---------------------------------------------------------------------------------------


def test_tagging_leaves_other_tags_unchanged(batch: Any, queue: str) -> None:
    before = batch.list_tags_for_resource(resourceArn=queue)["tags"]

    batch.tag_resource(resourceArn=queue, tags={"owner": "ml-platform"})

    assert before and batch.list_tags_for_resource(resourceArn=queue)["tags"] == {
        **before,
        "owner": "ml-platform",
    }


def test_deleting_a_resource_deletes_its_tags(batch: Any, queue: str) -> None:
    arn = batch.create_quota_share(**share_params(queue, "gone", tags={"team": "a"}))[
        "quotaShareArn"
    ]
    batch.update_quota_share(quotaShareArn=arn, state="DISABLED")
    batch.delete_quota_share(quotaShareArn=arn)

    message = refusal(batch.list_tags_for_resource, resourceArn=arn)

    assert f"no resource {arn!r}" in message


# --- pagination ---------------------------------------------------------------------------------

PAGED = {
    "ListServiceJobs": lambda b, q, n: b.list_service_jobs(jobQueue=q, maxResults=n),
    "ListQuotaShares": lambda b, q, n: b.list_quota_shares(jobQueue=q, maxResults=n),
    "ListSchedulingPolicies": lambda b, q, n: b.list_scheduling_policies(maxResults=n),
    "DescribeJobQueues": lambda b, q, n: b.describe_job_queues(maxResults=n),
    "DescribeServiceEnvironments": lambda b, q, n: b.describe_service_environments(maxResults=n),
}


@pytest.mark.parametrize("operation", list(PAGED))
def test_max_results_is_1_to_100(batch: Any, queue: str, operation: str) -> None:
    page = PAGED[operation]

    refused = [refusal(page, b=batch, q=queue, n=n) for n in (0, 101)]
    for n in (1, 100):
        page(batch, queue, n)

    assert all("maxResults: must be between 1 and 100" in m for m in refused)
