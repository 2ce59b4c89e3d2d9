"""The dispatcher's indexes: kept up to date incrementally, equal to what a full count gives,
and never the reason a job that could dispatch waits."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, fields, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quota_constructs.model import QuotaShareSpec, SharingStrategy
from quota_constructs.scheduling import (
    Attempt,
    JobRequest,
    JobStatus,
    PreemptionRecord,
    Scheduler,
    SchedulerEvent,
    SchedulerOptions,
    ShareOrder,
)
from tests.scheduling.helpers import (
    TYPES,
    lending_organisations,
    operations,
    option_sets,
    organisations,
    play,
    se_factors,
)


def index_problems(sched: Scheduler) -> list[str]:
    """Differences between the ledger's running counts and a count from the jobs."""
    ledger = sched._ledger
    problems = []
    lendable: dict[str, int] = {}
    for account in ledger.accounts.values():
        types = set(account.limits) | set(account.own) | set(account.lent)
        for itype in types:
            free = account.limits.get(itype, 0) - account.own.get(itype, 0)
            free -= account.lent.get(itype, 0)
            if account.free(itype) != free:
                problems.append(f"{account.name} idle {itype}: {account.free(itype)} != {free}")
            if account.lends_now and free > 0:
                lendable[itype] = lendable.get(itype, 0) + free
        if account.lent_total != sum(account.lent.values()):
            problems.append(f"{account.name} lent_total {account.lent_total} != {account.lent}")
    counted = {t: n for t, n in ledger.lendable_total.items() if n}
    if counted != lendable:
        problems.append(f"lendable {counted} != {lendable}")
    for name, queue in sched._queues.by_share.items():
        head = queue.head()
        account = ledger.accounts[name]
        if head is not None:
            placed = ledger.plan_own(account, head) or ledger.plan_borrow(account, head)
            if ledger.fits(account, head) != (placed is not None):
                problems.append(f"fits({name}, {head}) disagrees with the plans")
    return problems


@settings(max_examples=150)
@given(st.one_of(organisations(), lending_organisations()), operations, option_sets, se_factors)
def test_running_counts_equal_a_full_count(
    shares: list[QuotaShareSpec],
    ops: list[tuple[Any, ...]],
    options: SchedulerOptions,
    se_factor: float | None,
) -> None:
    run = play(shares, ops, options, se_factor)
    assert index_problems(run.sched) == []


job_op = st.one_of(
    st.tuples(
        st.just("submit"),
        st.integers(0, 4),
        st.integers(0, 1),
        st.sampled_from([1, 1, 1, 2, 3]),
        st.one_of(st.none(), st.floats(1, 60)),
        st.integers(0, 5),
    ),
    st.tuples(st.just("advance"), st.floats(0, 30)),
    st.tuples(st.just("priority"), st.integers(0, 40), st.integers(0, 9)),
    st.tuples(st.just("terminate"), st.integers(0, 40)),
)
quick_options = st.builds(
    SchedulerOptions,
    scheduled_to_starting_s=st.sampled_from([0.0, 1.0]),
    starting_to_running_s=st.just(0.0),
    preemption_duration_s=st.sampled_from([0.0, 20.0]),
    share_order=st.sampled_from(ShareOrder),
)


def run_jobs(
    shares: list[QuotaShareSpec],
    ops: list[tuple[Any, ...]],
    options: SchedulerOptions,
    *,
    afresh: bool,
) -> list[tuple[Any, ...]]:
    """Play job operations; ``afresh``: every pass looks at every share (no indexes)."""
    sched = Scheduler(queue_name="idx", shares=shares, options=options)
    log: list[tuple[Any, ...]] = []
    sched.subscribe(lambda e: log.append((e.time, e.kind, e.job.job_id, e.status, e.preemption)))
    sched._dispatcher.every_share = afresh
    now = 0.0
    for op in ops:
        kind = op[0]
        if kind == "submit":
            _, index, type_index, count, duration, priority = op
            share = shares[index % len(shares)]
            own = list(share.capacity)
            itype = own[type_index % len(own)]
            request = JobRequest(f"j{len(sched.jobs)}", share.name, {itype: count}, duration)
            sched.submit(replace(request, priority=priority), now=now)
        elif kind == "advance":
            now += op[1]
        elif kind == "priority" and sched.jobs:
            sched.update_priority(sched.jobs[op[1] % len(sched.jobs)].job_id, op[2], now=now)
        elif kind == "terminate" and sched.jobs:
            sched.terminate(sched.jobs[op[1] % len(sched.jobs)].job_id, "stop", now=now)
        sched.advance(now)
        assert index_problems(sched) == []
    sched.run_until_idle(limit=now + 200)
    return log


@settings(max_examples=300)
@given(
    st.one_of(organisations(), lending_organisations()),
    st.lists(job_op, min_size=5, max_size=60),
    quick_options,
)
def test_indexed_passes_do_what_passes_over_every_share_do(
    shares: list[QuotaShareSpec], ops: list[tuple[Any, ...]], options: SchedulerOptions
) -> None:
    """Jobs only (no share changes, so no share holds more than its limit, and the default
    victim policy): the same history whether passes look only at the shares that changed
    or at every share."""
    indexed = run_jobs(shares, ops, options, afresh=False)
    assert indexed == run_jobs(shares, ops, options, afresh=True)


def test_a_borrower_waiting_for_capacity_takes_it_when_released() -> None:
    """A LEND_AND_BORROW share's blocked head is woken by a release of its instance type."""
    g5 = TYPES[0]
    lab = SharingStrategy.LEND_AND_BORROW
    shares = [
        QuotaShareSpec("lender", {g5: 2}, SharingStrategy.LEND),
        QuotaShareSpec("borrower", {g5: 1}, lab, borrow_limit=200),
    ]
    sched = Scheduler(queue_name="wake", shares=shares)
    first = sched.submit(JobRequest("a", "lender", {g5: 2}, 10.0), now=0.0)
    waiting = sched.submit(JobRequest("b", "borrower", {g5: 3}, 10.0), now=0.0)
    sched.advance(5.0)
    assert first.status is JobStatus.RUNNING
    assert waiting.status is JobStatus.RUNNABLE
    assert sched._dispatcher._waiting_to_borrow == {"borrower": waiting}
    sched.advance(20.0)
    assert waiting.status is JobStatus.RUNNING
    assert waiting.alloc == {"borrower": {g5: 1}, "lender": {g5: 2}}


def test_records_built_by_the_core_equal_the_dataclasses_own() -> None:
    """Events, attempts and preemption records the core builds (by keyword; compiled, through
    the native ``__init__`` the build gives them, ``core_build``) have every field in order
    and equal what the constructor builds from them."""
    g5 = TYPES[0]
    shares = [
        QuotaShareSpec("lender", {g5: 1}, SharingStrategy.LEND),
        QuotaShareSpec("borrower", {g5: 1}, SharingStrategy.LEND_AND_BORROW),
    ]
    sched = Scheduler(
        queue_name="r", shares=shares, options=SchedulerOptions(preemption_duration_s=5.0)
    )
    events: list[SchedulerEvent] = []
    sched.subscribe(events.append)
    sched.submit(JobRequest("b1", "borrower", {g5: 1}, 50.0), now=0.0)
    sched.submit(JobRequest("b2", "borrower", {g5: 1}, 50.0), now=0.0)
    sched.submit(JobRequest("l1", "lender", {g5: 1}, 10.0), now=1.0)
    sched.run_until_idle()
    records: list[Any] = list(events)
    for job in sched.jobs:
        records += job.attempts + job.preemptions
    kinds = {type(r) for r in records}
    assert kinds == {SchedulerEvent, Attempt, PreemptionRecord}
    for record in records:
        names = [f.name for f in fields(record)]
        if hasattr(record, "__dict__"):  # pure Python (compiled, fields are in slots)
            assert list(vars(record)) == names
        rebuilt = type(record)(**{name: getattr(record, name) for name in names})
        assert rebuilt == record and repr(rebuilt) == repr(record)
        with pytest.raises(FrozenInstanceError):  # a native __init__ keeps them frozen
            setattr(record, names[-1], getattr(record, names[-1]))
    assert any(r.completed_at is not None for r in records if isinstance(r, PreemptionRecord))
    values: tuple[Any, ...] = (1, "id", 0.0, 1.0, 2.0, "done", False, 0.5)
    built = Attempt(**dict(zip([f.name for f in fields(Attempt)], values, strict=True)))
    assert built == Attempt(*values) and replace(built, number=2) == Attempt(2, *values[1:])
    request = sched.jobs[0].request
    with pytest.raises(FrozenInstanceError):
        request.job_name = "renamed"  # type: ignore[misc]
    assert replace(request, job_name="renamed").demand == request.demand
