"""One timetable in the core: the emulator (boto3 over HTTP, virtual clock) and the simulator
flip a share on its calendar at the same instants and end every job alike, grace included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import pytest

from quota_constructs.advisor.simulate import (
    SimulationOptions,
    simulated_scheduler,
)
from quota_constructs.advisor.workload import WorkloadJob
from quota_constructs.config import load_organisation
from quota_constructs.local.emulator import Emulator
from quota_constructs.local.state.clock import VirtualClock
from quota_constructs.local.state.job_service import DispatchMode
from quota_constructs.local.testing import DUMMY_CREDENTIALS
from quota_constructs.local.wire.server import start_server
from quota_constructs.model import SIMULATION_START
from quota_constructs.scheduling import CalendarFlip
from tests.emulator.helpers import submit
from tests.helpers import payload, runs_for

ORG = """organisation: cal-agree
shares:
  - name: weekend
    capacity: {ml.g5.xlarge: 1}
    strategy: LEND
    schedule: [{days: [sat, sun], strategy: RESERVE}]
  - name: weekday
    capacity: {ml.g5.xlarge: 1}
    strategy: LEND_AND_BORROW
"""
SUBMIT_S = 5 * 86400.0 - 1800  # Friday 23:30 of the simulated week
JOBS = (("own", 7200), ("borrower", 2400), ("late", 9000))
"""(name, run time): the borrower runs across the Saturday 00:00 edge."""


def _end(job: dict[str, Any]) -> tuple[str, float, int]:
    """A described job's status, when it stopped (simulated seconds) and its preemptions."""
    stopped = round(job["stoppedAt"] / 1000 - SIMULATION_START.timestamp(), 3)
    return job["status"], stopped, job.get("preemptionSummary", {}).get("preemptedAttemptCount", 0)


def _emulator_run(
    org_file: Path, grace_s: float, options: SimulationOptions
) -> tuple[list[CalendarFlip], dict[str, tuple[str, float, int]]]:
    org = load_organisation(org_file)
    emulator = Emulator(
        clock=VirtualClock(start_epoch=SIMULATION_START.timestamp()),
        calendar_grace_s=grace_s,
        options=options.scheduler_options(org.queue),
        dispatch=DispatchMode.IMMEDIATE,  # as the simulator: no tick between RUNNABLE and SCHEDULED
    )
    emulator.provision_file(org_file)
    server = start_server(emulator, host="127.0.0.1", port=0)
    try:
        batch = boto3.client(
            "batch",
            endpoint_url=f"http://127.0.0.1:{server.port}",
            region_name=emulator.account.region,
            **DUMMY_CREDENTIALS,
        )
        emulator.advance(SUBMIT_S)
        ids = {
            name: submit(
                batch,
                "cal-agree-queue",
                "weekday",
                name,
                serviceRequestPayload=payload(runtime_s=s),
                tags=runs_for(s),
            )
            for name, s in JOBS
        }
        emulator.advance(86400.0)
        jobs = {name: batch.describe_service_job(jobId=job_id) for name, job_id in ids.items()}
    finally:
        server.shutdown()
    ends = {name: _end(job) for name, job in jobs.items()}
    return emulator.calendar_flips, ends


@pytest.mark.parametrize("grace_s", [0.0, 600.0, 3600.0])
def test_the_emulator_and_the_simulator_flip_and_end_jobs_alike(
    tmp_path: Path, grace_s: float
) -> None:
    org_file = tmp_path / "cal-agree.yaml"
    org_file.write_text(ORG, encoding="utf-8")
    options = SimulationOptions(calendar_grace_s=grace_s)
    flips, ends = _emulator_run(org_file, grace_s, options)
    workload = [WorkloadJob(SUBMIT_S, "weekday", "ml.g5.xlarge", 1, float(s), 0) for _, s in JOBS]
    sched = simulated_scheduler(load_organisation(org_file), workload, options=options)
    simulated = {
        name: (
            job.status.value,
            round(job.stopped_at or 0.0, 3),
            sum(a.preempted for a in job.attempts),
        )
        for (name, _), job in zip(JOBS, sched.jobs, strict=True)
    }
    assert simulated == ends
    last_end = max(end for _, end, _ in ends.values())
    in_run = [f for f in flips if f.time <= last_end]
    assert [(f.time, f.share, f.spec) for f in sched.timetable.flips] == [
        (f.time, f.share, f.spec) for f in in_run
    ]
    assert any(f.spec.strategy.value == "RESERVE" for f in in_run)
