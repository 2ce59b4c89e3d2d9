"""Scheduler core: dispatch order, borrowing FIFO, victim choice, pending reasons, snapshot."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from quota_constructs.model import QuotaShareSpec, SharingStrategy
from quota_constructs.scheduling import (
    PREEMPTION_IN_PROGRESS,
    REASON_CROSS_SHARE,
    Capacity,
    DefaultVictimPolicy,
    EventKind,
    JobRequest,
    JobStatus,
    PendingKind,
    PreemptionRule,
    Scheduler,
    SchedulerEvent,
    SchedulerOptions,
    ShareOrder,
    VictimCandidate,
)

G5 = "ml.g5.xlarge"
LEND = SharingStrategy.LEND
LAB = SharingStrategy.LEND_AND_BORROW
RESERVE = SharingStrategy.RESERVE


def spec(name: str, n: int, strategy: SharingStrategy, **kw: object) -> QuotaShareSpec:
    return QuotaShareSpec(name, {G5: n}, strategy, **kw)  # type: ignore[arg-type]


def req(name: str, share: str, n: int = 1, priority: int = 0, **kw: object) -> JobRequest:
    kw.setdefault("duration_s", None)
    return JobRequest(name, share, {G5: n}, priority=priority, **kw)  # type: ignore[arg-type]


def test_within_a_share_priority_then_submit_order() -> None:
    sched = Scheduler(queue_name="q", shares=[spec("A", 1, RESERVE)])
    low = sched.submit(req("low", "A", priority=1, duration_s=10.0), now=0)
    first_high = sched.submit(req("high1", "A", priority=5, duration_s=10.0), now=0)
    second_high = sched.submit(req("high2", "A", priority=5, duration_s=10.0), now=0)
    order: list[str] = []
    sched.subscribe(
        lambda e: order.append(e.job.request.job_name) if e.status is JobStatus.SCHEDULED else None
    )
    sched.run_until_idle()
    assert order == ["high1", "high2", "low"]
    assert first_high.scheduled_at == 0 and second_high.scheduled_at == 12 and low.stopped_at == 36


def test_pending_reasons_name_the_position_and_the_limit() -> None:
    sched = Scheduler(
        queue_name="q", shares=[spec("A", 1, LAB, borrow_limit=100), spec("B", 2, RESERVE)]
    )
    running = sched.submit(req("run", "A", priority=9), now=0)
    borrowing = sched.submit(req("borrow", "A", priority=8), now=0)
    head = sched.submit(req("head", "A", priority=5), now=0)
    behind = sched.submit(req("behind", "A", priority=1), now=0)
    sched.advance(1)
    assert running.borrowed == {} and borrowing.status is JobStatus.RUNNABLE
    head_pending = sched.pending_reason(head.job_id)
    assert head_pending is not None and head_pending.position == 1
    # B is RESERVE: A has nothing to borrow from.
    borrowing_pending = sched.pending_reason(borrowing.job_id)
    assert borrowing_pending is not None
    assert borrowing_pending.kind is PendingKind.NO_LENDABLE_CAPACITY
    assert borrowing_pending.position == 0
    behind_pending = sched.pending_reason(behind.job_id)
    assert behind_pending is not None
    assert behind_pending.kind is PendingKind.BEHIND_HIGHER_PRIORITY
    assert behind_pending.position == 2
    assert "position 2" in behind_pending.message


def test_borrow_limit_reached_is_reported() -> None:
    sched = Scheduler(
        queue_name="q", shares=[spec("A", 2, LAB, borrow_limit=50), spec("B", 4, LEND)]
    )
    jobs = [sched.submit(req(f"a{i}", "A"), now=0) for i in range(4)]
    sched.advance(1)
    assert sum(j.status.is_dispatched for j in jobs) == 3  # 2 own + 1 borrowed
    waiting = jobs[3]
    pending = sched.pending_reason(waiting.job_id)
    assert pending is not None
    assert pending.kind is PendingKind.BORROW_LIMIT_REACHED
    assert "borrow limit of 1" in pending.message


def test_borrowers_are_served_fifo_across_shares() -> None:
    sched = Scheduler(
        queue_name="q",
        shares=[spec("A", 1, LAB), spec("B", 1, LAB), spec("L", 1, LEND)],
    )
    sched.submit(req("a-own", "A"), now=0)
    sched.submit(req("b-own", "B"), now=0)
    b_first = sched.submit(req("b-borrow", "B"), now=1)
    a_later = sched.submit(req("a-borrow", "A"), now=2)
    sched.advance(3)
    # L's idle instance went to the borrower submitted first, although A comes first in order.
    assert b_first.alloc == {"L": {G5: 1}}
    assert a_later.status is JobStatus.RUNNABLE


def test_borrower_waits_for_idle_lender_capacity_in_submit_order_at_the_same_instant() -> None:
    sched = Scheduler(
        queue_name="q", shares=[spec("A", 1, LAB), spec("B", 1, LAB), spec("L", 1, LEND)]
    )
    sched.submit(req("a-own", "A"), now=0)
    sched.submit(req("b-own", "B"), now=0)
    b_first = sched.submit(req("b-borrow", "B"), now=0)
    a_second = sched.submit(req("a-borrow", "A"), now=0)
    sched.advance(1)
    assert b_first.alloc == {"L": {G5: 1}} and a_second.status is JobStatus.RUNNABLE


def test_lender_reclaims_from_the_lowest_priority_borrower() -> None:
    sched = Scheduler(queue_name="q", shares=[spec("A", 1, LAB), spec("L", 2, LEND)])
    sched.submit(req("own", "A", priority=9), now=0)
    high = sched.submit(req("borrow-high", "A", priority=5), now=0)
    low = sched.submit(req("borrow-low", "A", priority=1), now=0)
    sched.advance(1)
    assert high.borrowed == {G5: 1} and low.borrowed == {G5: 1}
    lender = sched.submit(req("lender", "L"), now=2)
    sched.advance(2)
    assert lender.status is JobStatus.SCHEDULED
    assert low.status is JobStatus.RUNNABLE and high.status is JobStatus.RUNNING
    assert low.preemptions[0].reason == REASON_CROSS_SHARE


def test_shortest_elapsed_run_is_preempted_at_equal_priority() -> None:
    sched = Scheduler(queue_name="q", shares=[spec("A", 1, LAB), spec("L", 2, LEND)])
    sched.submit(req("own", "A"), now=0)
    older = sched.submit(req("older", "A"), now=0)
    sched.advance(10)
    newer = sched.submit(req("newer", "A"), now=10)
    sched.advance(20)
    sched.submit(req("lender", "L"), now=20)
    sched.advance(20)
    assert older.status is JobStatus.RUNNING and newer.status is JobStatus.RUNNABLE


def test_default_victim_policy_prefers_borrowers_then_low_priority_then_fewest_jobs() -> None:
    sched = Scheduler(queue_name="q", shares=[spec("A", 8, LAB)])
    jobs = [
        sched.submit(req(f"j{i}", "A", n=n, priority=p), now=0)
        for i, (n, p) in enumerate([(1, 1), (1, 1), (2, 1), (2, 5), (1, 0)])
    ]
    sched.advance(1)
    policy = DefaultVictimPolicy()

    def cand(index: int, borrowing: bool = False, ran: float = 1.0) -> VictimCandidate:
        return VictimCandidate(jobs[index], {G5: jobs[index].demand[G5]}, borrowing, ran)

    def pick(cands: list[VictimCandidate], need: int) -> list[str] | None:
        chosen = policy.choose(cands, {G5: need})
        return None if chosen is None else [c.job.request.job_name for c in chosen]

    # Fewest jobs among the lowest priorities: one 2-instance job, not two 1-instance jobs.
    assert pick([cand(0), cand(1), cand(2)], 2) == ["j2"]
    # A borrowing job goes before a lower-priority job that is not borrowing.
    assert pick([cand(4), cand(3, borrowing=True)], 1) == ["j3"]
    # Lowest priority first, even if a higher-priority job alone would free enough.
    assert sorted(pick([cand(3), cand(0), cand(1)], 2) or []) == ["j0", "j1"]
    # Same tier and size: the shorter run is preempted.
    assert pick([cand(0, ran=50.0), cand(1, ran=5.0)], 1) == ["j1"]
    assert pick([cand(0), cand(1)], 5) is None


def test_custom_victim_policy_is_used() -> None:
    class OldestFirst:
        calls = 0

        def choose(
            self, candidates: Sequence[VictimCandidate], need: Capacity
        ) -> list[VictimCandidate] | None:
            OldestFirst.calls += 1
            return sorted(candidates, key=lambda c: -c.running_for)[:1]

    sched = Scheduler(
        queue_name="q",
        shares=[spec("A", 1, LAB), spec("L", 2, LEND)],
        options=SchedulerOptions(victim_policy=OldestFirst()),
    )
    sched.submit(req("own", "A"), now=0)
    older = sched.submit(req("older", "A"), now=0)
    sched.advance(10)
    newer = sched.submit(req("newer", "A"), now=10)
    sched.advance(20)
    sched.submit(req("lender", "L"), now=20)
    sched.advance(20)
    assert OldestFirst.calls == 1
    assert older.status is JobStatus.RUNNABLE and newer.status is JobStatus.RUNNING


def test_in_share_preemption_needs_strictly_higher_priority_and_enabled() -> None:
    sched = Scheduler(
        queue_name="q",
        shares=[spec("A", 1, RESERVE, in_share_preemption=True), spec("B", 1, RESERVE)],
    )
    running_a = sched.submit(req("a", "A", priority=5), now=0)
    running_b = sched.submit(req("b", "B", priority=1), now=0)
    sched.advance(1)
    equal = sched.submit(req("a-equal", "A", priority=5), now=1)
    higher_b = sched.submit(req("b-high", "B", priority=9), now=1)
    sched.advance(2)
    assert running_a.status is JobStatus.RUNNING and equal.status is JobStatus.RUNNABLE
    assert running_b.status is JobStatus.RUNNING and higher_b.status is JobStatus.RUNNABLE
    higher_a = sched.submit(req("a-high", "A", priority=6), now=3)
    sched.advance(3)
    assert higher_a.status is JobStatus.SCHEDULED
    assert running_a.preemptions[0].rule is PreemptionRule.IN_SHARE


def test_lowering_a_running_job_priority_makes_it_the_victim() -> None:
    sched = Scheduler(queue_name="q", shares=[spec("A", 2, RESERVE, in_share_preemption=True)])
    first = sched.submit(req("first", "A", priority=5), now=0)
    second = sched.submit(req("second", "A", priority=5), now=0)
    sched.advance(1)
    sched.update_priority(first.job_id, 1, now=2)
    newcomer = sched.submit(req("new", "A", priority=3), now=2)
    sched.advance(3)
    assert newcomer.status.is_dispatched
    assert first.status is JobStatus.RUNNABLE and second.status is JobStatus.RUNNING


def test_delayed_preemption_keeps_capacity_until_completed() -> None:
    sched = Scheduler(
        queue_name="q",
        shares=[spec("A", 1, LAB), spec("L", 1, LEND)],
        options=SchedulerOptions(preemption_duration_s=20.0),
    )
    events: list[SchedulerEvent] = []
    sched.subscribe(events.append)
    sched.submit(req("own", "A"), now=0)
    borrower = sched.submit(req("borrower", "A"), now=0)
    sched.advance(5)
    lender = sched.submit(req("lender", "L"), now=10)
    sched.advance(15)
    assert borrower.status is JobStatus.RUNNING
    assert borrower.status_reason == PREEMPTION_IN_PROGRESS + REASON_CROSS_SHARE
    assert sched.preemption_in_progress(borrower.job_id)
    pending = sched.pending_reason(lender.job_id)
    assert pending is not None
    assert pending.kind is PendingKind.WAITING_FOR_PREEMPTION
    sched.advance(30)
    assert borrower.status is JobStatus.RUNNABLE and lender.status is JobStatus.SCHEDULED
    assert lender.scheduled_at == 30
    kinds = [(e.time, e.kind) for e in events if e.job is borrower and e.kind != "STATE_CHANGE"]
    assert kinds == [(10, EventKind.PREEMPTION_STARTED), (30, EventKind.PREEMPTION_COMPLETED)]


def test_every_state_change_is_an_event_with_its_previous_state() -> None:
    sched = Scheduler(queue_name="q", shares=[spec("A", 1, RESERVE)])
    events: list[SchedulerEvent] = []
    sched.subscribe(events.append)
    sched.submit(req("j", "A", duration_s=5.0), now=0)
    sched.run_until_idle()
    transitions = [(e.previous_status, e.status) for e in events]
    assert transitions == [
        (None, JobStatus.SUBMITTED),
        (JobStatus.SUBMITTED, JobStatus.RUNNABLE),
        (JobStatus.RUNNABLE, JobStatus.SCHEDULED),
        (JobStatus.SCHEDULED, JobStatus.STARTING),
        (JobStatus.STARTING, JobStatus.RUNNING),
        (JobStatus.RUNNING, JobStatus.SUCCEEDED),
    ]


def test_lowering_the_service_environment_preempts_nothing_but_gates_dispatch() -> None:
    sched = Scheduler(queue_name="q", shares=[spec("A", 2, RESERVE), spec("B", 2, RESERVE)])
    running = [sched.submit(req(f"a{i}", "A"), now=0) for i in range(2)]
    sched.advance(1)
    sched.set_service_environment({G5: 2}, now=2)
    waiting = sched.submit(req("b", "B"), now=3)
    sched.advance(4)
    assert all(j.status is JobStatus.RUNNING for j in running)
    pending = sched.pending_reason(waiting.job_id)
    assert pending is not None
    assert pending.kind is PendingKind.WAITING_FOR_SERVICE_ENVIRONMENT
    sched.terminate(running[0].job_id, "done", now=5)
    sched.advance(5)
    assert waiting.status is JobStatus.SCHEDULED


def test_rejects_invalid_service_environment() -> None:
    sched = Scheduler(queue_name="q", shares=[spec("A", 2, RESERVE)])
    with pytest.raises(ValueError, match="capacity unit must be a SageMaker"):
        sched.set_service_environment({"gpu": 2})


def test_snapshot_front_of_queue_and_usage() -> None:
    sched = Scheduler(queue_name="q", shares=[spec("A", 1, RESERVE), spec("B", 2, RESERVE)])
    sched.submit(req("a-run", "A"), now=0)
    sched.submit(req("b-run", "B"), now=0)
    sched.advance(1)
    a_wait = sched.submit(req("a-wait", "A", priority=3), now=1)
    b_wait = sched.submit(req("b-wait", "B", n=2, priority=3), now=1)
    a_low = sched.submit(req("a-low", "A", priority=1), now=1)
    sched.advance(5)
    snap = sched.snapshot()
    ids = [e.job_id for e in snap.front_of_queue]
    # Equal priority: B uses 1 of 2, A 1 of 1, so B's job comes first (less share usage).
    assert ids == [b_wait.job_id, a_wait.job_id, a_low.job_id]
    assert snap.front_of_shares["A"][0].job_id == a_wait.job_id
    assert snap.front_of_shares["A"][0].earliest_time_at_position == 1
    assert snap.share_usage == {"A": {G5: 1}, "B": {G5: 1}}
    assert snap.total_usage == {G5: 2}
    assert sched.snapshot(limit=1).front_of_queue[0].job_id == b_wait.job_id


def test_least_usage_share_order_serves_the_emptier_share_first() -> None:
    sched = Scheduler(
        queue_name="q",
        shares=[spec("A", 2, LAB), spec("B", 2, LAB), spec("L", 1, LEND)],
        options=SchedulerOptions(share_order=ShareOrder.LEAST_USAGE),
    )
    sched.submit(req("a1", "A"), now=0)
    sched.advance(1)
    order: list[str] = []
    sched.subscribe(
        lambda e: order.append(e.job.share_name) if e.status is JobStatus.SCHEDULED else None
    )
    sched.submit(req("a2", "A"), now=2)
    sched.submit(req("b1", "B"), now=2)
    sched.advance(3)
    assert order == ["B", "A"]


def test_backfill_lets_a_smaller_job_pass_a_blocked_head() -> None:
    def run(depth: int) -> JobStatus:
        sched = Scheduler(
            queue_name="q",
            shares=[spec("A", 3, RESERVE)],
            options=SchedulerOptions(backfill_depth=depth),
        )
        sched.submit(req("run", "A", n=2), now=0)
        sched.advance(0.5)
        sched.submit(req("big", "A", n=2, priority=5), now=1)
        small = sched.submit(req("small", "A", n=1, priority=1), now=1)
        sched.advance(1)
        return small.status

    assert run(0) is JobStatus.RUNNABLE
    assert run(1) is JobStatus.SCHEDULED


def test_preemption_can_consume_retry_attempts() -> None:
    sched = Scheduler(
        queue_name="q",
        shares=[spec("A", 1, LAB), spec("L", 1, LEND)],
        options=SchedulerOptions(preemption_consumes_attempt=True),
    )
    sched.submit(req("own", "A"), now=0)
    borrower = sched.submit(req("borrower", "A", retry_attempts=1), now=0)
    sched.advance(1)
    sched.submit(req("lender", "L"), now=2)
    sched.advance(2)
    assert borrower.status is JobStatus.FAILED
    assert "retryStrategy.attempts (1) used up" in (borrower.status_reason or "")


def test_rejects_invalid_options() -> None:
    with pytest.raises(ValueError, match="scheduled_to_starting_s: delay must be >= 0"):
        SchedulerOptions(scheduled_to_starting_s=-1)
