"""Training plan windows on the emulator, over HTTP with boto3 on a virtual clock: jobs of a
plan's instance type run only inside its window; SageMaker's termination 30 minutes before the
end is the default, running to the end an option."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import utc_text
from tests.emulator.helpers import status, submit
from tests.helpers import payload, runs_for

H = 3600
P5 = "ml.p5.48xlarge"


def _org(tmp_path: Path) -> Path:
    """Plan p5-june: 8 x ml.p5.48xlarge from 1 h from now, for 2 h; cv's g5 is on demand."""
    org = tmp_path / "org.yaml"
    org.write_text(
        "organisation: plans\n"
        "shares:\n"
        "  - {name: llm, capacity: {ml.p5.48xlarge: 8}, strategy: LEND_AND_BORROW}\n"
        "  - {name: cv, capacity: {ml.g5.xlarge: 2}, strategy: RESERVE}\n"
        "training_plans:\n"
        "  - {name: p5-june, instance_type: ml.p5.48xlarge, instance_count: 8, "
        f'start: "{utc_text(time.time() + H)}", duration_hours: 2}}\n',
        encoding="utf-8",
    )
    return org


@pytest.fixture
def emu(tmp_path: Path) -> Iterator[EmulatorServer]:
    with EmulatorServer(org_files=[_org(tmp_path)]) as server:
        yield server


def _submit_p5(emu: EmulatorServer, name: str, runtime_s: int = 10 * H) -> str:
    queue = emu.organisations["plans"].job_queue_name
    body = payload(P5, count=8, runtime_s=runtime_s)
    return submit(
        emu.client("batch"),
        queue,
        "llm",
        name,
        serviceRequestPayload=body,
        tags=runs_for(runtime_s),
    )


def test_plan_jobs_wait_for_the_window_and_stop_30_minutes_before_its_end(
    emu: EmulatorServer,
) -> None:
    batch = emu.client("batch")
    queue = emu.organisations["plans"].job_queue_name
    early = _submit_p5(emu, "early")
    g5 = submit(batch, queue, "cv", "on-demand")
    emu.advance(60)
    assert (status(batch, early), status(batch, g5)) == ("RUNNABLE", "RUNNING")
    emu.advance(H)  # the plan is Active
    assert status(batch, early) == "RUNNING"
    emu.advance(1.5 * H - 120)  # 1 minute before end - 30 min
    assert status(batch, early) == "RUNNING"
    emu.advance(120)
    job = batch.describe_service_job(jobId=early)
    assert job["status"] == "FAILED"
    assert job["statusReason"] == (
        "TrainingPlanEnded: SageMaker terminated the ml.p5.48xlarge instances of the "
        "training plan 30 minutes before its end"
    )
    late = _submit_p5(emu, "late")
    emu.advance(H)  # past the plan's end: no p5 capacity any more
    assert status(batch, late) == "RUNNABLE"
    plan = emu.client("sagemaker").describe_training_plan(TrainingPlanName="p5-june")
    assert plan["Status"] == "Expired"


def test_the_option_lets_plan_jobs_run_to_the_end(tmp_path: Path) -> None:
    with EmulatorServer(org_files=[_org(tmp_path)], plan_stop_before_end_s=0) as emu:
        batch = emu.client("batch")
        job = _submit_p5(emu, "to-the-end")
        emu.advance(H + 60)
        emu.advance(1.5 * H)  # past end - 30 min, before the end
        assert status(batch, job) == "RUNNING"
        emu.advance(H)
        described = batch.describe_service_job(jobId=job)
        assert described["status"] == "FAILED"
        assert described["statusReason"].endswith("training plan at its end")


def test_a_job_shorter_than_the_window_succeeds_inside_it(emu: EmulatorServer) -> None:
    batch = emu.client("batch")
    job = _submit_p5(emu, "fits", runtime_s=H)
    emu.advance(H + 60)
    assert status(batch, job) == "RUNNING"
    emu.advance(H)
    assert status(batch, job) == "SUCCEEDED"


def _update_capacity(emu: EmulatorServer, **counts: int) -> None:
    limits = [{"capacityUnit": t, "maxCapacity": n} for t, n in counts.items()]
    emu.client("batch").update_service_environment(
        serviceEnvironment=emu.organisations["plans"].service_environment_arn,
        capacityLimits=limits,
    )


def test_update_service_environment_keeps_the_plan_window(emu: EmulatorServer) -> None:
    batch = emu.client("batch")
    job = _submit_p5(emu, "early", runtime_s=H)
    _update_capacity(emu, **{P5: 8, "ml.g5.xlarge": 3})  # before the window
    emu.advance(60)
    assert status(batch, job) == "RUNNABLE"  # the plan's instances do not exist yet
    emu.advance(H)
    assert status(batch, job) == "RUNNING"


def test_update_service_environment_caps_the_plan_in_its_window(emu: EmulatorServer) -> None:
    batch = emu.client("batch")
    emu.advance(H + 60)  # the plan is active
    _update_capacity(emu, **{P5: 4, "ml.g5.xlarge": 2})
    job = _submit_p5(emu, "eight", runtime_s=H)
    emu.advance(60)
    assert status(batch, job) == "RUNNABLE"  # 8 instances asked, the environment allows 4
    _update_capacity(emu, **{P5: 8, "ml.g5.xlarge": 2})
    emu.advance(60)
    assert status(batch, job) == "RUNNING"
