"""The AWS quota-management tutorial on seed-demo, over HTTP (docs/aws-semantics.md §2.4)."""

from __future__ import annotations

from typing import Any

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.scheduling import REASON_CROSS_SHARE, REASON_IN_SHARE
from tests.emulator.helpers import status, submit


def test_first_two_dispatch_the_second_borrowing_and_the_third_waits(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    p3, p2, p1 = (submit(batch, queue, "QS1", f"qs1-p{p}", schedulingPriority=p) for p in (3, 2, 1))
    emulator.advance(10)

    assert [status(batch, j) for j in (p3, p2, p1)] == ["RUNNING", "RUNNING", "RUNNABLE"]
    usage = batch.get_job_queue_snapshot(jobQueue=queue)["queueUtilization"]
    by_share = {
        u["quotaShareName"]: u["capacityUsage"][0]["quantity"]
        for u in usage["quotaShareUtilization"]["topCapacityUtilization"]
    }
    assert by_share == {"QS1": 2.0}  # own instance plus the one borrowed from QS2
    assert usage["totalCapacityUsage"] == [{"capacityUnit": "ml.g5.xlarge", "quantity": 2.0}]


def test_lender_job_preempts_the_borrowing_job_back_to_runnable(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    p3, p2, _ = (submit(batch, queue, "QS1", f"qs1-p{p}", schedulingPriority=p) for p in (3, 2, 1))
    emulator.advance(10)
    lender = submit(batch, queue, "QS2", "qs2-job")
    emulator.advance(10)

    assert status(batch, lender) == "RUNNING"
    assert status(batch, p3) == "RUNNING"
    victim = batch.describe_service_job(jobId=p2)
    assert victim["status"] == "RUNNABLE"
    assert victim["statusReason"] == REASON_CROSS_SHARE
    summary = victim["preemptionSummary"]
    assert summary["preemptedAttemptCount"] == 1
    assert summary["recentPreemptedAttempts"][0]["statusReason"] == REASON_CROSS_SHARE
    assert summary["recentPreemptedAttempts"][0]["serviceResourceId"]["name"] == "TrainingJobArn"


def test_raised_priority_preempts_inside_the_share(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    p3, _, p1 = (submit(batch, queue, "QS1", f"qs1-p{p}", schedulingPriority=p) for p in (3, 2, 1))
    emulator.advance(10)
    submit(batch, queue, "QS2", "qs2-job")
    emulator.advance(10)

    updated = batch.update_service_job(jobId=p1, schedulingPriority=4)
    emulator.advance(10)

    assert updated["jobId"] == p1
    raised = batch.describe_service_job(jobId=p1)
    assert (raised["status"], raised["schedulingPriority"]) == ("RUNNING", 4)
    preempted = batch.describe_service_job(jobId=p3)
    assert preempted["status"] == "RUNNABLE"
    assert preempted["statusReason"] == REASON_IN_SHARE


def test_jobs_finish_after_their_duration_and_list_newest_first(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    first = submit(batch, queue, "QS3", "short", tags={"quota.local/duration-seconds": "60"})
    emulator.advance(1)
    second = submit(batch, queue, "QS2", "long", tags={"quota.local/duration-seconds": "600"})
    emulator.advance(120)

    done = batch.describe_service_job(jobId=first)
    assert done["status"] == "SUCCEEDED"
    assert done["stoppedAt"] > done["startedAt"] >= done["createdAt"]
    assert [j["jobId"] for j in batch.list_service_jobs(jobQueue=queue)["jobSummaryList"]] == [
        second
    ]  # no status given: RUNNING jobs only
    every_name = [{"name": "JOB_NAME", "values": ["*"]}]
    listed = batch.list_service_jobs(jobQueue=queue, filters=every_name)
    assert [j["jobId"] for j in listed["jobSummaryList"]] == [second, first]


def test_failed_outcome_tag_makes_the_job_fail(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    job = submit(
        batch,
        queue,
        "QS3",
        "doomed",
        tags={"quota.local/duration-seconds": "30", "quota.local/outcome": "FAILED"},
    )
    emulator.advance(60)

    assert status(batch, job) == "FAILED"
