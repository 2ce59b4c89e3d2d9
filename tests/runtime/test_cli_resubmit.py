"""``quota jobs submit`` of a job that exists: "already submitted", exit 1; ``--resubmit``
submits a new attempt. The CLI runs as a subprocess against the emulator over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from quota_constructs.commands._common import ExitCode
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.runtime import JobStatus, QueueClient
from tests.runtime.helpers import BUILDER

ROOT = Path(__file__).resolve().parents[2]
QUOTA = Path(sys.executable).with_name("quota")


def submit(emu: EmulatorServer, *extra: str) -> subprocess.CompletedProcess[str]:
    """``quota jobs ... submit again --share QS1 BUILDER... EXTRA...`` as a process."""
    return subprocess.run(
        [
            str(QUOTA), "jobs", "--endpoint-url", emu.endpoint_url, "--organisation",
            "seed-demo", "submit", "again", "--share", "QS1", *BUILDER, *extra,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80", "NO_COLOR": "1"},
    )  # fmt: skip


def test_submitting_a_terminated_job_again_says_already_submitted_and_exits_1(
    emu: EmulatorServer, client: QueueClient
) -> None:
    first = submit(emu, "--json")
    job_id = json.loads(first.stdout)["jobId"]
    client.terminate(job_id)
    emu.advance(5)

    again = submit(emu)

    assert first.returncode == 0, first.stderr
    assert again.returncode == ExitCode.FAILED
    assert f"already submitted: job {job_id}, now FAILED" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    assert again.stdout == ""
    assert len(client.list(statuses=[JobStatus.FAILED])) == 1  # nothing new was submitted


def test_already_submitted_prints_json_with_the_status(
    emu: EmulatorServer, client: QueueClient
) -> None:
    job_id = json.loads(submit(emu, "--json").stdout)["jobId"]

    again = submit(emu, "--json")

    assert again.returncode == ExitCode.FAILED
    assert json.loads(again.stdout) == {
        "jobId": job_id,
        "alreadySubmitted": True,
        "status": client.describe(job_id).status.value,
    }


def test_resubmit_submits_a_new_attempt_with_a_new_printed_token(
    emu: EmulatorServer, client: QueueClient
) -> None:
    first_id = json.loads(submit(emu, "--json").stdout)["jobId"]
    client.terminate(first_id)
    emu.advance(5)

    resubmitted = submit(emu, "--resubmit", "--json")
    twice = submit(emu, "--resubmit", "--json")

    assert resubmitted.returncode == 0, resubmitted.stderr
    new_id = json.loads(resubmitted.stdout)["jobId"]
    assert new_id != first_id
    assert json.loads(twice.stdout)["jobId"] not in (first_id, new_id)  # each a new attempt
    token = resubmitted.stderr.split("new attempt with clientToken ", 1)[1].split()[0]
    assert len(token) == 64 and token[31] == "-"
    details = client.describe(new_id)
    assert details.status is not JobStatus.FAILED and details.job_name == "again"


def test_resubmit_refuses_an_explicit_client_token(emu: EmulatorServer) -> None:
    result = submit(emu, "--resubmit", "--client-token", "mine")

    assert result.returncode == ExitCode.USAGE
    assert "--resubmit makes a new clientToken: drop --client-token" in result.stderr
    assert "SubmitServiceJob" not in emu.request_counts
