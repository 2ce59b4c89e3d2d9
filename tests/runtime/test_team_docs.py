"""The team-access examples of docs/runtime.md and README run as written against the emulator.

The emulator serves ``research.yaml``; ``AWS_ENDPOINT_URL_BATCH``, ``_SSM`` and ``_STS`` and
dummy credentials point unmodified code at it. Each console command runs through the ``quota``
app; the output lines the docs show must appear (``<placeholder>`` matches one word), and a
command whose shown output starts with ``error:`` must fail.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.cli import app
from quota_constructs.config import ORGS_DIR
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.runtime.team import default_session_name
from tests.runtime.helpers import training_job

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Team access: the team tag and acting as a team"
ROLE_SESSION = "arn:aws:sts::123456789012:assumed-role/research-generative-submitter/"
runner = CliRunner()


@pytest.fixture
def research(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[EmulatorServer]:
    """research.yaml served, its endpoints in the environment, ``job.json`` in the cwd."""
    with EmulatorServer(org_files=[ORGS_DIR / "research.yaml"], clock="virtual") as server:
        for name, value in server.env.items():
            monkeypatch.setenv(name, value)
        (tmp_path / "job.json").write_text(json.dumps(training_job().payload("docs-job")))
        monkeypatch.chdir(tmp_path)
        yield server


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else None]


def blocks(text: str, language: str) -> list[str]:
    return [part.split("```", 1)[0] for part in text.split(f"```{language}\n")[1:]]


def console_steps(block: str) -> list[tuple[str, list[str]]]:
    """``$ command`` lines of a console block, each with the output lines shown under it."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif line.strip():
            steps[-1][1].append(line.strip())
    return steps


def run_quota(command: str) -> tuple[int, str]:
    words = shlex.split(command)
    assert words[0] == "quota", command
    result = runner.invoke(app, words[1:], env={"COLUMNS": "300"})
    return result.exit_code, result.stdout + result.stderr


def shown(line: str) -> re.Pattern[str]:
    parts = re.split(r"<[^>]+>", line)
    return re.compile(r"\S+".join(re.escape(p) for p in parts))


def runtime_doc() -> str:
    return section((ROOT / "docs" / "runtime.md").read_text(encoding="utf-8"), SECTION)


def test_the_python_example_runs_as_written_as_the_team(research: EmulatorServer) -> None:
    (block,) = blocks(runtime_doc(), "python")

    exec(compile(block, "docs/runtime.md", "exec"), {})

    caller = ROLE_SESSION + default_session_name()
    assert research.callers[caller]["SubmitServiceJob"] == 1


def test_the_console_examples_run_as_written(research: EmulatorServer) -> None:
    (block,) = blocks(runtime_doc(), "console")
    steps = console_steps(block)
    assert len(steps) == 4

    for command, expected in steps:
        code, output = run_quota(command)
        failing = bool(expected) and expected[0].startswith("error:")
        assert (code != 0) == failing, (command, output)
        for line in expected:
            assert shown(line).search(" ".join(output.split())), (command, line, output)

    batch = research.client("batch")
    filters = [{"name": "JOB_NAME", "values": ["fine-tune-2"]}]
    (job,) = batch.list_service_jobs(jobQueue="research-queue", filters=filters)["jobSummaryList"]
    assert research.explain(job["jobId"])["submittedBy"] == ROLE_SESSION + default_session_name()


def test_the_readme_as_team_command_runs_as_written(research: EmulatorServer) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (line,) = [x for x in readme.splitlines() if x.startswith("quota jobs") and "--as-team" in x]

    code, output = run_quota(line.split("#", 1)[0])

    assert code == 0, output
    (caller,) = [c for c in research.callers if c.startswith(ROLE_SESSION)]
    assert research.callers[caller]["SubmitServiceJob"] == 1
