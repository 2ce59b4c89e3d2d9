"""Hostile text from the API or a file reaches the terminal as text (issue 24, part 4).

A job's status reason is free text (a team's terminate reason; on AWS a training container's
failure reason); files carry values that error messages repeat. Each ``quota`` command runs as a
subprocess, stdout and stderr piped: no traceback, the text shown literally, rich markup never
interpreted and no control character (ESC, BEL, backspace, carriage return) written.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from tests.helpers import ORGS_DIR, QUOTA, payload
from tests.runtime.helpers import BUILDER

HOSTILE = (
    "[/] [red]x[/red] [link=https://evil.example]click[/link] [conceal]hidden[/conceal] "
    "\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07link\x1b]8;;\x07 \x1b[2J bell\x07 "
    "back\x08 cr\r :smile: done"
)
"""Markup (an unmatched ``[/]`` made rich raise ``MarkupError``), a hyperlink, hidden text, SGR
colours, an OSC 8 hyperlink, a screen clear, BEL, backspace, carriage return, an emoji code."""
SHOWN = (
    "[/] [red]x[/red] [link=https://evil.example]click[/link] [conceal]hidden[/conceal] "
    "\\x1b[31mred\\x1b[0m \\x1b]8;;https://evil.example\\x07link\\x1b]8;;\\x07 \\x1b[2J bell\\x07 "
    "back\\x08 cr\\x0d :smile: done"
)
"""How :data:`HOSTILE` is printed: every character as written, control characters as escapes."""
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Any control character but newline and tab."""
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y"}


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorServer]:
    """seed-demo on a virtual clock."""
    with EmulatorServer(org_files=[SEED_DEMO], clock="virtual") as server:
        yield server


@pytest.fixture(scope="module")
def failed_job(emu: EmulatorServer) -> str:
    """A job terminated with :data:`HOSTILE` as its reason (so FAILED with it)."""
    batch = boto3.client(
        "batch", endpoint_url=emu.endpoint_url, region_name="us-east-1", **_credentials()
    )
    job_id = batch.submit_service_job(
        jobName="hostile",
        jobQueue="seed-demo-queue",
        serviceJobType="SAGEMAKER_TRAINING",
        quotaShareName="QS1",
        serviceRequestPayload=payload(),
        tags={"team": "QS1"},
    )["jobId"]
    batch.terminate_service_job(jobId=job_id, reason=HOSTILE)
    return str(job_id)


def _credentials() -> dict[str, str]:
    return {"aws_access_key_id": "x", "aws_secret_access_key": "y"}


def quota(*args: str) -> subprocess.CompletedProcess[str]:
    """``quota ARGS`` with stdout and stderr piped; asserts no traceback, no control character."""
    result = subprocess.run(
        [str(QUOTA), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **CREDENTIALS, "AWS_DEFAULT_REGION": "us-east-1", "COLUMNS": "80"},
        timeout=300,
        check=False,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert not CONTROL.search(result.stdout + result.stderr), repr(result.stdout + result.stderr)
    return result


def on_queue(emu: EmulatorServer) -> list[str]:
    return ["--endpoint-url", emu.endpoint_url, "--organisation", "seed-demo"]


def test_jobs_ls_shows_a_hostile_reason_as_text(emu: EmulatorServer, failed_job: str) -> None:
    result = quota("jobs", *on_queue(emu), "ls", "--status", "FAILED")
    assert result.returncode == 0 and SHOWN in result.stdout and failed_job in result.stdout


def test_jobs_describe_shows_a_hostile_reason_as_text(emu: EmulatorServer, failed_job: str) -> None:
    result = quota("jobs", *on_queue(emu), "describe", failed_job)
    assert result.returncode == 0 and f"FAILED {SHOWN}" in result.stdout


def test_jobs_wait_shows_a_hostile_reason_as_text(emu: EmulatorServer, failed_job: str) -> None:
    result = quota("jobs", *on_queue(emu), "wait", failed_job)
    assert result.returncode == 1, result.stderr
    assert SHOWN in result.stdout and f"-> FAILED {SHOWN}" in result.stderr


def test_status_prints_a_queue_with_a_hostile_job(emu: EmulatorServer, failed_job: str) -> None:
    result = quota("status", *on_queue(emu))
    assert result.returncode == 0 and "QS1" in result.stdout


def test_local_why_prints_a_hostile_job(emu: EmulatorServer, failed_job: str) -> None:
    result = quota("local", "why", failed_job, "--endpoint-url", emu.endpoint_url)
    assert result.returncode == 0 and f"({failed_job}) in QS1: FAILED" in result.stdout


def test_rejects_a_hostile_job_name_printing_it_as_text(emu: EmulatorServer) -> None:
    name = "[/][link=https://evil.example]x[/link]\x1b[2J"
    result = quota("jobs", *on_queue(emu), "submit", name, "--share", "QS1", *BUILDER)
    assert result.returncode == 2
    assert "error: " in result.stderr and "[/][link=https://evil.example]x[/link]" in result.stderr


def test_rejects_hostile_org_file_values_printing_them_as_text(tmp_path: Path) -> None:
    org = tmp_path / "hostile.yaml"
    org.write_text(
        'organisation: hostile\ndescription: "[/][link=https://evil.example]x[/link]"\n'
        'shares:\n  - {name: "[/][red]QS1\\e[2J\\a\\b\\r", capacity: {ml.g5.xlarge: 1}}\n'
    )
    result = quota("org", "validate", str(org))
    assert result.returncode == 2
    assert "shares[0].name" in result.stderr and "[/][red]QS1\\x1b[2J" in result.stderr


def test_org_validate_prints_a_hostile_description_as_text(tmp_path: Path) -> None:
    org = tmp_path / "hostile.yaml"
    text = (ORGS_DIR / "research.yaml").read_text()
    org.write_text(text.replace("description:", 'description: "[/][conceal]x[/conceal]" #', 1))
    result = quota("org", "validate", str(org))
    assert result.returncode == 0, result.stderr


def test_rejects_a_hostile_team_profile_printing_it_as_text(tmp_path: Path) -> None:
    teams = tmp_path / "teams.yaml"
    teams.write_text(
        "organisation: hostile\nteams:\n  - name: t1\n    capacity: {ml.g5.xlarge: 1}\n"
        '    workload: scheduled\n    schedule: "[/][link=https://evil.example]x[/link]\\e[2J"\n'
    )
    result = quota("recommend", str(teams))
    assert result.returncode == 2
    assert "[/][link=https://evil.example]x[/link]" in result.stderr


def test_rejects_a_hostile_workload_csv_printing_it_as_text(tmp_path: Path) -> None:
    workload = tmp_path / "w.csv"
    share = HOSTILE.replace(",", " ").replace("\r", " ")
    workload.write_text(
        "submit_time_s,share,instance_type,instance_count,duration_s,priority\n"
        f"0,{share},ml.g5.xlarge,1,60,1\n"
    )
    result = quota("simulate", str(SEED_DEMO), "--workload", str(workload))
    assert result.returncode == 2
    assert "line 2.share" in result.stderr and "[/] [red]x[/red]" in result.stderr


def test_rejects_a_workload_csv_with_a_bare_carriage_return(tmp_path: Path) -> None:
    workload = tmp_path / "w.csv"
    workload.write_text(
        "submit_time_s,share,instance_type,instance_count,duration_s,priority\n"
        "0,QS1,ml.g5.xlarge,1,60,1\n0,Q\rS1,ml.g5.xlarge,1,60,1\n"
    )
    result = quota("simulate", str(SEED_DEMO), "--workload", str(workload))
    assert result.returncode == 2
    assert "line 3: not valid CSV" in result.stderr and "fix: quote values" in result.stderr
