"""Property: the HTTP emulator adds no scheduling of its own.

Random workloads submitted through boto3 over HTTP end in the same statuses, priorities and
preemption counts as the same requests given directly to a scheduler core of the same queue.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quota_constructs.config import load_organisation
from quota_constructs.local.submit_request import request_from_submit
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.scheduling import Job, Scheduler, SchedulerOptions
from tests.emulator.helpers import payload


@dataclass(frozen=True)
class Step:
    """Wait ``wait_s``, then submit a job (or raise an earlier job's priority)."""

    wait_s: int
    share: str
    count: int
    priority: int
    duration_s: int
    raise_job: int | None


steps = st.lists(
    st.builds(
        Step,
        wait_s=st.integers(0, 120),
        share=st.sampled_from(["QS1", "QS2", "QS3"]),
        count=st.integers(1, 2),
        priority=st.integers(0, 5),
        duration_s=st.integers(30, 600),
        raise_job=st.none() | st.integers(0, 20),
    ),
    min_size=1,
    max_size=12,
)


def submit_params(index: int, step: Step) -> dict[str, Any]:
    return {
        "jobName": f"job-{index}",
        "jobQueue": "seed-demo-queue",
        "serviceJobType": "SAGEMAKER_TRAINING",
        "serviceRequestPayload": payload(count=step.count),
        "quotaShareName": step.share,
        "schedulingPriority": step.priority,
        "tags": {"quota.local/duration-seconds": str(step.duration_s)},
    }


def run_over_http(workload: list[Step]) -> list[tuple[str, int, int]]:
    with EmulatorServer(org_files=[SEED_DEMO]) as emu:
        batch = emu.client("batch")
        ids: list[str] = []
        for index, step in enumerate(workload):
            emu.advance(step.wait_s)
            if step.raise_job is not None and step.raise_job < len(ids):
                batch.update_service_job(jobId=ids[step.raise_job], schedulingPriority=9)
            ids.append(batch.submit_service_job(**submit_params(index, step))["jobId"])
        emu.advance(300)
        out = []
        for job_id in ids:
            job = batch.describe_service_job(jobId=job_id)
            preempted = job.get("preemptionSummary", {}).get("preemptedAttemptCount", 0)
            out.append((job["status"], job["schedulingPriority"], preempted))
        return out


def run_on_the_core(workload: list[Step]) -> list[tuple[str, int, int]]:
    org = load_organisation(SEED_DEMO)
    limits = SchedulerOptions.time_limits_for(org.queue)
    core = Scheduler(
        queue_name="seed-demo-queue",
        shares=org.queue.shares,
        service_environment=org.queue.service_environment_capacity(),
        options=SchedulerOptions(runnable_time_limits=limits),
    )
    now = 0.0
    jobs: list[Job] = []
    for index, step in enumerate(workload):
        now += step.wait_s
        core.advance(now)
        if step.raise_job is not None and step.raise_job < len(jobs):
            core.update_priority(jobs[step.raise_job].job_id, 9, now=now)
        request = replace(request_from_submit(submit_params(index, step)), job_id=f"j{index}")
        jobs.append(core.submit(request, now=now))
    core.advance(now + 300)
    return [(j.status.value, j.priority, len(j.preemptions)) for j in jobs]


@pytest.mark.slow
@settings(max_examples=25)
@given(steps)
def test_http_and_core_agree_on_every_job(workload: list[Step]) -> None:
    assert run_over_http(workload) == run_on_the_core(workload)
