"""The emulator honours share calendars on its clock: a weekday lender turns RESERVE at the
weekend edge (Describe shows it, borrowers are preempted or, with a grace, finish first) and
lends again on Monday."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.local.emulator import Emulator
from quota_constructs.local.state.clock import VirtualClock
from quota_constructs.local.testing import DUMMY_CREDENTIALS
from quota_constructs.local.wire.server import start_server
from tests.emulator.helpers import status, submit
from tests.helpers import payload, runs_for

ORG = """organisation: cal-demo
shares:
  - name: weekend
    capacity: {ml.g5.xlarge: 1}
    strategy: LEND
    schedule: [{days: [sat, sun], strategy: RESERVE}]
  - name: weekday
    capacity: {ml.g5.xlarge: 1}
    strategy: LEND_AND_BORROW
"""
FRIDAY_2330 = datetime(2026, 12, 4, 23, 30, tzinfo=UTC).timestamp()
HALF_HOUR = 1800.0


def _serve(tmp_path: Path, grace_s: float) -> Iterator[tuple[Emulator, Any]]:
    path = tmp_path / "cal-demo.yaml"
    path.write_text(ORG, encoding="utf-8")
    emulator = Emulator(clock=VirtualClock(start_epoch=FRIDAY_2330), calendar_grace_s=grace_s)
    emulator.provision_file(path)
    server = start_server(emulator, host="127.0.0.1", port=0)
    batch = boto3.client(
        "batch",
        endpoint_url=f"http://127.0.0.1:{server.port}",
        region_name=emulator.account.region,
        **DUMMY_CREDENTIALS,
    )
    try:
        yield emulator, batch
    finally:
        server.shutdown()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Emulator, Any]]:
    yield from _serve(tmp_path, 0.0)


def _strategy(batch: Any) -> str:
    queue = "cal-demo-queue"
    shares = batch.list_quota_shares(jobQueue=queue)["quotaShares"]
    (weekend,) = [s for s in shares if s["quotaShareName"] == "weekend"]
    return str(weekend["resourceSharingConfiguration"]["strategy"])


def _borrow(batch: Any, runtime_s: int = 7200) -> tuple[str, str]:
    """Two weekday jobs: one on its own capacity, then one borrowing the weekend share's."""
    own = submit(
        batch, "cal-demo-queue", "weekday", "own", serviceRequestPayload=payload(runtime_s=7200)
    )
    borrower = submit(
        batch,
        "cal-demo-queue",
        "weekday",
        "borrower",
        serviceRequestPayload=payload(runtime_s=runtime_s),
        tags=runs_for(runtime_s),
    )
    return own, borrower


def test_the_weekend_share_turns_reserve_at_the_edge_and_preempts_its_borrower(
    served: tuple[Emulator, Any],
) -> None:
    emulator, batch = served
    own, borrower = _borrow(batch)
    emulator.advance(600)
    assert _strategy(batch) == "LEND"
    assert [status(batch, j) for j in (own, borrower)] == ["RUNNING", "RUNNING"]
    emulator.advance(HALF_HOUR - 600 - 1)
    assert _strategy(batch) == "LEND"
    emulator.advance(1)  # Saturday 00:00 UTC
    assert _strategy(batch) == "RESERVE"
    assert [f.time for f in emulator.calendar_flips] == [HALF_HOUR]
    assert status(batch, own) == "RUNNING"
    emulator.advance(120)
    preempted = batch.describe_service_job(jobId=borrower)
    assert preempted["status"] == "RUNNABLE"
    assert preempted["preemptionSummary"]["preemptedAttemptCount"] == 1
    emulator.advance(2 * 86400)  # Monday 00:00 has passed
    assert _strategy(batch) == "LEND"
    assert [f.spec.strategy.value for f in emulator.calendar_flips] == ["RESERVE", "LEND"]
    assert emulator.calendar_flips[1].time == HALF_HOUR + 2 * 86400


def test_with_a_grace_a_borrower_finishes_before_the_flip(tmp_path: Path) -> None:
    for emulator, batch in _serve(tmp_path, grace_s=3600.0):
        _, borrower = _borrow(batch, runtime_s=2400)
        emulator.advance(HALF_HOUR + 60)
        assert _strategy(batch) == "LEND"  # waiting: the borrower still runs
        assert status(batch, borrower) == "RUNNING"
        emulator.advance(1800)
        assert _strategy(batch) == "RESERVE"
        assert status(batch, borrower) == "SUCCEEDED"
        flipped = emulator.calendar_flips[-1].time
        finished = batch.describe_service_job(jobId=borrower)["stoppedAt"] / 1000 - FRIDAY_2330
        assert HALF_HOUR < flipped == pytest.approx(finished, abs=1)


def test_with_a_grace_a_long_borrower_is_preempted_when_it_ends(tmp_path: Path) -> None:
    for emulator, batch in _serve(tmp_path, grace_s=3600.0):
        _, borrower = _borrow(batch)
        emulator.advance(HALF_HOUR + 3600 + 60)
        assert _strategy(batch) == "RESERVE"
        assert emulator.calendar_flips[-1].time == HALF_HOUR + 3600
        assert status(batch, borrower) == "RUNNABLE"


@pytest.mark.parametrize("command", [["local", "serve", "--port", "0"], ["simulate"]])
@pytest.mark.parametrize("value", ["-1", "nan", "700000"])
def test_serve_and_simulate_refuse_a_calendar_grace_out_of_range(
    command: list[str], value: str
) -> None:
    result = CliRunner().invoke(app, [*command, "--calendar-grace", value])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: --calendar-grace {float(value):g}: must be from 0 to 604800 seconds "
        "(0 preempts borrowers at the window edge)"
    )
