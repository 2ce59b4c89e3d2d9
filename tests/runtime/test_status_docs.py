"""The ``quota status`` sample of README and the ``quota local`` sample of docs/emulator.md run as
written against the emulator; every output line they show must appear (``<placeholder>``: one
word), and a command whose shown output starts with ``error:`` must fail."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from tests.runtime.helpers import training_job
from tests.runtime.test_team_docs import ROOT, blocks, console_steps, run_quota, section, shown


def serve(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seed: int | None = None
) -> EmulatorServer:
    """seed-demo on a virtual clock, its variables exported, ``job.json`` in the cwd."""
    server = EmulatorServer(org_files=[SEED_DEMO], clock="virtual", seed=seed).start()
    for name, value in server.env.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "job.json").write_text(json.dumps(training_job().payload("docs-job")))
    monkeypatch.chdir(tmp_path)
    return server


@pytest.fixture
def seed_demo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[EmulatorServer]:
    server = serve(monkeypatch, tmp_path)
    yield server
    server.stop()


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[EmulatorServer]:
    """As ``quota local serve --virtual --seed 1``."""
    server = serve(monkeypatch, tmp_path, seed=1)
    yield server
    server.stop()


def run_block(path: str, heading: str, expected_steps: int) -> None:
    (block,) = blocks(section((ROOT / path).read_text(encoding="utf-8"), heading), "console")
    steps = console_steps(block)
    assert len(steps) == expected_steps
    for command, expected in steps:
        code, output = run_quota(command)
        failing = bool(expected) and expected[0].startswith("error:")
        assert (code != 0) == failing, (command, output)
        for line in expected:
            wanted = shown(" ".join(line.split()))
            assert wanted.search(" ".join(output.split())), (command, line, output)


def test_the_readme_status_sample_runs_as_written(seed_demo: EmulatorServer) -> None:
    run_block("README.md", "## Watching the queue: `quota status`", 7)


def test_the_emulator_command_line_sample_runs_as_written(seeded: EmulatorServer) -> None:
    run_block("docs/emulator.md", "## Driving it from the command line", 4)
