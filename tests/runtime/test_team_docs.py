"""The team-access Python example of docs/runtime.md runs as written against the emulator.

The emulator serves ``research.yaml``; ``AWS_ENDPOINT_URL_BATCH``, ``_SSM`` and ``_STS`` and
dummy credentials point unmodified code at it. (The doc's and README's console commands run in
tests/test_doc_snippets.py.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.runtime.team import default_session_name
from tests.helpers import ORGS_DIR
from tests.runtime.helpers import blocks, section, training_job

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Team access: the team tag and acting as a team"
ROLE_SESSION = "arn:aws:sts::123456789012:assumed-role/research-generative-submitter/"


@pytest.fixture
def research(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[EmulatorServer]:
    """research.yaml served, its endpoints in the environment, ``job.json`` in the cwd."""
    with EmulatorServer(org_files=[ORGS_DIR / "research.yaml"], clock="virtual") as server:
        for name, value in server.env.items():
            monkeypatch.setenv(name, value)
        (tmp_path / "job.json").write_text(json.dumps(training_job().payload("docs-job")))
        monkeypatch.chdir(tmp_path)
        yield server


def runtime_doc() -> str:
    return section((ROOT / "docs" / "runtime.md").read_text(encoding="utf-8"), SECTION)


def test_the_python_example_runs_as_written_as_the_team(research: EmulatorServer) -> None:
    (block,) = blocks(runtime_doc(), "python")

    exec(compile(block, "docs/runtime.md", "exec"), {})

    caller = ROLE_SESSION + default_session_name()
    assert research.callers[caller]["SubmitServiceJob"] == 1
