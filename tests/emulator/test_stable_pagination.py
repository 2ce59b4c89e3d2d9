"""Pages that never skip or repeat: every list operation the emulator serves continues "from the
end of the previous results that returned the nextToken value" (botocore, ``ListServiceJobs``),
whatever is submitted, created, finished or deleted between two pages (over HTTP, boto3).

A token names the last listed item's place in a stable order, not an offset: an offset would
list an item twice after an insert before it, and skip one after a removal before it."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.testing import EmulatorServer
from tests.emulator.helpers import submit
from tests.helpers import ORGS_DIR

# --- ListServiceJobs -------------------------------------------------------------------------


def ids(page: dict[str, Any]) -> list[str]:
    return [j["jobId"] for j in page["jobSummaryList"]]


def test_a_job_submitted_between_two_pages_repeats_no_job(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    jobs = [submit(batch, queue, "QS3", f"job-{n}") for n in range(5)]
    emulator.advance(10)  # QS3 runs one (its 1 instance), four wait
    query = {"jobQueue": queue, "jobStatus": "RUNNABLE", "maxResults": 2}
    first = batch.list_service_jobs(**query)
    submit(batch, queue, "QS3", "late")
    emulator.advance(10)  # the newest job: first in the listing, before the token's place

    rest = []
    token = first["nextToken"]
    while token:
        page = batch.list_service_jobs(**query, nextToken=token)
        rest += ids(page)
        token = page.get("nextToken")

    assert ids(first) + rest == list(reversed(jobs[1:]))  # each waiting job once, newest first


def test_a_job_leaving_the_status_between_two_pages_makes_no_job_skipped(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    jobs = [submit(batch, queue, "QS3", f"job-{n}") for n in range(6)]
    emulator.advance(10)
    query = {"jobQueue": queue, "jobStatus": "RUNNABLE", "maxResults": 2}
    first = batch.list_service_jobs(**query)
    batch.terminate_service_job(jobId=ids(first)[0], reason="not needed")  # RUNNABLE -> FAILED

    second = batch.list_service_jobs(**query, nextToken=first["nextToken"])
    third = batch.list_service_jobs(**query, nextToken=second["nextToken"])

    waiting = list(reversed(jobs[1:]))
    assert ids(first) == waiting[:2]
    assert ids(second) + ids(third) == waiting[2:] and "nextToken" not in third


def test_a_share_filter_pages_past_jobs_finishing_between_pages(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    tags = {"quota.local/duration-seconds": "30"}
    jobs = [submit(batch, queue, "QS1", f"job-{n}", tags=tags) for n in range(3)]
    emulator.advance(5)  # QS1's own instance and QS2's lent one: two RUNNING, one RUNNABLE
    query = {
        "jobQueue": queue,
        "filters": [{"name": "QUOTA_SHARE_NAME", "values": ["QS1"]}],
        "jobStatus": "RUNNING",
        "maxResults": 1,
    }
    running = [j for j in jobs if batch.describe_service_job(jobId=j)["status"] == "RUNNING"]
    first = batch.list_service_jobs(**query)
    emulator.advance(60)  # both running jobs end; the waiting one runs

    second = batch.list_service_jobs(**query, nextToken=first["nextToken"])

    assert ids(first) == [max(running, key=jobs.index)]
    assert ids(second) == []  # the older running job finished; the new one is before the place


def test_a_job_name_listing_keeps_its_groups_in_place_when_a_job_is_submitted(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    for name in ("a", "b", "c"):
        submit(batch, queue, "QS1", name)
        emulator.advance(1)
    query = {"jobQueue": queue, "filters": [{"name": "JOB_NAME", "values": ["*"]}]}
    first = batch.list_service_jobs(**query, maxResults=2)
    submit(batch, queue, "QS1", "c")  # a newer job of the last group: no group moves

    second = batch.list_service_jobs(**query, maxResults=2, nextToken=first["nextToken"])

    listed = [j["jobName"] for j in first["jobSummaryList"] + second["jobSummaryList"]]
    assert listed == ["a", "b", "c", "c"]


# --- ListQuotaShares, DescribeJobQueues, DescribeServiceEnvironments, ListSchedulingPolicies ------


def share(queue: str, name: str) -> dict[str, Any]:
    return {
        "quotaShareName": name,
        "jobQueue": queue,
        "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
        "resourceSharingConfiguration": {"strategy": "RESERVE"},
        "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
    }


def test_a_share_deleted_between_two_pages_makes_no_share_skipped(batch: Any, queue: str) -> None:
    for n in range(3):
        batch.create_quota_share(**share(queue, f"extra-{n}"))
    first = batch.list_quota_shares(jobQueue=queue, maxResults=2)  # QS1, QS2
    listed = first["quotaShares"][0]["quotaShareArn"]
    batch.update_quota_share(quotaShareArn=listed, state="DISABLED")
    batch.delete_quota_share(quotaShareArn=listed)
    batch.create_quota_share(**share(queue, "newest"))  # after the place: listed, once

    pages = batch.get_paginator("list_quota_shares").paginate(
        jobQueue=queue, PaginationConfig={"PageSize": 2, "StartingToken": first["nextToken"]}
    )
    rest = [s["quotaShareName"] for page in pages for s in page["quotaShares"]]

    assert [s["quotaShareName"] for s in first["quotaShares"]] == ["QS1", "QS2"]
    assert rest == ["QS3", "extra-0", "extra-1", "extra-2", "newest"]


def fifo_queue(batch: Any, name: str) -> tuple[str, str]:
    """A FIFO queue (AWS's getting-started set-up): its queue and environment ARNs."""
    env = batch.create_service_environment(
        serviceEnvironmentName=f"{name}-env",
        serviceEnvironmentType="SAGEMAKER_TRAINING",
        capacityLimits=[{"capacityUnit": "NUM_INSTANCES", "maxCapacity": 1}],
    )["serviceEnvironmentArn"]
    created = batch.create_job_queue(
        jobQueueName=f"{name}-queue",
        priority=1,
        jobQueueType="SAGEMAKER_TRAINING",
        serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env}],
    )
    return str(created["jobQueueArn"]), str(env)


def delete_queue(batch: Any, queue: str, env: str) -> None:
    batch.update_job_queue(jobQueue=queue, state="DISABLED")
    batch.delete_job_queue(jobQueue=queue)
    batch.update_service_environment(serviceEnvironment=env, state="DISABLED")
    batch.delete_service_environment(serviceEnvironment=env)


def test_a_queue_deleted_between_two_pages_makes_no_queue_skipped(batch: Any) -> None:
    made = [fifo_queue(batch, f"fifo-{n}") for n in range(3)]  # after seed-demo's queue
    first = batch.describe_job_queues(maxResults=2)  # seed-demo-queue, fifo-0-queue
    delete_queue(batch, *made[0])

    second = batch.describe_job_queues(maxResults=2, nextToken=first["nextToken"])

    assert [q["jobQueueName"] for q in second["jobQueues"]] == ["fifo-1-queue", "fifo-2-queue"]


def test_an_environment_deleted_between_two_pages_makes_no_environment_skipped(
    batch: Any,
) -> None:
    made = [fifo_queue(batch, f"fifo-{n}") for n in range(3)]
    first = batch.describe_service_environments(maxResults=2)  # seed-demo's, fifo-0-env
    delete_queue(batch, *made[0])

    second = batch.describe_service_environments(maxResults=2, nextToken=first["nextToken"])

    listed = [e["serviceEnvironmentName"] for e in second["serviceEnvironments"]]
    assert listed == ["fifo-1-env", "fifo-2-env"]


def test_a_policy_deleted_between_two_pages_makes_no_policy_skipped(batch: Any) -> None:
    made = [
        batch.create_scheduling_policy(
            name=f"policy-{n}", quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"}
        )["arn"]
        for n in range(3)
    ]
    first = batch.list_scheduling_policies(maxResults=2)  # seed-demo's, policy-0
    batch.delete_scheduling_policy(arn=made[0])

    second = batch.list_scheduling_policies(maxResults=2, nextToken=first["nextToken"])

    assert [p["arn"] for p in second["schedulingPolicies"]] == made[1:]


# --- SSM, SageMaker, Service Quotas -----------------------------------------------------------


def test_parameters_provisioned_between_two_pages_repeat_no_parameter(
    emulator: EmulatorServer,
) -> None:
    ssm = emulator.client("ssm")
    query = {"Path": "/quota", "Recursive": True, "MaxResults": 3}
    whole = [
        p["Name"] for p in ssm.get_parameters_by_path(Path="/quota", Recursive=True)["Parameters"]
    ]
    first = ssm.get_parameters_by_path(**query)
    emulator.provision(
        ORGS_DIR / "research.yaml"
    )  # /quota/research/...: before /quota/seed-demo/...

    rest, token = [], first["NextToken"]
    while token:
        page = ssm.get_parameters_by_path(**query, NextToken=token)
        rest += [p["Name"] for p in page["Parameters"]]
        token = page.get("NextToken")

    assert [p["Name"] for p in first["Parameters"]] + rest == whole


def test_a_training_plan_bought_between_two_pages_repeats_no_plan(
    emulator: EmulatorServer,
) -> None:
    sagemaker = emulator.client("sagemaker")

    def buy(name: str, hours: int) -> None:
        (offering,) = sagemaker.search_training_plan_offerings(
            InstanceType="ml.p4d.24xlarge",
            InstanceCount=1,
            DurationHours=hours,
            TargetResources=["training-job"],
        )["TrainingPlanOfferings"]
        sagemaker.create_training_plan(
            TrainingPlanName=name, TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
        )

    buy("b-plan", 24)
    buy("c-plan", 24)
    first = sagemaker.list_training_plans(MaxResults=1)
    buy("a-plan", 24)  # the same start: before the place by name

    second = sagemaker.list_training_plans(MaxResults=1, NextToken=first["NextToken"])

    listed = [p["TrainingPlanName"] for p in first["TrainingPlanSummaries"]]
    listed += [p["TrainingPlanName"] for p in second["TrainingPlanSummaries"]]
    assert listed == ["b-plan", "c-plan"] and "NextToken" not in second


def test_a_quota_set_between_two_pages_repeats_no_quota(emulator: EmulatorServer) -> None:
    quotas = emulator.emulator.service_quotas
    for itype in ("ml.g5.xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge"):
        quotas.set(itype, 4)
    client = emulator.client("service-quotas")
    first = client.list_service_quotas(ServiceCode="sagemaker", MaxResults=1)
    quotas.set("ml.c5.xlarge", 2)  # its name sorts first

    rest, token = [], first["NextToken"]
    while token:
        page = client.list_service_quotas(ServiceCode="sagemaker", MaxResults=1, NextToken=token)
        rest += [q["QuotaName"] for q in page["Quotas"]]
        token = page.get("NextToken")

    listed = [q["QuotaName"] for q in first["Quotas"]] + rest
    assert [name.split()[0] for name in listed] == [
        "ml.g5.xlarge",
        "ml.p4d.24xlarge",
        "ml.p5.48xlarge",
    ]


# --- tokens -------------------------------------------------------------------------------------


def forged(scope: str, key: list[Any]) -> str:
    return base64.b64encode(("q1 " + json.dumps({"s": scope, "k": key})).encode()).decode()


@pytest.mark.parametrize(
    ("service", "operation", "params", "field", "code"),
    [
        (
            "batch",
            "list_service_jobs",
            {"jobQueue": "seed-demo-queue"},
            "nextToken",
            "ClientException",
        ),
        (
            "batch",
            "list_quota_shares",
            {"jobQueue": "seed-demo-queue"},
            "nextToken",
            "ClientException",
        ),
        ("batch", "describe_job_queues", {}, "nextToken", "ClientException"),
        ("batch", "describe_service_environments", {}, "nextToken", "ClientException"),
        ("batch", "list_scheduling_policies", {}, "nextToken", "ClientException"),
        ("ssm", "get_parameters_by_path", {"Path": "/quota"}, "NextToken", "InvalidNextToken"),
        ("sagemaker", "list_training_plans", {}, "NextToken", "ValidationException"),
        (
            "service-quotas",
            "list_service_quotas",
            {"ServiceCode": "sagemaker"},
            "NextToken",
            "InvalidPaginationTokenException",
        ),
    ],
)
def test_rejects_a_token_the_emulator_did_not_issue_with_the_services_code(
    emulator: EmulatorServer,
    service: str,
    operation: str,
    params: dict[str, Any],
    field: str,
    code: str,
) -> None:
    """Each service's own code for a bad token (the one its model declares: SSM
    ``InvalidNextToken``, Service Quotas ``InvalidPaginationTokenException``; Batch declares only
    ``ClientException``), and a message naming the field; an old offset token (``o:2``) is one."""
    old_offset = base64.urlsafe_b64encode(b"o:2").decode()
    with pytest.raises(ClientError) as bad:
        getattr(emulator.client(service), operation)(**params, **{field: old_offset})

    error = bad.value.response["Error"]
    assert (error["Code"], bad.value.response["ResponseMetadata"]["HTTPStatusCode"]) == (code, 400)
    assert error["Message"] == (
        f"{field} {old_offset!r} is not a token this emulator issued for this listing; "
        f"pass the {field} of the previous response unchanged"
    )


def test_rejects_a_token_of_another_listing(batch: Any, queue: str) -> None:
    shares = batch.list_quota_shares(jobQueue=queue, maxResults=1)

    with pytest.raises(ClientError) as bad:
        batch.list_service_jobs(jobQueue=queue, nextToken=shares["nextToken"])

    assert "is not a token this emulator issued for this listing" in str(bad.value)


def test_a_token_with_a_key_of_other_types_lists_nothing_more(batch: Any, queue: str) -> None:
    """A forged token of the right listing whose key cannot be compared: an empty last page,
    never a server error."""
    page = batch.list_quota_shares(
        jobQueue=queue, nextToken=forged(f"ListQuotaShares:{queue}", ["not-a-number"])
    )

    assert page["quotaShares"] == [] and "nextToken" not in page
