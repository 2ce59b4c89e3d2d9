"""Runtime tests run against the local emulator over real HTTP (virtual clock, seed-demo)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from quota_constructs.demo import emulator_client
from quota_constructs.local.faults import FaultPlan
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.runtime import Backoff, QueueClient, RetryOptions, TrainingJob

ROLE = "arn:aws:iam::123456789012:role/SageMakerExecutionRole"
FAST_RETRIES = RetryOptions(mode="standard", max_attempts=12, backoff_scale=0.01)
"""botocore's standard retries with 1/100 of its backoff delays, so fault tests stay quick."""


def training_job(instance_type: str = "ml.g5.xlarge", count: int = 1) -> TrainingJob:
    return TrainingJob(
        image="123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
        instance_type=instance_type,
        instance_count=count,
        role_arn=ROLE,
        output_s3_uri="s3://bucket/out",
        max_runtime_s=7200,
    )


def runs_for(seconds: float) -> dict[str, str]:
    """Tags telling the emulator how long the job runs."""
    return {"quota.local/duration-seconds": str(seconds)}


@pytest.fixture
def emu() -> Iterator[EmulatorServer]:
    """seed-demo on a virtual clock."""
    with EmulatorServer(org_files=[SEED_DEMO], clock="virtual") as server:
        yield server


@pytest.fixture
def client(emu: EmulatorServer) -> QueueClient:
    """A client of the seed-demo queue; waits poll every 5-30 s of emulated time."""
    return emulator_client(
        emu, retry=FAST_RETRIES, backoff=Backoff(initial=5, maximum=30, jitter=0.2)
    )


def write_org(tmp_path: Path, name: str, shares: str) -> Path:
    """An organisation file in ``tmp_path`` with the given YAML ``shares`` list."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"organisation: {name}\nshares:\n{shares}")
    return path


def faulty_emulator(org: Path, *, throttle: float, server_error: float) -> EmulatorServer:
    """An emulator answering a share of every operation with 429 throttling or 500 errors."""
    plan = FaultPlan(throttle={"*": throttle}, server_error={"*": server_error}, seed=4)
    return EmulatorServer(org_files=[org], clock="virtual", faults=plan)
