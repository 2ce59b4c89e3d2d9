"""The SageMaker Python SDK v3 against the emulator, offline, as a user would set it up.

Recipe (docs/emulator.md, "SageMaker Python SDK"): the ``emulator`` fixture exports
``AWS_ENDPOINT_URL_BATCH`` / ``_SAGEMAKER`` and dummy credentials; ``SAGEMAKER_VALIDATE_ROLE=false``
(an SDK setting) skips the IAM role check that would call IAM; the ``ModelTrainer`` names a
prebuilt image, an explicit role ARN and an S3 output path, so nothing calls S3, STS or IAM.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sagemaker.core.training.configs import Compute, OutputDataConfig, StoppingCondition
from sagemaker.train import ModelTrainer

from quota_constructs.local.testing import EmulatorServer

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:latest"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
QUEUE = "seed-demo-queue"


@pytest.fixture
def sdk(emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    """The seed-demo emulator (virtual clock) with the SDK's environment pointed at it."""
    monkeypatch.setenv("SAGEMAKER_VALIDATE_ROLE", "false")
    yield emulator


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
