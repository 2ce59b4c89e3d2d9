"""The SageMaker Python SDK v3 against the emulator, offline, as a user would set it up.

Recipe (docs/emulator.md, "SageMaker Python SDK"): the ``emulator`` fixture exports
``AWS_ENDPOINT_URL_BATCH`` / ``_SAGEMAKER`` and dummy credentials; ``SAGEMAKER_VALIDATE_ROLE=false``
(an SDK setting) skips the IAM role check that would call IAM; the ``ModelTrainer`` names a
prebuilt image, an explicit role ARN and an S3 output path, so nothing calls S3, STS or IAM.

Two things only tests need: the SDK caches its SageMaker client per process (with the endpoint
of the first emulator it met), so each test resets the cache (``SageMakerClient.reset()``, the
SDK's own call); and ``sleep_advances`` (helpers.py) makes the SDK's 5-second poll sleep advance the
emulator's virtual clock instead of real time, so ``wait()`` and ``result()`` poll
deterministically.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sagemaker.core.utils.utils import SageMakerClient

from quota_constructs.local.testing import EmulatorServer


@pytest.fixture
def sdk(emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    """The seed-demo emulator (virtual clock) with the SDK's environment pointed at it."""
    monkeypatch.setenv("SAGEMAKER_VALIDATE_ROLE", "false")
    SageMakerClient.reset()
    yield emulator
    SageMakerClient.reset()
