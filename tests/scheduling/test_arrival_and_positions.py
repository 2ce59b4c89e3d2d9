"""What a driver observes between its ``advance`` calls: a new job RUNNABLE for one advance
before it is dispatched (``dispatch_next_advance``), and when each RUNNABLE job reached its
place in the queue-wide order (``track_queue_positions``: ``earliestTimeAtPosition``)."""

from __future__ import annotations

from quota_constructs.model import QuotaShareSpec, SharingStrategy
from quota_constructs.scheduling import JobRequest, JobStatus, Scheduler, SchedulerOptions

G5 = "ml.g5.xlarge"


def one_share(n: int, **options: object) -> Scheduler:
    return Scheduler(
        queue_name="q",
        shares=[QuotaShareSpec("A", {G5: n}, SharingStrategy.RESERVE)],
        options=SchedulerOptions(**options),  # type: ignore[arg-type]
    )


def job(name: str, priority: int = 0, duration: float | None = None) -> JobRequest:
    return JobRequest(name, "A", {G5: 1}, duration, priority=priority)


def test_a_new_job_is_runnable_for_one_advance_before_it_is_dispatched() -> None:
    sched = one_share(2, dispatch_next_advance=True)
    new = sched.submit(job("new"), now=0)
    assert new.status is JobStatus.SUBMITTED
    sched.advance(1)
    assert new.status is JobStatus.RUNNABLE  # capacity is free, yet it waits for the next one
    sched.advance(1)  # no time passed: not the next advance
    assert new.status is JobStatus.RUNNABLE
    sched.advance(2)
    assert new.status is JobStatus.SCHEDULED and new.scheduled_at == 2


def test_jobs_arriving_in_one_advance_dispatch_by_priority() -> None:
    sched = one_share(1, dispatch_next_advance=True)
    low = sched.submit(job("low", priority=1), now=0)
    high = sched.submit(job("high", priority=9), now=0)
    sched.advance(1)
    sched.advance(2)
    assert high.status is JobStatus.SCHEDULED and low.status is JobStatus.RUNNABLE


def test_without_the_option_a_job_is_dispatched_in_the_instant_it_is_runnable() -> None:
    sched = one_share(1)
    new = sched.submit(job("new"), now=0)
    sched.advance(0.5)
    assert new.status is JobStatus.SCHEDULED and new.scheduled_at == 0


def test_earliest_time_at_position_changes_when_the_job_moves_up() -> None:
    sched = one_share(1, track_queue_positions=True)
    sched.submit(job("running", duration=100.0), now=0)
    first = sched.submit(job("first", duration=100.0), now=0)
    second = sched.submit(job("second"), now=0)
    sched.advance(50)
    front = {e.job_id: e.earliest_time_at_position for e in sched.snapshot().front_of_queue}
    assert front == {first.job_id: 0.0, second.job_id: 0.0}
    sched.advance(150)  # "running" ended at 102 (2 s to RUNNING): "first" runs, "second" moved
    front = {e.job_id: e.earliest_time_at_position for e in sched.snapshot().front_of_queue}
    assert front == {second.job_id: 102.0}


def test_earliest_time_at_position_changes_when_a_job_is_put_ahead() -> None:
    sched = one_share(1, track_queue_positions=True)
    sched.submit(job("running"), now=0)
    waiting = sched.submit(job("waiting"), now=0)
    sched.advance(10)
    sched.submit(job("urgent", priority=5), now=30)
    sched.advance(40)
    front = {e.job_id: e.earliest_time_at_position for e in sched.snapshot().front_of_queue}
    assert front[waiting.job_id] == 30.0
