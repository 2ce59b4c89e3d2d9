"""``quota local serve``: a real process serving boto3 until Ctrl-C; one-line errors."""

from __future__ import annotations

import json
import signal
import socket
import time
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
        out, err = process.communicate(timeout=60)
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
        process.communicate(timeout=60)

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
        process.communicate(timeout=60)


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
        ("--request-deadline", "0", "from 1 to 3600"),
        ("--request-deadline", "100000", "from 1 to 3600"),
        ("--max-connections-per-peer", "0", "from 1 to 500"),
        ("--max-connections-per-peer", "501", "from 1 to 500"),
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


def _advance(endpoint: str, seconds: float) -> None:
    body = json.dumps({"seconds": seconds}).encode()
    request = urllib.request.Request(f"{endpoint}/_quota/advance", data=body, method="POST")
    urllib.request.urlopen(request).close()


@pytest.mark.parametrize(("option", "status_at_2h40"), [((), "FAILED"), (("0",), "RUNNING")])
def test_serve_lets_plan_jobs_run_to_the_end_with_the_option(
    tmp_path: Path, option: tuple[str, ...], status_at_2h40: str
) -> None:
    # a 2 h plan from 1 h from now: by default SageMaker stops its jobs 30 min before its end
    org = tmp_path / "org.yaml"
    start = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    org.write_text(
        "organisation: plans\n"
        "shares:\n  - {name: llm, capacity: {ml.p5.48xlarge: 8}, strategy: LEND_AND_BORROW}\n"
        "training_plans:\n  - {name: p5-june, instance_type: ml.p5.48xlarge, "
        f'instance_count: 8, start: "{start}", duration_hours: 2}}\n',
        encoding="utf-8",
    )
    flags = ("--plan-stop-before-end-s", *option) if option else ()
    process = start_serve("--virtual", "--org", str(org), *flags)
    printed: list[str] = []
    try:
        endpoint = wait_for_endpoint(process, printed)
        batch = boto3.client(
            "batch", endpoint_url=endpoint, region_name="us-east-1", **DUMMY_CREDENTIALS
        )
        job = batch.submit_service_job(
            jobName="long",
            jobQueue="plans-queue",
            serviceJobType="SAGEMAKER_TRAINING",
            quotaShareName="llm",
            serviceRequestPayload=payload("ml.p5.48xlarge", count=8, runtime_s=10 * 3600),
        )["jobId"]
        _advance(endpoint, 3600 + 60)
        running = batch.describe_service_job(jobId=job)["status"]
        _advance(endpoint, 100 * 60)  # 2 h 41 min from now: past the default stop
        later = batch.describe_service_job(jobId=job)["status"]
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    assert (running, later) == ("RUNNING", status_at_2h40)


def test_rejects_a_plan_stop_out_of_range() -> None:
    result = CliRunner().invoke(app, ["local", "serve", "--plan-stop-before-end-s", "nan"])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: --plan-stop-before-end-s: must be a number of seconds from 0 to 86400 (a day) "
        "(got nan); fix: use 1800 (AWS's 30 minutes) or 0 to let plan jobs run to the end"
    )
