"""The SageMaker Python SDK v3 against the emulator, offline, as a user would set it up.

Recipe (docs/emulator.md, "SageMaker Python SDK"): the ``emulator`` fixture exports
``AWS_ENDPOINT_URL_BATCH`` / ``_SAGEMAKER`` and dummy credentials; ``SAGEMAKER_VALIDATE_ROLE=false``
(an SDK setting) skips the IAM role check that would call IAM; the ``ModelTrainer`` names a
prebuilt image, an explicit role ARN and an S3 output path, so nothing calls S3, STS or IAM.

Two things only tests need: the SDK caches its SageMaker client per process (with the endpoint
of the first emulator it met), so each test resets the cache (``SageMakerClient.reset()``, the
SDK's own call); and ``sleep_advances`` makes the SDK's 5-second poll sleep advance the
emulator's virtual clock instead of real time, so ``wait()`` and ``result()`` poll
deterministically.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from sagemaker.core.training.configs import Compute, OutputDataConfig, StoppingCondition
from sagemaker.core.utils.utils import SageMakerClient
from sagemaker.train import ModelTrainer
from sagemaker.train.aws_batch import training_queued_job

from quota_constructs.local.testing import EmulatorServer

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:latest"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
QUEUE = "seed-demo-queue"


@pytest.fixture
def sdk(emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    """The seed-demo emulator (virtual clock) with the SDK's environment pointed at it."""
    monkeypatch.setenv("SAGEMAKER_VALIDATE_ROLE", "false")
    SageMakerClient.reset()
    yield emulator
    SageMakerClient.reset()


def sleep_advances(emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``TrainingQueuedJob``'s poll sleep advance ``emulator``'s virtual clock."""
    clock = SimpleNamespace(time=time.time, sleep=emulator.advance)
    monkeypatch.setattr(training_queued_job, "time", clock)


def trainer(instance_count: int = 1, runtime_s: int = 3600, **extra: Any) -> ModelTrainer:
    """A ModelTrainer on one ml.g5.xlarge (seed-demo's instance type) with a prebuilt image."""
    return ModelTrainer(
        training_image=IMAGE,
        role=ROLE,
        compute=Compute(instance_type="ml.g5.xlarge", instance_count=instance_count),
        stopping_condition=StoppingCondition(max_runtime_in_seconds=runtime_s),
        output_data_config=OutputDataConfig(s3_output_path="s3://bucket/output"),
        base_job_name="sdk",
        **extra,
    )
