"""Cross-share reclaim: which of a borrowing share's jobs gives the lender its capacity back.

AWS: "When choosing which jobs to preempt, AWS Batch considers the number and type of
instances a job is borrowing, relative priorities of the jobs and the duration of the jobs"
(user guide, preemption). A share borrows as a whole, so by default (``ReclaimScope.SHARE``)
its borrowed instances count on its least protected jobs, and the ledger relabels the victim to
hold the lender's instances; ``ReclaimScope.JOB`` keeps the emulator's earlier rule.
"""

from __future__ import annotations

from quota_constructs.model import QuotaShareSpec, SharingStrategy
from quota_constructs.scheduling import (
    EventKind,
    Job,
    JobRequest,
    JobStatus,
    PreemptionRule,
    ReclaimScope,
    Scheduler,
    SchedulerEvent,
    SchedulerOptions,
)

G5 = "ml.g5.xlarge"


def team_a_borrows_two(options: SchedulerOptions) -> tuple[Scheduler, dict[str, Job], list]:
    """The issue's scenario: A (LEND_AND_BORROW, 2, in-share preemption) runs priorities 10,
    20, 30, 40 submitted in that order, so 30 and 40 are placed on B's instances."""
    sched = Scheduler(
        queue_name="q",
        shares=[
            QuotaShareSpec("A", {G5: 2}, SharingStrategy.LEND_AND_BORROW, in_share_preemption=True),
            QuotaShareSpec("B", {G5: 2}, SharingStrategy.LEND),
        ],
        options=options,
    )
    started: list[SchedulerEvent] = []
    sched.subscribe(lambda e: started.append(e) if e.kind is EventKind.PREEMPTION_STARTED else None)
    jobs = {}
    for t, p in enumerate((10, 20, 30, 40)):
        jobs[f"a{p}"] = sched.submit(
            JobRequest(f"a{p}", "A", {G5: 1}, None, priority=p), now=float(t)
        )
        sched.advance(float(t))
    assert all(j.status.is_dispatched for j in jobs.values())
    assert {n for n, j in jobs.items() if j.borrowed} == {"a30", "a40"}
    jobs["b"] = sched.submit(JobRequest("b", "B", {G5: 1}, None), now=10.0)
    sched.advance(20.0)
    return sched, jobs, started


def test_reclaim_takes_the_lowest_priority_job_of_the_borrowing_share() -> None:
    sched, jobs, started = team_a_borrows_two(SchedulerOptions())
    assert [(e.job.request.job_name, e.preemption.rule) for e in started if e.preemption] == [
        ("a10", PreemptionRule.CROSS_SHARE)
    ]
    assert jobs["b"].status.is_dispatched
    assert jobs["a10"].status is JobStatus.RUNNABLE
    assert all(jobs[n].status.is_dispatched for n in ("a20", "a30", "a40"))
    ledger = sched.ledger()
    assert ledger["A"].own == {G5: 2} and ledger["A"].borrowed == {G5: 1}
    assert ledger["B"].own == {G5: 1} and ledger["B"].lent == {G5: 1}


def test_reclaim_relabels_the_victim_to_hold_the_lenders_instance() -> None:
    _, jobs, started = team_a_borrows_two(SchedulerOptions())
    victim = started[0].job
    assert victim is jobs["a10"]
    # when the preemption started, the victim held B's instance (the highest-priority borrower
    # took its own-capacity label instead)
    assert jobs["a40"].alloc == {"A": {G5: 1}}
    assert sum(1 for n in ("a20", "a30", "a40") if jobs[n].borrowed) == 1


def test_job_scope_keeps_the_earlier_choice_and_its_second_preemption() -> None:
    _, _, started = team_a_borrows_two(SchedulerOptions(reclaim_scope=ReclaimScope.JOB))
    assert [(e.job.request.job_name, e.preemption.rule) for e in started if e.preemption] == [
        ("a30", PreemptionRule.CROSS_SHARE),
        ("a10", PreemptionRule.IN_SHARE),
    ]


def test_among_equal_priorities_the_shorter_run_is_reclaimed() -> None:
    sched = Scheduler(
        queue_name="q",
        shares=[
            QuotaShareSpec("A", {G5: 1}, SharingStrategy.LEND_AND_BORROW),
            QuotaShareSpec("B", {G5: 2}, SharingStrategy.LEND),
        ],
    )
    old = sched.submit(JobRequest("old", "A", {G5: 1}, None, priority=5), now=0)
    sched.advance(0)
    mid = sched.submit(JobRequest("mid", "A", {G5: 1}, None, priority=5), now=50)
    sched.advance(50)
    new = sched.submit(JobRequest("new", "A", {G5: 1}, None, priority=5), now=90)
    sched.advance(90)
    sched.submit(JobRequest("b", "B", {G5: 1}, None), now=100)
    sched.advance(100)
    assert new.status is JobStatus.RUNNABLE
    assert old.status.is_dispatched and mid.status.is_dispatched


def test_each_victim_holds_what_it_frees_of_the_lenders_instances_when_it_stops() -> None:
    sched = Scheduler(
        queue_name="q",
        shares=[
            QuotaShareSpec("A", {G5: 2}, SharingStrategy.LEND_AND_BORROW),
            QuotaShareSpec("B", {G5: 3}, SharingStrategy.LEND),
        ],
    )
    for t, (name, n, p) in enumerate((("z", 1, 5), ("x", 2, 1), ("y", 2, 9))):
        sched.submit(JobRequest(name, "A", {G5: n}, None, priority=p), now=float(t))
        sched.advance(float(t))
    held = {j.request.job_name: j.alloc for j in sched.jobs}
    assert held == {"z": {"A": {G5: 1}}, "x": {"A": {G5: 1}, "B": {G5: 1}}, "y": {"B": {G5: 2}}}
    started: dict[str, dict[str, dict[str, int]]] = {}

    def note(event: SchedulerEvent) -> None:
        if event.kind is EventKind.PREEMPTION_STARTED:
            started[event.job.request.job_name] = {k: dict(v) for k, v in event.job.alloc.items()}

    sched.subscribe(note)
    sched.submit(JobRequest("b", "B", {G5: 2}, None), now=3)
    sched.advance(3)
    # B takes 2 back: "x" (priority 1) is A's least protected; it is made to hold 2 of B's
    assert started == {"x": {"B": {G5: 2}}}
    assert held_now(sched) == {"z": {"A": {G5: 1}}, "y": {"A": {G5: 1}, "B": {G5: 1}}}
    assert sched.ledger()["B"].own == {G5: 2}


def held_now(sched: Scheduler) -> dict[str, dict[str, dict[str, int]]]:
    return {j.request.job_name: j.alloc for j in sched.jobs if j.share_name == "A" and j.alloc}
