"""Helpers for the runtime tests: payloads, emulated durations, organisation files, faults."""

from __future__ import annotations

from pathlib import Path

from quota_constructs.local.faults import FaultPlan
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.runtime import RetryOptions, TrainingJob

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


def write_org(tmp_path: Path, name: str, shares: str) -> Path:
    """An organisation file in ``tmp_path`` with the given YAML ``shares`` list."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"organisation: {name}\nshares:\n{shares}")
    return path


def faulty_emulator(org: Path, *, throttle: float, server_error: float) -> EmulatorServer:
    """An emulator answering a share of every operation with 429 throttling or 500 errors."""
    plan = FaultPlan(throttle={"*": throttle}, server_error={"*": server_error}, seed=4)
    return EmulatorServer(org_files=[org], clock="virtual", faults=plan)
