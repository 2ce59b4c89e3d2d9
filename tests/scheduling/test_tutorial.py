"""Scheduler core: the AWS tutorial on seed-demo, dispatch order, borrowing and preemption."""

from __future__ import annotations

from quota_constructs.config import load_organisation
from quota_constructs.scheduling import (
    REASON_CROSS_SHARE,
    REASON_IN_SHARE,
    EventKind,
    JobRequest,
    JobStatus,
    PendingKind,
    PreemptionRule,
    Scheduler,
    SchedulerEvent,
)
from tests.helpers import ORGS_DIR

G5 = "ml.g5.xlarge"


def seed_demo() -> Scheduler:
    org = load_organisation(ORGS_DIR / "seed-demo.yaml")
    return Scheduler.for_queue(org.queue, queue_name="seed-demo-queue")


def req(name: str, share: str, priority: int, n: int = 1, duration: float | None = 3600.0):
    return JobRequest(name, share, {G5: n}, duration, priority=priority)


def test_aws_tutorial_on_seed_demo() -> None:
    sched = seed_demo()
    events: list[SchedulerEvent] = []
    sched.subscribe(events.append)
    p3 = sched.submit(req("p3", "QS1", 3), now=0)
    p2 = sched.submit(req("p2", "QS1", 2), now=0)
    p1 = sched.submit(req("p1", "QS1", 1), now=0)
    sched.advance(10)
    # p3 on QS1's own instance, p2 borrowing QS2's idle one, p1 waits (QS3 is RESERVE).
    assert p3.status is JobStatus.RUNNING and p3.borrowed == {}
    assert p2.status is JobStatus.RUNNING and p2.alloc == {"QS2": {G5: 1}}
    assert p1.status is JobStatus.RUNNABLE
    p1_pending = sched.pending_reason(p1.job_id)
    assert p1_pending is not None and p1_pending.kind is PendingKind.NO_LENDABLE_CAPACITY
    assert sched.ledger()["QS3"].idle == {G5: 1}

    qs2 = sched.submit(req("qs2", "QS2", 1), now=20)
    sched.advance(30)
    assert qs2.status is JobStatus.RUNNING
    assert p2.status is JobStatus.RUNNABLE
    [record] = p2.preemptions
    assert record.rule is PreemptionRule.CROSS_SHARE
    assert record.reason == REASON_CROSS_SHARE
    assert (record.preemptor_job_id, record.preemptor_share) == (qs2.job_id, "QS2")
    assert record.borrowed_before == {G5: 1} and record.borrowed_after == {}
    assert p2.attempts[-1].preempted and p2.attempts[-1].status_reason == REASON_CROSS_SHARE
    kinds = [e.kind for e in events if e.job is p2]
    assert EventKind.PREEMPTION_STARTED in kinds and EventKind.PREEMPTION_COMPLETED in kinds

    sched.update_priority(p1.job_id, 4, now=40)
    sched.advance(50)
    assert p1.status is JobStatus.RUNNING
    assert p3.status is JobStatus.RUNNABLE
    [record] = p3.preemptions
    assert record.rule is PreemptionRule.IN_SHARE and record.reason == REASON_IN_SHARE
    assert record.preemptor_job_id == p1.job_id
    # No ping-pong: p3 (priority 3) stays behind the raised job and preempts nobody.
    sched.advance(60)
    assert p1.status is JobStatus.RUNNING and not p1.preemptions
    assert sched.usage() == {"QS1": {G5: 1}, "QS2": {G5: 1}, "QS3": {}}
