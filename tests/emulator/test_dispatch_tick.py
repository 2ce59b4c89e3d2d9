"""When a submitted job is first scheduled: SUBMITTED until the next scheduler tick, RUNNABLE
for a tick, then SCHEDULED (AWS's states, each observable, the default), or before the next
request (``dispatch="immediate"``, the emulator's earlier behaviour)."""

from __future__ import annotations

from typing import Any

from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.clock import RealTimeClock
from quota_constructs.local.state.job_service import WALL_TICK_S, DispatchMode, JobService
from quota_constructs.local.state.tags import TagStore
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from tests.emulator.helpers import status, submit

QUEUE = "seed-demo-queue"


def three_back_to_back(batch: Any) -> list[str]:
    """Three jobs into QS3 (one instance, RESERVE), lowest priority first."""
    return [submit(batch, QUEUE, "QS3", f"p{p}", schedulingPriority=p) for p in (1, 5, 9)]


def test_a_job_is_submitted_then_runnable_for_a_tick_then_dispatched_by_priority(
    emulator: EmulatorServer,
) -> None:
    batch = emulator.client("batch")
    low, mid, high = three_back_to_back(batch)

    assert [status(batch, j) for j in (low, mid, high)] == ["SUBMITTED"] * 3
    emulator.advance(0.5)  # RUNNABLE even with QS3's instance free: SCHEDULED from a tick on
    assert [status(batch, j) for j in (low, mid, high)] == ["RUNNABLE"] * 3
    emulator.advance(0.5)
    assert [status(batch, j) for j in (low, mid, high)] == ["RUNNABLE", "RUNNABLE", "SCHEDULED"]


def test_immediate_dispatch_keeps_arrival_order() -> None:
    with EmulatorServer(org_files=[SEED_DEMO], dispatch="immediate") as emu:
        batch = emu.client("batch")
        low, mid, high = three_back_to_back(batch)

        assert [status(batch, j) for j in (low, mid, high)] == [
            "SCHEDULED",
            "RUNNABLE",
            "RUNNABLE",
        ]


class StoppedWallClock(RealTimeClock):
    """A wall clock whose time the test sets."""

    def __init__(self) -> None:
        super().__init__()
        self.t = 0.0

    def now(self) -> float:
        return self.t


def test_on_a_wall_clock_the_schedulers_move_in_whole_ticks() -> None:
    clock = StoppedWallClock()
    jobs = JobService(Account(), clock, TagStore())
    immediate = JobService(Account(), clock, TagStore(), dispatch=DispatchMode.IMMEDIATE)
    clock.t = 2.7 * WALL_TICK_S

    assert jobs.now() == 2 * WALL_TICK_S
    assert immediate.now() == 2.7 * WALL_TICK_S
