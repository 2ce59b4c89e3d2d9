"""TerminateServiceJob(s) over HTTP: a request that terminates jobs places none, so a bulk
request never dispatches the jobs it is terminating, and a RUNNING job's instance goes to the
next job on the scheduler's next tick, not inside the request that stopped it."""

from __future__ import annotations

from typing import Any

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.scheduling import JobStatus, SchedulerEvent
from tests.emulator.helpers import status, submit
from tests.helpers import payload

QUEUE_NAME = "seed-demo-queue"


def scheduled_during(emulator: EmulatorServer) -> list[str]:
    """Ids of the jobs the queue's scheduler makes SCHEDULED from now on."""
    seen: list[str] = []

    def note(event: SchedulerEvent) -> None:
        if event.status is JobStatus.SCHEDULED:
            seen.append(event.job.job_id)

    emulator.emulator.jobs.schedulers[QUEUE_NAME].subscribe(note)
    return seen


def test_terminate_service_jobs_dispatches_none_of_the_jobs_it_terminates(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    """The issue's case: 1 RUNNING and 49 RUNNABLE jobs in one call: no SCHEDULED event, no
    attempt (no training job) for any of the 49."""
    jobs = [
        submit(batch, queue, "QS3", f"j{i}", serviceRequestPayload=payload(runtime_s=86_400))
        for i in range(50)
    ]
    emulator.advance(5)
    assert status(batch, jobs[0]) == "RUNNING"
    scheduled = scheduled_during(emulator)

    answer = batch.terminate_service_jobs(jobs=jobs, reason="cancel the sweep")
    emulator.advance(5)

    assert answer["errors"] == [] and len(answer["successful"]) == 50
    assert scheduled == []
    described = [batch.describe_service_job(jobId=j) for j in jobs]
    assert {(d["status"], d["isTerminated"]) for d in described} == {("FAILED", True)}
    assert [len(d["attempts"]) for d in described] == [1] + [0] * 49


def test_a_terminated_running_jobs_instance_is_placed_on_the_next_tick(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    running = submit(batch, queue, "QS3", "first", serviceRequestPayload=payload(runtime_s=86_400))
    waiting = submit(batch, queue, "QS3", "second")
    emulator.advance(5)

    batch.terminate_service_job(jobId=running, reason="stop it")

    assert status(batch, running) == "FAILED"
    assert status(batch, waiting) == "RUNNABLE"  # not handed on inside the request
    emulator.advance(0)
    assert status(batch, waiting) == "SCHEDULED"
