"""What a driver observes: a new job RUNNABLE for ``dispatch_delay_s`` before it is dispatched,
and when each RUNNABLE job reached its place in the queue-wide order (``track_queue_positions``:
``earliestTimeAtPosition``)."""

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


def test_a_new_job_is_runnable_for_its_dispatch_delay_even_with_capacity_free() -> None:
    sched = one_share(2, dispatch_delay_s=1.0)
    new = sched.submit(job("new"), now=0)
    assert new.status is JobStatus.SUBMITTED
    sched.advance(0.5)
    assert new.status is JobStatus.RUNNABLE and new.runnable_at == 0
    sched.advance(30)
    assert new.status is JobStatus.RUNNING and new.scheduled_at == 1.0


def test_a_waiting_new_head_holds_its_share_then_jobs_dispatch_by_priority() -> None:
    sched = one_share(1, dispatch_delay_s=1.0)
    low = sched.submit(job("low", priority=1), now=0)
    sched.advance(0.5)
    high = sched.submit(job("high", priority=9), now=0.5)
    sched.advance(1.0)  # low's delay is over, but high (still waiting) heads the share
    assert low.status is JobStatus.RUNNABLE and high.status is JobStatus.RUNNABLE
    sched.advance(1.5)
    assert high.status is JobStatus.SCHEDULED and low.status is JobStatus.RUNNABLE


def test_without_a_delay_a_job_is_dispatched_in_the_instant_it_is_runnable() -> None:
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


def test_a_job_terminated_while_it_waits_to_dispatch_is_forgotten() -> None:
    sched = one_share(1, dispatch_delay_s=1.0)
    gone = sched.submit(job("gone", priority=9), now=0)
    kept = sched.submit(job("kept"), now=0)
    sched.advance(0.5)
    sched.terminate(gone.job_id, "not needed", now=0.5)
    assert gone.job_id not in sched._lifecycle._arriving  # nothing kept of it (bounded state)
    sched.advance(1.5)
    assert gone.status is JobStatus.FAILED and kept.status is JobStatus.SCHEDULED
