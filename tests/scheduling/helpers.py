"""Helpers for the scheduler core's property tests: random organisations, operations and
options (hypothesis strategies), playing operations on a scheduler, and its invariants."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from quota_constructs.model import QuotaShareSpec, ShareState, SharingStrategy
from quota_constructs.scheduling import (
    EventKind,
    Job,
    JobRequest,
    JobStatus,
    PreemptionRule,
    Scheduler,
    SchedulerEvent,
    SchedulerOptions,
)

TYPES = ("ml.g5.xlarge", "ml.p4d.24xlarge")


@st.composite
def share_specs(draw: st.DrawFn, name: str) -> QuotaShareSpec:
    types = draw(st.sampled_from([TYPES[:1], TYPES[:1], TYPES, TYPES[1:]]))
    strategy = draw(st.sampled_from([*SharingStrategy, SharingStrategy.LEND_AND_BORROW]))
    borrow = (
        draw(st.sampled_from([None, -1, 0, 50, 100, 200]))
        if strategy is SharingStrategy.LEND_AND_BORROW
        else None
    )
    return QuotaShareSpec(
        name=name,
        capacity={t: draw(st.integers(1, 6)) for t in types},
        strategy=strategy,
        borrow_limit=borrow,
        in_share_preemption=draw(st.booleans()),
    )


@st.composite
def organisations(draw: st.DrawFn) -> list[QuotaShareSpec]:
    count = draw(st.integers(1, 5))
    return [draw(share_specs(f"S{i}")) for i in range(count)]


@st.composite
def lending_organisations(draw: st.DrawFn) -> list[QuotaShareSpec]:
    """One instance type; borrowers and lenders only, so cross-share reclaim happens often."""
    count = draw(st.integers(2, 5))
    return [
        QuotaShareSpec(
            f"S{i}",
            {TYPES[0]: draw(st.integers(1, 3))},
            draw(st.sampled_from([SharingStrategy.LEND_AND_BORROW, SharingStrategy.LEND])),
            in_share_preemption=draw(st.booleans()),
        )
        for i in range(count)
    ]


submit_op = st.tuples(
    st.just("submit"),
    st.integers(0, 4),  # share index
    st.sampled_from([0] * 6 + [1] * 2 + [2]),  # the share's 1st/2nd type, or (2) maybe not its
    st.sampled_from([1, 1, 1, 2, 2, 3, 5]),  # instances
    st.one_of(st.none(), st.floats(1, 60)),  # duration
    st.integers(0, 5),  # priority
    st.sampled_from([None, None, 0, 1, 2]),  # preemption retries
)
OP_KINDS = ["submit"] * 6 + ["advance"] * 3 + ["priority", "terminate", "reshape", "disable"]


@st.composite
def operation(draw: st.DrawFn) -> tuple[Any, ...]:
    kind = draw(st.sampled_from(OP_KINDS))
    if kind == "submit":
        return draw(submit_op)
    if kind == "advance":
        return (kind, draw(st.floats(0, 40)))
    if kind == "priority":
        return (kind, draw(st.integers(0, 50)), draw(st.integers(0, 9)))
    if kind == "terminate":
        return (kind, draw(st.integers(0, 50)))
    if kind == "reshape":
        return (kind, draw(st.integers(0, 4)), draw(share_specs("x")))
    return (kind, draw(st.integers(0, 4)))


operations = st.lists(operation(), min_size=5, max_size=40)
option_sets = st.builds(
    SchedulerOptions,
    scheduled_to_starting_s=st.sampled_from([0.0, 1.0]),
    starting_to_running_s=st.sampled_from([0.0, 2.0]),
    preemption_duration_s=st.sampled_from([0.0, 0.0, 5.0]),
    backfill_depth=st.sampled_from([0, 0, 3]),
)


@dataclass
class Run:
    sched: Scheduler
    log: list[tuple[Any, ...]]
    violations: list[str]


def play(
    shares: list[QuotaShareSpec],
    ops: list[tuple[Any, ...]],
    options: SchedulerOptions,
    se_factor: float | None = None,
) -> Run:
    """Apply ``ops``; ``se_factor`` sizes an explicit SE as a fraction of the shares' sum."""
    total: Counter[str] = Counter()
    for spec in shares:
        total.update(spec.capacity)
    se = None if se_factor is None else {t: max(1, int(n * se_factor)) for t, n in total.items()}
    sched = Scheduler(queue_name="prop", shares=shares, options=options, service_environment=se)
    log: list[tuple[Any, ...]] = []
    violations: list[str] = []
    preempted: dict[tuple[str, str], int] = {}  # (preemptor, victim) -> preemptor's attempts

    def listen(event: SchedulerEvent) -> None:
        log.append(
            (event.time, event.kind, event.job.request.job_name, event.status, event.status_reason)
        )
        record = event.preemption
        if event.kind is EventKind.PREEMPTION_STARTED and record is not None:
            if record.rule is PreemptionRule.CROSS_SHARE and not event.job.borrowed:
                violations.append(f"{event.job} was not borrowing but is a cross-share victim")
            if record.rule is PreemptionRule.CROSS_SHARE and record.preemptor_share not in (
                event.job.alloc
            ):
                violations.append(f"{event.job} holds nothing of {record.preemptor_share}")
            preemptor = record.preemptor_job_id
            if preemptor is not None:
                victim = event.job
                # No ping-pong: the victim preempted this preemptor earlier and that
                # preemptor has not ended an attempt since (it still holds what it took).
                earlier = preempted.get((victim.job_id, preemptor))
                if earlier is not None and earlier == len(victim.attempts):
                    violations.append(f"ping-pong: {victim} preempted by the job it preempted")
                preempted[(preemptor, victim.job_id)] = len(sched.job(preemptor).attempts)

    sched.subscribe(listen)
    now = 0.0
    for op in ops:
        kind = op[0]
        names = [s.name for s in sched.queue.shares]
        if kind == "submit":
            _, index, type_index, count, duration, priority, retries = op
            name = names[index % len(names)]
            spec = sched.queue.share(name)
            if spec.state is ShareState.DISABLED:
                continue
            own_types = list(spec.capacity)
            itype = own_types[type_index] if type_index < len(own_types) else TYPES[-1]
            sched.submit(
                JobRequest(
                    f"j{len(sched.jobs)}",
                    name,
                    {itype: count},
                    duration,
                    priority=priority,
                    preemption_retries=retries,
                ),
                now=now,
            )
        elif kind == "advance":
            now += op[1]
        elif kind == "priority" and sched.jobs:
            job = sched.jobs[op[1] % len(sched.jobs)]
            sched.update_priority(job.job_id, op[2], now=now)
        elif kind == "terminate" and sched.jobs:
            job = sched.jobs[op[1] % len(sched.jobs)]
            sched.terminate(job.job_id, "stop", now=now)
        elif kind == "reshape":
            spec = op[2]
            name = names[op[1] % len(names)]
            sched.upsert_share(
                QuotaShareSpec(
                    name,
                    spec.capacity,
                    spec.strategy,
                    spec.borrow_limit,
                    spec.in_share_preemption,
                    sched.queue.share(name).state,
                ),
                now=now,
            )
        elif kind == "disable":
            old = sched.queue.share(names[op[1] % len(names)])
            sched.upsert_share(
                QuotaShareSpec(
                    old.name,
                    old.capacity,
                    old.strategy,
                    old.borrow_limit,
                    state=ShareState.DISABLED,
                ),
                now=now,
            )
        sched.advance(now)
        violations += check_invariants(sched)
    sched.run_until_idle(limit=now + 500)
    violations += check_invariants(sched)
    return Run(sched, log, violations)


def _held(
    sched: Scheduler,
) -> tuple[Counter[str], dict[str, Counter[str]], dict[str, Counter[str]]]:
    """Capacity held by jobs not being preempted: total, own+lent per lender, borrowed per share.

    A job whose preemption is in progress keeps its instances until the preemption completes
    (``preemption_duration_s``), so a lowered limit is only restored then.
    """
    total: Counter[str] = Counter()
    per_lender: dict[str, Counter[str]] = {}
    borrowed: dict[str, Counter[str]] = {}
    for job in sched.jobs:
        if sched.preemption_in_progress(job.job_id):
            continue
        for lender, amounts in job.alloc.items():
            total.update(amounts)
            per_lender.setdefault(lender, Counter()).update(amounts)
            if lender != job.share_name:
                borrowed.setdefault(job.share_name, Counter()).update(amounts)
    return total, per_lender, borrowed


def check_invariants(sched: Scheduler) -> list[str]:
    problems: list[str] = []
    se = sched.service_environment
    total, per_lender, borrowed = _held(sched)
    for itype, used in total.items():
        if used > se.get(itype, 0):
            problems.append(f"service environment exceeded: {used} x {itype} > {se}")
    for spec in sched.queue.shares:
        if not spec.strategy.lends:
            users = {
                j.share_name
                for j in sched.jobs
                if spec.name in j.alloc and not sched.preemption_in_progress(j.job_id)
            }
            if users - {spec.name}:
                problems.append(f"{spec.name} is {spec.strategy} but {users} use its capacity")
        for itype, n in borrowed.get(spec.name, Counter()).items():
            if n > spec.borrow_cap(itype):
                problems.append(f"{spec.name} borrows {n} x {itype} > {spec.borrow_cap(itype)}")
        for itype, n in per_lender.get(spec.name, Counter()).items():
            if n > spec.limit(itype):
                problems.append(f"{spec.name}'s {n} x {itype} held above its limit")
    problems += _check_accounting(sched)
    problems += _check_lenders_not_starved(sched)
    return problems


def _check_accounting(sched: Scheduler) -> list[str]:
    """No job lost or duplicated; every instance held is a job's and every job's is counted."""
    problems: list[str] = []
    ids = [j.job_id for j in sched.jobs]
    if len(ids) != len(set(ids)):
        problems.append("duplicate job ids")
    usage: dict[str, dict[str, int]] = {}
    for job in sched.jobs:
        held = {t: sum(a.get(t, 0) for a in job.alloc.values()) for t in job.demand}
        if job.status.is_dispatched:
            if held != dict(job.demand):
                problems.append(f"{job} holds {job.alloc}, needs {dict(job.demand)}")
            share_use = usage.setdefault(job.share_name, {})
            for t, n in held.items():
                share_use[t] = share_use.get(t, 0) + n
        elif job.alloc:
            problems.append(f"{job} holds {job.alloc} in state {job.status}")
        if job.status is JobStatus.RUNNABLE and sched.pending_reason(job.job_id) is None:
            problems.append(f"{job} is RUNNABLE without a pending reason")
    reported = {k: v for k, v in sched.usage().items() if v}
    if reported != {k: v for k, v in usage.items() if any(v.values())}:
        problems.append(f"usage {reported} != jobs' holdings {usage}")
    return problems


def _check_lenders_not_starved(sched: Scheduler) -> list[str]:
    """After a pass, a share's first RUNNABLE job that fits its own limit never waits while
    the capacity it needs is lent out (unless a preemption is still in progress, or the job
    would not fit a smaller service environment even with every borrower gone)."""
    if any(sched.preemption_in_progress(j.job_id) for j in sched.jobs):
        return []
    problems = []
    ledger = sched.ledger()
    se = sched.service_environment
    used = sched.total_usage()
    for spec in sched.queue.shares:
        waiting = [j for j in sched.jobs if j.share_name == spec.name and _waits(sched, j)]
        if not waiting:
            continue
        head = min(waiting, key=lambda j: (-j.priority, j.seq))
        entry = ledger[spec.name]
        fits_own = all(n <= spec.limit(t) - entry.own.get(t, 0) for t, n in head.demand.items())
        lent = any(entry.lent.get(t, 0) > 0 for t in head.demand)
        freeable: Counter[str] = Counter()
        for job in sched.jobs:
            if job.share_name != spec.name and spec.name in job.alloc:
                for amounts in job.alloc.values():
                    freeable.update(amounts)
        fits_se = all(
            n <= se.get(t, 0) - used.get(t, 0) + freeable[t] for t, n in head.demand.items()
        )
        if fits_own and fits_se and lent and sched.options.disabled_share_dispatches:
            problems.append(f"{head} fits {spec.name}'s own limit but waits: {entry}")
    return problems


def _waits(sched: Scheduler, job: Job) -> bool:
    pending = sched.pending_reason(job.job_id)
    return (
        job.status is JobStatus.RUNNABLE
        and pending is not None
        and (pending.kind.value != "EXCEEDS_LIMITS")
    )


se_factors = st.sampled_from([None, None, 0.5, 0.8, 1.5])
