"""What the emulator answers is what botocore's output shapes and member documentation say
(issue 42): no internal share of a FIFO queue on the wire, job ids where the member says "service
job IDs", no empty ``tags`` map where the member has a minimum of 1, no emulator text in a
waiting job's ``statusReason``, no ``startedAt`` before a job starts, and capacity and borrow
limits up to the API's ``Integer`` where AWS documents no maximum (over HTTP, boto3)."""

from __future__ import annotations

from typing import Any

from quota_constructs.local.events import STATE_CHANGE, BatchEvents, EventSink
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import API_INTEGER_MAX
from tests.emulator.helpers import fifo_stack, refusal, submit

# --- FIFO queues: no "(queue)" share -------------------------------------------------------------


def listen(emulator: EmulatorServer) -> EventSink:
    """The emulator's EventBridge events from now on."""
    sink = EventSink()
    inner = emulator.emulator
    inner.jobs.listeners.append(BatchEvents(inner.account, inner.clock, sink))
    return sink


def test_a_fifo_queues_events_name_no_quota_share(emulator: EmulatorServer, batch: Any) -> None:
    sink = listen(emulator)
    queue = fifo_stack(batch, "f")
    submit(batch, queue, None, "first")
    submit(batch, queue, None, "second")
    emulator.advance(5)

    changes = sink.of_type(STATE_CHANGE)

    assert {e["detail"]["status"] for e in changes} >= {"RUNNABLE", "RUNNING"}
    assert all("quotaShareName" not in e["detail"] for e in changes)


def test_a_fifo_queues_snapshot_lists_no_quota_share(emulator: EmulatorServer, batch: Any) -> None:
    queue = fifo_stack(batch, "f")
    submit(batch, queue, None, "first")
    waiting = submit(batch, queue, None, "second")
    emulator.advance(5)

    snapshot = batch.get_job_queue_snapshot(jobQueue=queue)

    assert [j["jobArn"].rsplit("/", 1)[1] for j in snapshot["frontOfQueue"]["jobs"]] == [waiting]
    assert snapshot["frontOfQuotaShares"].get("quotaShares", {}) == {}
    assert snapshot["queueUtilization"]["totalCapacityUsage"] == [
        {"capacityUnit": "NUM_INSTANCES", "quantity": 1}
    ]
    utilization = snapshot["queueUtilization"].get("quotaShareUtilization", {})
    assert utilization.get("topCapacityUtilization", []) == []


def test_a_quota_share_filter_finds_no_fifo_job(emulator: EmulatorServer, batch: Any) -> None:
    queue = fifo_stack(batch, "f")
    submit(batch, queue, None, "first")
    emulator.advance(5)
    internal = [{"name": "QUOTA_SHARE_NAME", "values": ["(queue)"]}]

    listed = batch.list_service_jobs(jobQueue=queue, jobStatus="RUNNING", filters=internal)

    assert listed["jobSummaryList"] == []
    assert len(batch.list_service_jobs(jobQueue=queue)["jobSummaryList"]) == 1  # it runs


# --- TerminateServiceJobs: "service job IDs" -----------------------------------------------------


def test_terminate_service_jobs_lists_the_ids_of_jobs_named_by_arn(batch: Any, queue: str) -> None:
    job = submit(batch, queue, "QS1", "doomed")
    arn = batch.describe_service_job(jobId=job)["jobArn"]
    gone = "arn:aws:batch:us-east-1:123456789012:service-job/00000000-0000-4000-8000-000000000000"

    answer = batch.terminate_service_jobs(jobs=[arn, gone], reason="done")

    assert answer["successful"] == [job, "00000000-0000-4000-8000-000000000000"]
    assert answer["errors"] == []


# --- tags: "min": 1 -------------------------------------------------------------------------------


def test_untagged_resources_and_jobs_answer_no_tags_member(batch: Any, queue: str) -> None:
    fifo = fifo_stack(batch, "f")  # created without tags, as AWS's sample does
    job = submit(batch, queue, "QS1", "plain")
    described = batch.describe_job_queues(jobQueues=[fifo])["jobQueues"][0]
    env = batch.describe_service_environments(serviceEnvironments=["f-se"])["serviceEnvironments"]

    assert "tags" not in described and "tags" not in env[0]
    assert "tags" not in batch.describe_service_job(jobId=job)
    assert "tags" not in batch.list_tags_for_resource(resourceArn=fifo)
    batch.tag_resource(resourceArn=fifo, tags={"team": "a"})
    assert batch.list_tags_for_resource(resourceArn=fifo)["tags"] == {"team": "a"}


# --- startedAt ------------------------------------------------------------------------------------


def test_started_at_is_left_out_until_the_job_starts(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    submit(batch, queue, "QS3", "runs")
    waits = submit(batch, queue, "QS3", "waits")
    emulator.advance(5)

    before = batch.describe_service_job(jobId=waits)
    listed = batch.list_service_jobs(jobQueue=queue, jobStatus="RUNNABLE")["jobSummaryList"]

    assert before["status"] == "RUNNABLE" and "startedAt" not in before
    assert "startedAt" not in listed[0]


# --- capacity and borrow limits: no documented maximum --------------------------------------------


def big_share(queue: str, name: str, capacity: int, borrow: int) -> dict[str, Any]:
    return {
        "quotaShareName": name,
        "jobQueue": queue,
        "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": capacity}],
        "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": borrow},
        "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
    }


def test_capacity_and_borrow_limits_above_the_old_stated_bounds_are_accepted(
    batch: Any, queue: str
) -> None:
    arn = batch.create_quota_share(**big_share(queue, "huge", 20_000, 2_000_000))["quotaShareArn"]
    batch.update_service_environment(
        serviceEnvironment="seed-demo-training",
        capacityLimits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 50_000}],
    )

    described = batch.describe_quota_share(quotaShareArn=arn)
    env = batch.describe_service_environments(serviceEnvironments=["seed-demo-training"])

    assert described["capacityLimits"] == [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 20_000}]
    assert described["resourceSharingConfiguration"]["borrowLimit"] == 2_000_000
    assert env["serviceEnvironments"][0]["capacityLimits"][0]["maxCapacity"] == 50_000


def test_rejects_a_capacity_above_the_apis_integer(batch: Any, queue: str) -> None:
    message = refusal(batch.create_quota_share, **big_share(queue, "huge", API_INTEGER_MAX + 1, -1))

    assert "max capacity" in message and "between 1 and 2147483647" in message
