"""docs/adopt.md's "Already have a queue?" commands and its examples run as written.

The emulator serves ``research.yaml`` with a few hours of generated jobs run on it; its
endpoints and dummy credentials are in the environment, the working directory is empty.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.workload import generate_workload
from quota_constructs.commands import app
from quota_constructs.commands.demo import emulator_client
from quota_constructs.local.handlers.submit_request import DURATION_TAG
from quota_constructs.local.testing import EmulatorServer
from tests.helpers import ORGS_DIR, parse_commands, shown
from tests.runtime.helpers import FAST_RETRIES, blocks, section, training_job

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture
def research(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[EmulatorServer]:
    """research.yaml served with its first 20 generated jobs run; env set; empty cwd."""
    with EmulatorServer(org_files=[ORGS_DIR / "research.yaml"]) as server:
        client = emulator_client(server, "research", retry=FAST_RETRIES)
        teams = load_teams(ORGS_DIR.parent / "teams" / "research.yaml")
        for index, job in enumerate(generate_workload(teams, days=1, seed=0)[:20]):
            server.advance(max(job.submit_time_s - server.now, 0))
            client.submit(
                f"{job.share}-{index}",
                job.share,
                training_job(job.instance_type, job.instance_count),
                priority=job.priority,
                tags={DURATION_TAG: f"{min(job.duration_s, 7000):.0f}"},
            )
        server.advance(86400)
        for name, value in server.env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(tmp_path)
        yield server


def run_quota(command: str) -> tuple[int, str]:
    words = shlex.split(command)
    assert words[0] == "quota", command
    result = runner.invoke(app, words[1:], env={"COLUMNS": "300"})
    return result.exit_code, result.stdout + result.stderr


def lower_generative_borrow_limit(server: EmulatorServer) -> None:
    """What the guide says someone did in the console."""
    server.client("batch").update_quota_share(
        quotaShareArn=server.organisation("research").quota_share_arns["generative"],
        resourceSharingConfiguration={"strategy": "LEND_AND_BORROW", "borrowLimit": 25},
    )


def test_the_already_have_a_queue_commands_run_as_written(research: EmulatorServer) -> None:
    guide = (ROOT / "docs" / "adopt.md").read_text(encoding="utf-8")
    (block,) = blocks(section(guide, "## Already have a queue?"), "bash")
    lines = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]
    assert [line.split()[:3] for line in lines] == [
        ["quota", "org", "import"],
        ["quota", "org", "diff"],
        ["quota", "simulate", "--from-queue"],
    ]
    for line in lines:
        code, output = run_quota(line)
        assert code == 0, (line, output)
    assert "20 job(s) created in the last 7d" in output
    lower_generative_borrow_limit(research)
    assert run_quota(lines[1])[0] == 1


def test_the_adopt_guide_examples_run_as_written(research: EmulatorServer) -> None:
    guide = (ROOT / "docs" / "adopt.md").read_text(encoding="utf-8")
    importing, drift, replay = blocks(guide, "console")
    for index, block in enumerate((importing, drift, replay)):
        if block is drift:
            lower_generative_borrow_limit(research)
        for step in parse_commands("console", block):
            code, output = run_quota(step.text)
            assert code == (1 if block is drift else 0), (step.text, output)
            for line in step.shown:
                assert shown(line).search(" ".join(output.split())), (index, line, output)
    mapping = json.loads(Path("mapping.json").read_text())
    assert len(mapping) == 6  # policy, environment, queue and the three shares
    assert Path("history.csv").read_text().count("\n") == 21  # header + 20 jobs
