"""What DescribeServiceJob and GetJobQueueSnapshot show of the core's state, over HTTP: blocked
jobs ended head first by the queue's time limit, a job out of preemption retries terminated,
its preemptions newest first, and the shares' utilization most used first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quota_constructs.advisor.simulate import SimulationOptions, simulated_scheduler
from quota_constructs.advisor.workload import WorkloadJob
from quota_constructs.config import load_organisation
from quota_constructs.local.testing import EmulatorServer
from tests.emulator.helpers import status, submit
from tests.helpers import ORGS_DIR, payload, runs_for

DAY = 86_400


def test_time_limits_end_blocked_jobs_head_first(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    """seed-demo's queue terminates a RUNNABLE job blocked for 60 minutes at the head."""
    big = payload(count=4)  # more than the service environment's 3 instances
    first = submit(batch, queue, "QS1", "first", serviceRequestPayload=big, schedulingPriority=5)
    second = submit(batch, queue, "QS1", "second", serviceRequestPayload=big)
    emulator.advance(1)
    emulator.advance(3600)
    assert (status(batch, first), status(batch, second)) == ("FAILED", "RUNNABLE")
    emulator.advance(3600)
    assert status(batch, second) == "FAILED"


def test_out_of_preemption_retries_it_is_terminated_preemptions_newest_first(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    """QS1's borrower of QS2's instance is reclaimed twice by short QS2 jobs; with one retry
    it is terminated at the second preemption."""
    submit(
        batch,
        queue,
        "QS1",
        "own",
        schedulingPriority=3,
        serviceRequestPayload=payload(runtime_s=DAY),
    )
    borrower = submit(
        batch,
        queue,
        "QS1",
        "borrower",
        schedulingPriority=2,
        serviceRequestPayload=payload(runtime_s=DAY),
        preemptionConfiguration={"preemptionRetriesBeforeTermination": 1},
    )
    emulator.advance(10)
    for n in range(2):
        submit(batch, queue, "QS2", f"lender-{n}", tags=runs_for(60))
        emulator.advance(10)
        emulator.advance(120)

    job = batch.describe_service_job(jobId=borrower)
    assert (job["status"], job["isTerminated"]) == ("FAILED", True)
    recent = job["preemptionSummary"]["recentPreemptedAttempts"]
    assert job["preemptionSummary"]["preemptedAttemptCount"] == len(recent) == 2
    assert recent[0]["stoppedAt"] > recent[1]["stoppedAt"]  # element 0 is the newest
    assert recent[0]["serviceResourceId"] == job["attempts"][-1]["serviceResourceId"]


def test_top_capacity_utilization_lists_the_most_used_share_first(tmp_path: Path) -> None:
    org = tmp_path / "usage.yaml"
    org.write_text(
        "organisation: usage\n"
        "job_queue: {priority: 1}\n"
        "shares:\n"
        "  - {name: small, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}\n"
        "  - {name: large, capacity: {ml.g5.xlarge: 3}, strategy: RESERVE}\n"
    )
    with EmulatorServer(org_files=[org]) as server:
        batch = server.client("batch")
        queue = server.queue_arn("usage")
        submit(batch, queue, "small", "s", serviceRequestPayload=payload(runtime_s=DAY))
        submit(batch, queue, "large", "l", serviceRequestPayload=payload(count=3, runtime_s=DAY))
        server.advance(10)
        snapshot = batch.get_job_queue_snapshot(jobQueue=queue)
    top = snapshot["queueUtilization"]["quotaShareUtilization"]["topCapacityUtilization"]
    assert [(u["quotaShareName"], u["capacityUsage"][0]["quantity"]) for u in top] == [
        ("large", 3),
        ("small", 1),
    ]


def test_the_simulator_ends_blocked_jobs_head_first_as_the_emulator_does(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    """One core: seed-demo's 60-minute limit ends QS1's blocked jobs one hour apart, head first,
    in the simulator as on the emulator."""
    big = payload(count=4)
    ids = [
        submit(batch, queue, "QS1", f"p{p}", serviceRequestPayload=big, schedulingPriority=p)
        for p in (1, 9, 5)
    ]
    emulator.advance(4 * 3600)
    ended = [batch.describe_service_job(jobId=j) for j in ids]
    on_emulator = [(j["stoppedAt"] - j["createdAt"]) / 1000 for j in ended]

    workload = [WorkloadJob(0.0, "QS1", "ml.g5.xlarge", 4, 600.0, p) for p in (1, 9, 5)]
    org = load_organisation(ORGS_DIR / "seed-demo.yaml")
    simulated = simulated_scheduler(org, workload, options=SimulationOptions()).jobs
    in_simulator = [j.stopped_at for j in simulated]

    assert on_emulator == in_simulator == [3 * 3600, 3600, 2 * 3600]
    assert all(j.status.value == "FAILED" and j.is_terminated for j in simulated)
