"""Helpers for the SageMaker SDK tests: a ModelTrainer for seed-demo, and polling on the
emulator's virtual clock."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from sagemaker.core.training.configs import Compute, OutputDataConfig, StoppingCondition
from sagemaker.train import ModelTrainer
from sagemaker.train.aws_batch import training_queued_job

from quota_constructs.local.testing import EmulatorServer
from tests.helpers import ROLE

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:latest"
QUEUE = "seed-demo-queue"


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
