"""Scheduler.feed (a batch of submits run in one call) and the usage log (holds, releases and
preemptions with their times, instead of a listener): the same run as a caller's own loop."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quota_constructs.model import QuotaShareSpec, SharingStrategy
from quota_constructs.scheduling import (
    EventKind,
    JobRequest,
    JobStatus,
    Scheduler,
    SchedulerEvent,
    SchedulerOptions,
    SubmitRejected,
)
from tests.scheduling.helpers import TYPES, lending_organisations

OPTIONS = SchedulerOptions(preemption_duration_s=5.0)
DISPATCHED = {JobStatus.SCHEDULED, JobStatus.STARTING, JobStatus.RUNNING}

submits = st.lists(
    st.tuples(
        st.sampled_from([0.0, 0.0, 1.0, 2.5, 3.0, 7.0, 20.0]),  # gap to the previous submit
        st.integers(0, 4),  # share index
        st.integers(1, 3),  # instances
        st.sampled_from([1.0, 5.0, 10.0, 30.0]),  # duration
        st.integers(0, 3),  # priority
    ),
    min_size=1,
    max_size=40,
)


def _workload(
    shares: list[QuotaShareSpec], drawn: list[tuple[float, int, int, float, int]]
) -> tuple[list[JobRequest], list[float]]:
    requests, times, now = [], [], 0.0
    for index, (gap, share, count, duration, priority) in enumerate(drawn):
        now += gap
        name = shares[share % len(shares)].name
        request = JobRequest(f"j{index}", name, {TYPES[0]: count}, duration, priority=priority)
        requests.append(request)
        times.append(now)
    return requests, times


def _loop(sched: Scheduler, requests: list[JobRequest], times: list[float]) -> int:
    """The caller's own loop: submit what is due, advance, instant after instant."""
    index, instants = 0, 0
    while True:
        next_event = sched.next_event_time()
        next_submit = times[index] if index < len(times) else math.inf
        now = min(next_submit, math.inf if next_event is None else next_event)
        if now == math.inf:
            return instants
        while index < len(times) and times[index] <= now:
            sched.submit(requests[index], now=now)
            index += 1
        sched.advance(now)
        instants += 1


def _state(sched: Scheduler) -> list[tuple[Any, ...]]:
    return [
        (j.job_id, j.status, j.stopped_at, tuple(j.attempts), tuple(j.preemptions))
        for j in sched.jobs
    ]


@settings(max_examples=60, deadline=None)
@given(lending_organisations(), submits)
def test_feed_runs_what_a_loop_of_submit_and_advance_runs(
    shares: list[QuotaShareSpec], drawn: list[tuple[float, int, int, float, int]]
) -> None:
    requests, times = _workload(shares, drawn)
    looped = Scheduler(queue_name="q", shares=shares, options=OPTIONS)
    instants = _loop(looped, requests, times)
    fed = Scheduler(queue_name="q", shares=shares, options=OPTIONS)
    assert fed.feed(requests, times, 0, math.inf) == len(requests)
    assert fed.next_event_time() is None
    assert _state(fed) == _state(looped)
    assert fed.instants_fed == instants


@settings(max_examples=30, deadline=None)
@given(lending_organisations(), submits, st.floats(0.0, 60.0))
def test_feed_stops_before_the_given_instant_and_goes_on_from_there(
    shares: list[QuotaShareSpec], drawn: list[tuple[float, int, int, float, int]], stop: float
) -> None:
    requests, times = _workload(shares, drawn)
    whole = Scheduler(queue_name="q", shares=shares, options=OPTIONS)
    whole.feed(requests, times, 0, math.inf)
    split = Scheduler(queue_name="q", shares=shares, options=OPTIONS)
    index = split.feed(requests, times, 0, stop)
    assert all(t < stop for t in times[:index])
    assert split.now < stop or split.now == 0.0  # no instant at or after ``stop`` yet
    assert index == len(times) or times[index] >= stop
    split.feed(requests, times, index, math.inf)
    assert _state(split) == _state(whole)
    assert split.instants_fed == whole.instants_fed


@settings(max_examples=60, deadline=None)
@given(lending_organisations(), submits)
def test_the_usage_log_holds_what_a_listener_sees_hold_release_and_preempt(
    shares: list[QuotaShareSpec], drawn: list[tuple[float, int, int, float, int]]
) -> None:
    requests, times = _workload(shares, drawn)
    sched = Scheduler(queue_name="q", shares=shares, options=OPTIONS)
    log = sched.keep_usage_log()
    seen: list[tuple[float, str, str, str, int]] = []
    preemptions: list[tuple[float, str, str]] = []
    held: dict[str, dict[str, dict[str, int]]] = {}

    def listen(event: SchedulerEvent) -> None:
        job = event.job
        if event.kind is EventKind.PREEMPTION_STARTED and event.preemption is not None:
            preemptions.append((event.time, job.share_name, event.preemption.rule.value))
            # a cross-share reclaim may relabel which of the share's jobs hold the lender's
            # instances (the share's totals stay): releases give back what is held now
            for other in sched.jobs:
                if other.job_id in held:
                    held[other.job_id] = {k: dict(v) for k, v in other.alloc.items()}
        if event.kind is not EventKind.STATE_CHANGE:
            return
        was, holds = event.previous_status in DISPATCHED, event.status in DISPATCHED
        if holds and not was:
            held[job.job_id] = {k: dict(v) for k, v in job.alloc.items()}
            alloc, sign = held[job.job_id], 1
        elif was and not holds:
            alloc, sign = held.pop(job.job_id), -1
        else:
            return
        for lender, amounts in alloc.items():
            for itype, n in amounts.items():
                seen.append((event.time, job.share_name, lender, itype, sign * n))

    sched.subscribe(listen)
    sched.feed(requests, times, 0, math.inf)
    assert log.changes == seen and log.preemptions == preemptions
    assert sched.keep_usage_log() is log  # asked again: the same log


def test_feed_refuses_a_request_the_queue_refuses_after_submitting_those_before_it() -> None:
    shares = [QuotaShareSpec("a", {TYPES[0]: 2}, SharingStrategy.LEND_AND_BORROW)]
    requests = [
        JobRequest("ok", "a", {TYPES[0]: 1}, 10.0),
        JobRequest("bad", "nope", {TYPES[0]: 1}, 10.0),
    ]
    sched = Scheduler(queue_name="q", shares=shares)
    with pytest.raises(SubmitRejected, match="nope"):
        sched.feed(requests, [0.0, 1.0], 0, math.inf)
    assert [j.request.job_name for j in sched.jobs] == ["ok"]


def test_feed_reports_progress_every_so_many_instants() -> None:
    shares = [QuotaShareSpec("a", {TYPES[0]: 2}, SharingStrategy.RESERVE)]
    requests = [JobRequest(f"j{i}", "a", {TYPES[0]: 1}, 0.5) for i in range(10)]
    seen: list[float] = []
    instant = SchedulerOptions(scheduled_to_starting_s=0.0, starting_to_running_s=0.0)
    sched = Scheduler(queue_name="q", shares=shares, options=instant)
    sched.feed(requests, [float(i) for i in range(10)], 0, math.inf, seen.append, 4)
    assert sched.instants_fed == 20  # each submit, each end half a second later
    assert seen == [1.5, 3.5, 5.5, 7.5, 9.5]
