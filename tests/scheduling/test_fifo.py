"""Scheduler core: a queue without quota management (``Scheduler.fifo``, ``NUM_INSTANCES``)."""

from __future__ import annotations

import pytest

from quota_constructs.model import NUM_INSTANCES, PendingKind, QuotaConfigError
from quota_constructs.scheduling import JobRequest, JobStatus, Scheduler, SubmitRejected

G5 = "ml.g5.xlarge"
P4 = "ml.p4d.24xlarge"


def req(name: str, demand: dict[str, int], priority: int | None = None) -> JobRequest:
    return JobRequest(name, "", demand, duration_s=100.0, priority=priority)


def test_jobs_dispatch_in_submit_order_whatever_their_priority() -> None:
    sched = Scheduler.fifo(queue_name="q", max_instances=1)
    first = sched.submit(req("first", {G5: 1}, priority=1), now=0)
    second = sched.submit(req("second", {G5: 1}, priority=50), now=0)
    sched.advance(5)

    assert (first.status, second.status) == (JobStatus.RUNNING, JobStatus.RUNNABLE)
    sched.update_priority(second.job_id, 99, now=6)
    sched.advance(120)
    assert (first.status, second.status) == (JobStatus.SUCCEEDED, JobStatus.RUNNING)


def test_instances_of_every_type_count_against_num_instances() -> None:
    sched = Scheduler.fifo(queue_name="q", max_instances=3)
    mixed = sched.submit(req("mixed", {G5: 1, P4: 1}), now=0)
    one = sched.submit(req("one", {P4: 1}), now=0)
    over = sched.submit(req("over", {G5: 1}), now=0)
    sched.advance(5)

    assert mixed.demand == {NUM_INSTANCES: 2}
    assert [j.status for j in (mixed, one, over)] == [
        JobStatus.RUNNING,
        JobStatus.RUNNING,
        JobStatus.RUNNABLE,
    ]
    assert sched.total_usage() == {NUM_INSTANCES: 3}


def test_more_num_instances_dispatch_the_waiting_job() -> None:
    sched = Scheduler.fifo(queue_name="q", max_instances=1)
    sched.submit(req("a", {G5: 1}), now=0)
    waiting = sched.submit(req("b", {G5: 1}), now=0)
    sched.advance(5)

    sched.set_service_environment({NUM_INSTANCES: 2}, now=6)
    sched.advance(10)
    assert waiting.status is JobStatus.RUNNING


def test_a_quota_share_name_and_a_bad_instance_type_are_refused() -> None:
    sched = Scheduler.fifo(queue_name="q", max_instances=1)

    with pytest.raises(
        SubmitRejected,
        match=r"^job 'j': quotaShareName: job queue 'q' has no quota management \(no quota-share "
        r"scheduling policy\), so it has no quota shares \(got 'QS1'\); fix: leave "
        r"quotaShareName out$",
    ):
        sched.submit(JobRequest("j", "QS1", {G5: 1}, duration_s=None), now=0)
    with pytest.raises(SubmitRejected, match=r"ml\.nope"):
        sched.submit(req("j", {"ml.nope": 1}), now=0)
    with pytest.raises(QuotaConfigError, match="NUMBER_OF_INSTANCES"):
        sched.set_service_environment({"NUMBER_OF_INSTANCES": 1}, now=0)


def test_a_queue_that_is_not_placing_keeps_its_jobs_runnable_until_it_places_again() -> None:
    sched = Scheduler.fifo(queue_name="q", max_instances=1)
    running = sched.submit(req("running", {G5: 1}), now=0)
    queued = sched.submit(req("queued", {G5: 1}), now=0)
    sched.advance(5)
    sched.set_placing(False, now=5)
    sched.advance(200)

    assert running.status is JobStatus.SUCCEEDED  # placed before: ran on
    assert queued.status is JobStatus.RUNNABLE
    reason = sched.pending_reason(queued.job_id)
    assert reason is not None and reason.kind is PendingKind.WAITING_FOR_SERVICE_ENVIRONMENT
    sched.set_placing(True, now=200)
    sched.advance(205)
    assert queued.status is JobStatus.RUNNING
