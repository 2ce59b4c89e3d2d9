"""A failing events file or listener never wedges the scheduler: every transition completes, the
failure is logged and counted, and an events file that cannot be written is refused at start."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.local.emulator import Emulator
from quota_constructs.local.events import EventSink
from quota_constructs.scheduling import SchedulerEvent
from tests.helpers import ORGS_DIR, payload

FULL_DEVICE = Path("/dev/full")
"""Every write to it fails with ENOSPC, as on a full disk."""


def run_one_job(emulator: Emulator) -> dict[str, object]:
    """Submit one QS1 job on seed-demo, let 60 s pass; the job's DescribeServiceJob answer."""
    queue = emulator.provision_file(ORGS_DIR / "seed-demo.yaml").job_queue_arn
    submitted = emulator.call(
        "batch",
        "SubmitServiceJob",
        {
            "jobName": "j",
            "jobQueue": queue,
            "serviceJobType": "SAGEMAKER_TRAINING",
            "serviceRequestPayload": payload(),
            "quotaShareName": "QS1",
        },
    )
    emulator.advance(60)
    return emulator.call("batch", "DescribeServiceJob", {"jobId": submitted["jobId"]})


@pytest.mark.skipif(not FULL_DEVICE.exists(), reason="needs /dev/full (Linux)")
def test_a_full_events_file_leaves_no_job_half_changed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sink = EventSink(tmp_path / "events.jsonl")
    sink.path = FULL_DEVICE  # the disk fills up after start-up
    emulator = Emulator(seed=1, events=sink)

    job = run_one_job(emulator)

    assert job["status"] == "RUNNING"
    assert sink.write_failures > 0
    assert emulator.failure_counts()["eventWriteFailures"] == sink.write_failures
    assert "could not write" in caplog.text
    assert "No space left on device" in caplog.text


def test_a_failing_listener_leaves_no_job_half_changed(caplog: pytest.LogCaptureFixture) -> None:
    emulator = Emulator(seed=1)

    def fails(queue_name: str, event: SchedulerEvent) -> None:
        raise OSError(28, "No space left on device")

    emulator.jobs.listeners.append(fails)

    with caplog.at_level(logging.ERROR):
        job = run_one_job(emulator)

    assert job["status"] == "RUNNING"
    assert job["startedAt"] is not None
    assert emulator.failure_counts()["listenerFailures"] == 5  # SUBMITTED .. RUNNING
    assert "listener" in caplog.text and "failed on" in caplog.text


def test_no_failures_are_counted_when_all_goes_well(tmp_path: Path) -> None:
    emulator = Emulator(seed=1, events=EventSink(tmp_path / "events.jsonl"))

    run_one_job(emulator)

    assert emulator.failure_counts() == {"listenerFailures": 0, "eventWriteFailures": 0}
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    assert len(lines) == 4  # RUNNABLE, SCHEDULED, STARTING, RUNNING


@pytest.mark.skipif(not FULL_DEVICE.exists(), reason="needs /dev/full (Linux)")
def test_rejects_an_events_file_on_a_full_device() -> None:
    result = CliRunner().invoke(
        app, ["local", "serve", "--port", "0", "--events-file", str(FULL_DEVICE)]
    )

    assert result.exit_code == 2
    assert "error: --events-file /dev/full is not a regular file" in result.output
    assert "Traceback" not in result.output


def test_rejects_a_fifo_as_events_file_instead_of_stalling(tmp_path: Path) -> None:
    """Opening a FIFO for writing blocks until a reader comes: refused before it is opened."""
    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)
    result = CliRunner().invoke(app, ["local", "serve", "--port", "0", "--events-file", str(fifo)])

    assert result.exit_code == 2
    assert f"error: --events-file {fifo} is not a regular file (a FIFO, a device" in " ".join(
        result.output.split()
    )
