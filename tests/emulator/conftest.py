"""Fixtures of the emulator's HTTP tests: a boto3 Batch client and seed-demo's queue ARN on the
running emulator (the ``emulator`` fixture of ``quota_constructs.local.pytest_plugin``)."""

from __future__ import annotations

from typing import Any

import pytest

from quota_constructs.local.testing import EmulatorServer


@pytest.fixture
def batch(emulator: EmulatorServer) -> Any:
    return emulator.client("batch")


@pytest.fixture
def queue(emulator: EmulatorServer) -> str:
    return emulator.queue_arn("seed-demo")
