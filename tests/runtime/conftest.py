"""Runtime tests run against the local emulator over real HTTP (virtual clock, seed-demo)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from quota_constructs.commands.demo import emulator_client
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.runtime import Backoff, QueueClient
from tests.runtime.helpers import FAST_RETRIES


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
