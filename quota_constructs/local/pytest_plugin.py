"""pytest plugin: an ``emulator`` fixture serving the seed-demo organisation, in an AWS sandbox.

See docs/emulator.md, "In tests and demos".

Register it with ``pytest_plugins = ["quota_constructs.local.pytest_plugin"]`` in a
``conftest.py`` (an installed package registers it by its ``pytest11`` entry point). Each test
gets a fresh :class:`~quota_constructs.local.testing.EmulatorServer` with a virtual clock
(``emulator.advance(seconds)``) on its own free port, and for the test's duration an AWS
sandbox: every ``AWS_*`` variable unset (the token, profile, per-service endpoints and
``AWS_IGNORE_CONFIGURED_ENDPOINT_URLS`` included; only ``AWS_DATA_PATH`` kept), then the
dummy credentials, the emulator's region, ``AWS_ENDPOINT_URL`` and the per-service endpoints
pointed at the emulator (which refuses every service it does not serve, the Price List API
included), empty credentials and config files, no instance metadata
(:meth:`~quota_constructs.local.testing.EmulatorServer.sandbox_env`); and boto3's default
session dropped, so a client made with ``boto3.client()`` does not sign with credentials an
earlier test cached. Everything is restored after the test through the test's own
``monkeypatch``: the user's settings are back, no dummy key remains.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from quota_constructs.local.testing import SANDBOX_KEPT, SEED_DEMO, EmulatorServer


def aws_sandbox(
    monkeypatch: pytest.MonkeyPatch, server: EmulatorServer, files_dir: os.PathLike[str] | str
) -> None:
    """Point every AWS setting of this process at ``server`` until ``monkeypatch`` is undone."""
    for name in [n for n in os.environ if n.startswith("AWS_") and n not in SANDBOX_KEPT]:
        monkeypatch.delenv(name)
    for name, value in server.sandbox_env(Path(files_dir)).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)


@pytest.fixture
def emulator(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EmulatorServer]:
    """A running emulator with ``seed-demo`` provisioned and a virtual clock, in an AWS
    sandbox for the test (module docstring)."""
    with EmulatorServer(org_files=[SEED_DEMO], clock="virtual") as server:
        aws_sandbox(monkeypatch, server, tmp_path_factory.mktemp("aws-sandbox"))
        yield server
