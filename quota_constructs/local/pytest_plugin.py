"""pytest plugin: an ``emulator`` fixture serving the seed-demo organisation.

See docs/emulator.md, "In tests and demos".

Register it with ``pytest_plugins = ["quota_constructs.local.pytest_plugin"]`` in a
``conftest.py``. Each test gets a fresh :class:`~quota_constructs.local.testing.EmulatorServer`
with a virtual clock (``emulator.advance(seconds)``) on its own free port, and
``AWS_ENDPOINT_URL_BATCH`` / ``_SSM`` / ``_SAGEMAKER`` / ``_STS`` plus dummy credentials set
for the test, so code that builds its own boto3 clients reaches the emulator too.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from quota_constructs.local.testing import SEED_DEMO, EmulatorServer


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    """A running emulator with ``seed-demo`` provisioned and a virtual clock."""
    with EmulatorServer(org_files=[SEED_DEMO], clock="virtual") as server:
        for name, value in server.env.items():
            monkeypatch.setenv(name, value)
        yield server
