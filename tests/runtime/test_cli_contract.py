"""``quota jobs`` for scripts: piped output, the dry-run request, conflicting options, exit codes.

The CLI runs as a subprocess (stdout a pipe, a narrow ``COLUMNS``) against the emulator over HTTP.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import botocore.session
import pytest
from botocore.validate import validate_parameters

from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from tests.helpers import AWS
from tests.runtime.helpers import BUILDER, jobs, submit

LONG_NAME = "a-job-name-far-longer-than-forty-columns-of-terminal"


def quota(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``quota ARGS`` as a subprocess: stdout a pipe, ``COLUMNS=40``."""
    return subprocess.run(
        [sys.executable, "-m", "quota_constructs.commands", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "40", **(env or {})},
        timeout=120,
        check=False,
    )


def test_piped_ls_prints_each_job_whole_on_one_line(emu: EmulatorServer) -> None:
    job_id = submit(emu, LONG_NAME, "QS1")
    emu.advance(1)  # RUNNABLE at the scheduler's next tick, SCHEDULED a tick later
    result = quota("jobs", "--endpoint-url", emu.endpoint_url, "-o", "seed-demo", "ls")
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if job_id in line)
    assert LONG_NAME in row and "SCHEDULED" in row and "1 x ml.g5.xlarge" in row
    assert "…" not in result.stdout


def test_dry_run_json_is_a_valid_submit_service_job_request(emu: EmulatorServer) -> None:
    code, out, err = jobs(emu, "submit", "dry", "--share", "QS2", *BUILDER, "--dry-run", "--json")
    assert code == 0, err
    request = json.loads(out)
    model = botocore.session.get_session().get_service_model("batch")
    shape = model.operation_model("SubmitServiceJob").input_shape
    validate_parameters(request, shape)  # raises ParamValidationError when it is not
    assert isinstance(request["serviceRequestPayload"], str)


@pytest.mark.skipif(not AWS.exists(), reason="the AWS CLI is not installed in this venv")
def test_aws_cli_accepts_the_dry_run_as_cli_input_json(tmp_path: Path) -> None:
    with EmulatorServer(org_files=[SEED_DEMO], clock="virtual") as emu:
        code, out, err = jobs(emu, "submit", "dry", "--share", "QS2", *BUILDER, "--dry-run")
        assert code == 0, err
        request_file = tmp_path / "request.json"
        request_file.write_text(out)
        env = {**os.environ, **emu.env, "AWS_CONFIG_FILE": os.devnull}
        command = [str(AWS), "batch", "submit-service-job", "--output", "json"]
        command += ["--cli-input-json", f"file://{request_file}"]
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["jobName"] == "dry"
        assert emu.request_counts["SubmitServiceJob"] == 1


@pytest.mark.parametrize(
    "flag", [["--instance-type", "ml.g5.xlarge"], ["--instance-count", "1"], ["--image", "x"]]
)
def test_rejects_payload_with_builder_flags_naming_both(
    emu: EmulatorServer, tmp_path: Path, flag: list[str]
) -> None:
    path = tmp_path / "payload.json"
    path.write_text("{}")
    code, _, err = jobs(emu, "submit", "x", "--share", "QS1", "--payload", str(path), *flag)
    assert code == 2 and "Traceback" not in err
    assert f"--payload {path} and {flag[0]} conflict" in err


def test_rejects_unreadable_payload_file_naming_it(emu: EmulatorServer, tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    code, _, err = jobs(emu, "submit", "x", "--share", "QS1", "--payload", str(path))
    assert code == 2 and str(path) in err and err.count("\n") == 1


def test_wait_exits_1_when_a_job_ends_failed(emu: EmulatorServer) -> None:
    tags = ["--tag", "quota.local/outcome=FAILED", "--tag", "quota.local/duration-seconds=5"]
    job_id = submit(emu, "doomed", "QS1", *tags)
    emu.advance(600)
    code, out, err = jobs(emu, "wait", job_id, "--json")
    assert code == 1
    assert [j["status"] for j in json.loads(out)] == ["FAILED"]
    assert f"1 job(s) ended FAILED: doomed ({job_id})" in err


def test_submit_json_uses_the_same_names_as_ls(emu: EmulatorServer) -> None:
    code, out, _ = jobs(emu, "submit", "named", "--share", "QS1", *BUILDER, "--json")
    submitted = json.loads(out)
    assert code == 0
    code, out, _ = jobs(emu, "ls", "--json")
    assert code == 0
    listed = json.loads(out)[0]
    assert {k: listed[k] for k in submitted} == submitted
    assert set(submitted) == {"jobId", "jobName", "jobArn"}


def test_piped_errors_stay_on_one_line_at_40_columns(emu: EmulatorServer) -> None:
    base = ["jobs", "--endpoint-url", emu.endpoint_url, "-o", "seed-demo"]
    result = quota(*base, "submit", "x", "--share", "QS9", *BUILDER)
    assert result.returncode == 3  # not found (README, "Exit codes")
    assert result.stderr.count("\n") == 1 and len(result.stderr) > 40
    assert result.stderr.startswith("error: no quota share 'QS9' in job queue ")


@pytest.mark.parametrize(
    "command",
    [
        ("jobs", "-o", "seed-demo", "ls"),
        ("status", "-o", "seed-demo"),
        ("org", "diff", str(SEED_DEMO)),
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_no_region_is_a_set_up_error_naming_the_fix(
    command: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    result = quota(*command, env={"AWS_CONFIG_FILE": os.devnull})
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: no AWS region: pass --region REGION or set ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
