"""collector_paused: the core makes no reference cycles, so pausing the collector leaks nothing."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from hypothesis import given, settings

from quota_constructs.model import QuotaShareSpec, SharingStrategy
from quota_constructs.scheduling import JobRequest, Scheduler, SchedulerOptions, collector_paused
from tests.scheduling.helpers import TYPES, operations, option_sets, organisations, play


@pytest.mark.slow  # 40 generated runs, each collected by hand: `make test`
@settings(max_examples=40, deadline=None)
@given(organisations(), operations, option_sets)
def test_a_run_leaves_no_garbage_for_the_cyclic_collector(
    shares: list[QuotaShareSpec], ops: list[tuple[Any, ...]], options: SchedulerOptions
) -> None:
    gc.collect()
    with collector_paused():
        assert not gc.isenabled()
        run = play(shares, ops, options)
        run.sched.snapshot()
        for job in run.sched.jobs:
            run.sched.pending_reason(job.job_id)
        found = gc.collect()
    assert gc.isenabled()
    assert found == 0, f"{found} objects only the cyclic collector could free"
    assert run.log  # the run did something


def test_a_dropped_scheduler_is_freed_by_reference_counting() -> None:
    gc.collect()
    with collector_paused():
        shares = [
            QuotaShareSpec("a", {TYPES[0]: 2}, SharingStrategy.LEND_AND_BORROW),
            QuotaShareSpec("b", {TYPES[0]: 2}, SharingStrategy.LEND, in_share_preemption=True),
        ]
        sched = Scheduler(queue_name="q", shares=shares)
        for index in range(12):
            request = JobRequest(f"j{index}", "ab"[index % 2], {TYPES[0]: 1}, 30.0)
            sched.submit(request, now=float(index))
        sched.run_until_idle()
        del sched
        assert gc.collect() == 0


def test_the_collector_stays_paused_in_nested_uses_and_off_if_it_was() -> None:
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_objects_made_during_the_pause_leave_it_in_the_oldest_generation_still_collectable() -> (
    None
):
    class Node:
        def __init__(self) -> None:
            self.other: Node | None = None

    gc.collect()
    with collector_paused():
        kept = Node()
        cycle = Node()
        cycle.other = Node()
        cycle.other.other = cycle
    assert any(o is kept for o in gc.get_objects(generation=2))
    assert not any(o is kept for o in gc.get_objects(generation=0))
    del cycle
    assert gc.collect() >= 2  # a full collection still frees the cycle made in the pause
