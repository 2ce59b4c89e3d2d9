"""The scheduler's timetable: share calendars and plan windows applied as its own timed events,
in time order with the jobs' events, whoever advances the scheduler."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from quota_constructs.model import (
    QuotaShareSpec,
    ShareCalendar,
    ShareWindow,
    SharingStrategy,
    TrainingPlanSpec,
    utc_text,
)
from quota_constructs.scheduling import CalendarFlip, JobRequest, JobStatus, Scheduler

GPU = "ml.g5.xlarge"
MONDAY = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
DAY = 86400.0
SATURDAY = 5 * DAY
WEEKEND_RESERVE = ShareCalendar((ShareWindow(("sat", "sun"), strategy=SharingStrategy.RESERVE),))


def _queue() -> Scheduler:
    weekend = QuotaShareSpec("weekend", {GPU: 1}, SharingStrategy.LEND)
    weekday = QuotaShareSpec("weekday", {GPU: 1}, SharingStrategy.LEND_AND_BORROW, borrow_limit=-1)
    return Scheduler(queue_name="q", shares=[weekend, weekday])


def _borrow(sched: Scheduler, at: float, duration_s: float) -> str:
    """Two weekday jobs at ``at``: one on its own capacity, one borrowing the weekend's."""
    sched.submit(
        JobRequest(job_name="own", share_name="weekday", demand={GPU: 1}, duration_s=4 * 3600.0),
        now=at,
    )
    job = sched.submit(
        JobRequest(
            job_name="borrower", share_name="weekday", demand={GPU: 1}, duration_s=duration_s
        ),
        now=at,
    )
    sched.advance(at + 60)
    assert job.status is JobStatus.RUNNING
    return job.job_id


def _strategy(sched: Scheduler) -> SharingStrategy:
    return sched.share_spec("weekend").strategy


def test_a_calendar_flips_at_its_edge_preempting_the_borrower() -> None:
    sched = _queue()
    seen: list[CalendarFlip] = []
    sched.timetable.listeners.append(seen.append)
    sched.follow_calendar(sched.share_spec("weekend"), WEEKEND_RESERVE, epoch_s=MONDAY)
    borrower = _borrow(sched, SATURDAY - 1800, 7200.0)
    sched.advance(SATURDAY - 1)
    assert _strategy(sched) is SharingStrategy.LEND
    sched.advance(SATURDAY + 60)  # one call crosses the edge: the flip happens at the edge
    assert _strategy(sched) is SharingStrategy.RESERVE
    assert seen == sched.timetable.flips
    assert [(f.time, f.spec.strategy) for f in seen] == [(SATURDAY, SharingStrategy.RESERVE)]
    (attempt,) = sched.job(borrower).attempts
    assert attempt.preempted and attempt.stopped_at is not None
    assert attempt.stopped_at - SATURDAY <= sched.options.preemption_duration_s
    sched.advance(SATURDAY + 2 * DAY + 1)
    assert [f.time for f in seen] == [SATURDAY, SATURDAY + 2 * DAY]
    assert _strategy(sched) is SharingStrategy.LEND


def test_the_settings_in_force_apply_when_the_calendar_is_followed() -> None:
    sched = Scheduler(
        queue_name="q", shares=[QuotaShareSpec("weekend", {GPU: 1}, SharingStrategy.LEND)]
    )
    sched.follow_calendar(sched.share_spec("weekend"), WEEKEND_RESERVE, epoch_s=MONDAY + SATURDAY)
    assert _strategy(sched) is SharingStrategy.RESERVE
    assert [f.time for f in sched.timetable.flips] == [0.0]


def test_with_a_grace_the_flip_waits_until_the_borrower_finishes() -> None:
    sched = _queue()
    sched.follow_calendar(
        sched.share_spec("weekend"), WEEKEND_RESERVE, epoch_s=MONDAY, grace_s=3600.0
    )
    borrower = _borrow(sched, SATURDAY - 1800, 2400.0)
    sched.advance(SATURDAY + 60)
    assert _strategy(sched) is SharingStrategy.LEND  # waiting: the borrower runs on
    sched.advance(SATURDAY + 3600)
    finished = sched.job(borrower)
    assert finished.status is JobStatus.SUCCEEDED and len(finished.attempts) == 1
    assert sched.timetable.flips[-1].time == finished.attempts[0].stopped_at


def test_the_grace_ends_at_its_deadline() -> None:
    sched = _queue()
    sched.follow_calendar(sched.share_spec("weekend"), WEEKEND_RESERVE, epoch_s=MONDAY, grace_s=600)
    borrower = _borrow(sched, SATURDAY - 1800, 7200.0)
    sched.advance(SATURDAY + 3600)
    assert sched.timetable.flips[-1].time == SATURDAY + 600
    assert sched.job(borrower).attempts[0].preempted


def test_a_removed_share_is_no_longer_followed() -> None:
    sched = _queue()
    sched.follow_calendar(sched.share_spec("weekend"), WEEKEND_RESERVE, epoch_s=MONDAY)
    sched.remove_share("weekend", now=DAY)
    assert sched.timetable.next_time() == math.inf
    sched.advance(SATURDAY + DAY)
    assert sched.timetable.flips == []


@pytest.mark.parametrize("grace", [-1.0, math.nan, math.inf])
def test_a_bad_grace_is_refused_naming_it(grace: float) -> None:
    sched = _queue()
    with pytest.raises(ValueError, match=r"calendar grace must be a finite number of seconds"):
        sched.follow_calendar(
            sched.share_spec("weekend"), WEEKEND_RESERVE, epoch_s=0, grace_s=grace
        )


def _plan(start_s: float, hours: int) -> TrainingPlanSpec:
    return TrainingPlanSpec(
        name="p1",
        instance_type=GPU,
        instance_count=2,
        start=utc_text(start_s),
        duration_hours=hours,
    )


def test_plan_capacity_exists_only_in_the_window_and_its_jobs_stop_before_the_end() -> None:
    sched = Scheduler(
        queue_name="q", shares=[QuotaShareSpec("a", {GPU: 2}, SharingStrategy.RESERVE)]
    )
    sched.follow_plans([_plan(MONDAY + 3600, 2)], epoch_s=MONDAY)
    assert sched.service_environment[GPU] == 0
    job = sched.submit(
        JobRequest(job_name="j", share_name="a", demand={GPU: 2}, duration_s=5 * 3600.0), now=0.0
    )
    sched.advance(3600 - 1)
    assert job.status is JobStatus.RUNNABLE
    sched.advance(3600 + 600)
    assert job.status is JobStatus.RUNNING and sched.service_environment[GPU] == 2
    sched.advance(4 * 3600)  # the plan ends at 3 h: its capacity went 30 minutes before
    assert sched.service_environment[GPU] == 0
    assert job.status is JobStatus.FAILED
    assert job.attempts[-1].stopped_at == 3 * 3600 - 1800
    assert job.status_reason.startswith("TrainingPlanEnded")


def test_a_set_capacity_caps_the_plans_instances() -> None:
    sched = Scheduler(
        queue_name="q", shares=[QuotaShareSpec("a", {GPU: 2}, SharingStrategy.RESERVE)]
    )
    sched.follow_plans([_plan(MONDAY, 10)], epoch_s=MONDAY)
    assert sched.usable_capacity({GPU: 1, "ml.p4d.24xlarge": 3}) == {
        GPU: 1,
        "ml.p4d.24xlarge": 3,
    }
