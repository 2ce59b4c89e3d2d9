"""``quota local advance`` and ``quota local why``: the emulator's control endpoints over HTTP."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys

from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.commands._common import ExitCode
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from tests.emulator.helpers import submit
from tests.helpers import start_serve, wait_for_endpoint

runner = CliRunner()


def local(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["local", *args], env={"COLUMNS": "40"})
    return result.exit_code, result.stdout, result.stderr


def tutorial(emu: EmulatorServer) -> dict[str, str]:
    """QS1 runs p3, borrows QS2's GPU for p2, p1 waits; then QS2's job reclaims it."""
    batch, queue = emu.client("batch"), emu.queue_arn("seed-demo")
    ids = {
        f"p{p}": submit(batch, queue, "QS1", f"qs1-p{p}", schedulingPriority=p) for p in (3, 2, 1)
    }
    emu.advance(10)
    ids["qs2"] = submit(batch, queue, "QS2", "qs2-job", schedulingPriority=1)
    emu.advance(10)
    return ids


def test_advance_moves_virtual_time(emulator: EmulatorServer) -> None:
    code, out, err = local("advance", "60", "--endpoint-url", emulator.endpoint_url)
    assert code == 0, err
    assert out.strip() == "emulator time: 60 s" and emulator.now == 60
    code, out, _ = local("advance", "1.5", "--endpoint-url", emulator.endpoint_url, "--json")
    assert code == 0 and json.loads(out) == {"now": 61.5}


def test_advance_dispatches_what_falls_due(emulator: EmulatorServer) -> None:
    batch = emulator.client("batch")
    job_id = submit(batch, emulator.queue_arn("seed-demo"), "QS3", "soon")
    assert local("advance", "30", "--endpoint-url", emulator.endpoint_url)[0] == 0
    assert batch.describe_service_job(jobId=job_id)["status"] == "RUNNING"


def test_rejects_advance_on_a_wall_clock() -> None:
    with EmulatorServer(org_files=[SEED_DEMO], clock="wall") as emu:
        code, out, err = local("advance", "60", "--endpoint-url", emu.endpoint_url)
    assert code == ExitCode.USAGE and out == ""
    assert err.startswith("error: advance needs a virtual clock (quota local serve --virtual)")


def test_rejects_advance_with_no_emulator_listening() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens on it
    code, _, err = local("advance", "60", "--endpoint-url", f"http://127.0.0.1:{port}")
    assert code == ExitCode.FAILED
    assert f"no emulator answers at http://127.0.0.1:{port}" in err and "Traceback" not in err


def test_why_explains_waiting_and_preemption(emulator: EmulatorServer) -> None:
    ids = tutorial(emulator)
    code, out, err = local("why", ids["p2"], "--endpoint-url", emulator.endpoint_url)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"qs1-p2 ({ids['p2']}) in QS1: RUNNABLE, priority 2"
    pending = emulator.explain(ids["p2"])["pending"]
    assert lines[1].startswith("forecast start: ~")  # when, then why
    assert f"waits: {pending['kind']}: {pending['message']} (position 0)" in lines
    assert f"by qs2-job ({ids['qs2']}) in QS2, CROSS_SHARE:" in out
    assert "borrowed 1 x ml.g5.xlarge -> nothing" in out


def test_why_json_is_the_explanation(emulator: EmulatorServer) -> None:
    ids = tutorial(emulator)
    code, out, _ = local("why", ids["p1"], "--endpoint-url", emulator.endpoint_url, "--json")
    answer = json.loads(out)
    forecast = answer.pop("forecast")
    caveats = answer.pop("forecastCaveats")
    assert code == 0 and answer == emulator.explain(ids["p1"])
    assert any("not foreseen" in c for c in caveats)
    assert forecast["jobName"] == "qs1-p1" and forecast["forecastStartS"]["p50"] > 0


def test_why_unknown_job_exits_3(emulator: EmulatorServer) -> None:
    code, out, err = local("why", "no-such-job", "--endpoint-url", emulator.endpoint_url)
    assert code == ExitCode.NOT_FOUND and out == ""
    assert err.startswith("error: jobId: no service job 'no-such-job'")


def test_the_commands_serve_prints_run_as_written() -> None:
    process = start_serve("--virtual")
    printed: list[str] = []
    try:
        endpoint = wait_for_endpoint(process, printed)
        shown = [line.split(": ", 1)[1].strip() for line in printed if ": quota local " in line]
        advance = next(c for c in shown if c.startswith("quota local advance"))
        env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "COLUMNS": "40"}
        code = "from quota_constructs.commands import main; main()"
        done = subprocess.run(
            [sys.executable, "-c", code, *shlex.split(advance)[1:]],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    assert advance == f"quota local advance 60 --endpoint-url {endpoint}"
    assert done.returncode == 0 and done.stdout.strip() == "emulator time: 60 s", done.stderr
    assert any(c == f"quota local why JOB_ID --endpoint-url {endpoint}" for c in shown)
