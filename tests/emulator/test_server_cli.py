"""``quota local serve``: a real process serving boto3 until Ctrl-C; one-line errors."""

from __future__ import annotations

import json
import signal
import socket
import urllib.request
from pathlib import Path

import boto3
import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.local.testing import DUMMY_CREDENTIALS, SEED_DEMO
from tests.helpers import payload, start_serve, wait_for_endpoint


def test_serve_provisions_the_seed_demo_and_stops_on_ctrl_c() -> None:
    process = start_serve("--speed", "100")
    printed: list[str] = []
    try:
        endpoint = wait_for_endpoint(process, printed)
        batch = boto3.client(
            "batch", endpoint_url=endpoint, region_name="us-east-1", **DUMMY_CREDENTIALS
        )
        queues = batch.describe_job_queues()["jobQueues"]
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
        out = "".join(printed) + out

    assert [q["jobQueueName"] for q in queues] == ["seed-demo-queue"]
    assert f"export AWS_ENDPOINT_URL_BATCH={endpoint}" in out
    assert f"export AWS_ENDPOINT_URL_SSM={endpoint}" in out
    assert f"export AWS_ENDPOINT_URL_SAGEMAKER={endpoint}" in out
    assert process.returncode == 130, err  # Ctrl-C: README, "Exit codes"
    assert "Traceback" not in err


def test_rejects_an_invalid_organisation_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("organisation: bad\nshares:\n  - name: a\n    capacity: {ml.g5.xlarge: 1}\n")

    result = CliRunner().invoke(app, ["local", "serve", "--port", "0", "--org", str(path)])

    assert result.exit_code == 2
    assert "strategy" in result.output and "Traceback" not in result.output


def test_rejects_a_malformed_fault_rate() -> None:
    result = CliRunner().invoke(app, ["local", "serve", "--port", "0", "--fault-rate", "often"])

    assert result.exit_code == 2
    assert "[OPERATION:]KIND=RATE" in result.output


def test_serve_with_a_virtual_clock_advances_by_http() -> None:
    process = start_serve("--virtual")
    printed: list[str] = []
    try:
        endpoint = wait_for_endpoint(process, printed)
        request = urllib.request.Request(
            f"{endpoint}/_quota/advance", data=b'{"seconds": 30}', method="POST"
        )
        with urllib.request.urlopen(request) as response:
            now = json.loads(response.read())["now"]
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=20)

    assert now == 30.0
    assert "virtual clock" in "".join(printed)


def first_job_id(*options: str) -> str:
    """The id of the first job submitted to ``quota local serve OPTIONS...``."""
    process = start_serve("--virtual", *options)
    printed: list[str] = []
    try:
        endpoint = wait_for_endpoint(process, printed)
        batch = boto3.client(
            "batch", endpoint_url=endpoint, region_name="us-east-1", **DUMMY_CREDENTIALS
        )
        return str(
            batch.submit_service_job(
                jobName="j",
                jobQueue="seed-demo-queue",
                serviceJobType="SAGEMAKER_TRAINING",
                quotaShareName="QS1",
                serviceRequestPayload=payload(),
            )["jobId"]
        )
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=20)


def test_serve_with_a_seed_hands_out_the_same_ids() -> None:
    assert first_job_id("--seed", "7") == first_job_id("--seed", "7")


def test_rejects_the_same_organisation_twice() -> None:
    seed = str(SEED_DEMO)

    result = CliRunner().invoke(
        app, ["local", "serve", "--port", "0", "--org", seed, "--org", seed]
    )

    assert result.exit_code == 2
    assert "already provisioned" in result.output and "Traceback" not in result.output


def test_rejects_a_port_in_use() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        result = CliRunner().invoke(app, ["local", "serve", "--port", str(port)])

    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.output and "--port" in result.output


@pytest.mark.parametrize(
    ("option", "value", "allowed"),
    [
        ("--speed", "nan", "above 0 and at most 1e+06"),
        ("--speed", "inf", "above 0 and at most 1e+06"),
        ("--speed", "-inf", "above 0 and at most 1e+06"),
        ("--speed", "0", "above 0 and at most 1e+06"),
        ("--speed", "-1", "above 0 and at most 1e+06"),
        ("--speed", "1e7", "above 0 and at most 1e+06"),
        ("--threads", "0", "from 1 to 256"),
        ("--threads", "-3", "from 1 to 256"),
        ("--threads", "1000000000", "from 1 to 256"),
        ("--port", "70000", "from 0 to 65535"),
        ("--port", "-1", "from 0 to 65535"),
    ],
)
def test_rejects_an_option_out_of_range_in_one_line(option: str, value: str, allowed: str) -> None:
    result = CliRunner().invoke(app, ["local", "serve", option, value])

    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert line.startswith(f"error: {option} ") and allowed in line
    assert str(float(value) if option == "--speed" else int(value)) in line


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("a: &x [1]\nb: *x\n", "anchors (&name) and aliases (*name) are not allowed"),
        ("organisation: bad\nshares:\n  - name: a\n    capacity: {ml.g5.xlarge: 1}\n", "strategy"),
        ("[" * 5000, "nesting depth"),
    ],
)
def test_rejects_a_bad_organisation_file_naming_it_in_one_line(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = tmp_path / "org.yaml"
    path.write_text(content)

    result = CliRunner().invoke(app, ["local", "serve", "--port", "0", "--org", str(path)])

    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert line.startswith(f"error: {path}: ") and expected in line


def test_rejects_a_device_as_organisation_file() -> None:
    result = CliRunner().invoke(app, ["local", "serve", "--port", "0", "--org", "/dev/zero"])

    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert line.startswith("error: /dev/zero: ") and "not a regular file" in line
