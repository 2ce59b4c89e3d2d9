"""Invariants of simulation results over random small organisations and workloads."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quota_constructs.advisor.simulate import (
    SimulationOptions,
    baseline_queue,
    baseline_utilisation,
    runs_as_baseline,
    simulate,
)
from quota_constructs.advisor.workload import WorkloadJob
from quota_constructs.model import (
    JobQueueSpec,
    Organisation,
    QuotaShareSpec,
    ShareCalendar,
    ShareWindow,
    SharingStrategy,
)

GPU = "ml.g5.xlarge"
NAMES = ("a", "b", "c")


@st.composite
def organisations(draw: st.DrawFn) -> Organisation:
    count = draw(st.integers(2, 3))
    shares = []
    for name in NAMES[:count]:
        strategy = draw(st.sampled_from(list(SharingStrategy)))
        limit = draw(st.sampled_from([None, 0, 50, 100, 300])) if strategy.borrows else None
        shares.append(
            QuotaShareSpec(
                name=name,
                capacity={GPU: draw(st.integers(1, 3))},
                strategy=strategy,
                borrow_limit=limit,
                in_share_preemption=draw(st.booleans()),
            )
        )
    return Organisation(name="lab", queue=JobQueueSpec(shares=tuple(shares)))


@st.composite
def organisations_with_calendars(draw: st.DrawFn) -> Organisation:
    """:func:`organisations` where some shares flip settings in the workload's first minutes
    (simulated time 0 is a Monday, 00:00 UTC)."""
    org = draw(organisations())
    calendars = {}
    for share in org.queue.shares:
        if draw(st.booleans()):
            start = draw(st.integers(0, 4))
            window = ShareWindow(
                days=("mon",),
                start=f"00:{start:02d}",
                end=f"00:{start + draw(st.integers(1, 3)):02d}",
                strategy=draw(st.sampled_from(list(SharingStrategy))),
                in_share_preemption=draw(st.sampled_from([None, True, False])),
            )
            calendars[share.name] = ShareCalendar(windows=(window,))
    return replace(org, calendars=calendars)


def workloads(names: tuple[str, ...]) -> st.SearchStrategy[list[WorkloadJob]]:
    job = st.builds(
        WorkloadJob,
        submit_time_s=st.integers(0, 400).map(float),
        share=st.sampled_from(names),
        instance_type=st.just(GPU),
        instance_count=st.integers(1, 3),
        duration_s=st.integers(1, 200).map(float),
        priority=st.integers(0, 5),
        checkpoint_interval_s=st.one_of(st.none(), st.just(30.0)),
    )
    return st.lists(job, min_size=1, max_size=12)


@given(data=st.data())
def test_simulation_invariants(data: st.DataObject) -> None:
    org = data.draw(organisations())
    jobs = data.draw(workloads(tuple(s.name for s in org.queue.shares)))
    preemption_s = data.draw(st.sampled_from([0.0, 20.0]))
    result = simulate(org, jobs, options=SimulationOptions(preemption_s=preemption_s))
    borrowed = sum(m.borrowed_instance_hours for m in result.shares)
    lent = sum(m.lent_instance_hours for m in result.shares)
    assert borrowed == pytest.approx(lent, abs=1e-9)
    assert 0 <= result.utilisation <= 1 + 1e-9
    assert 0 < result.fairness <= 1 + 1e-9
    for spec, m in zip(org.queue.shares, result.shares, strict=True):
        assert m.own_use <= 1 + 1e-9
        if not spec.strategy.lends:
            assert m.lent_instance_hours == 0
        if not spec.strategy.borrows:
            # a share that never borrows is never a cross-share victim
            assert m.borrowed_instance_hours == 0 and m.preemptions["CROSS_SHARE"] == 0
        if not spec.in_share_preemption:
            assert m.preemptions["IN_SHARE"] == 0
        # nothing fails here: every job either succeeds or never fits
        assert m.completed + m.never_started == m.jobs and m.failed == 0
        assert m.wait_p50_s <= m.wait_p95_s <= m.wait_max_s


@given(data=st.data())
def test_the_baseline_read_from_the_run_is_the_baseline_simulated_to_the_last_bit(
    data: st.DataObject,
) -> None:
    """The RESERVE shares without in-share preemption are read from the organisation's own run
    (``runs_as_baseline``), the others simulated: the same figure as the whole all-RESERVE
    organisation simulated on its own."""
    org = data.draw(organisations())
    jobs = data.draw(workloads(tuple(s.name for s in org.queue.shares)))
    options = SimulationOptions(preemption_s=data.draw(st.sampled_from([0.0, 20.0])))
    derived = simulate(org, jobs, options=options).baseline_utilisation
    assert derived == baseline_utilisation(org, jobs, options=options)
    assert derived == whole_baseline_run(org, jobs, options)


@given(data=st.data())
def test_the_baseline_read_from_a_run_with_calendars_is_the_baseline_simulated(
    data: st.DataObject,
) -> None:
    """Other shares' calendars flip during the run: a RESERVE share without in-share
    preemption or a calendar of its own is still read from the run, to the last bit."""
    org = data.draw(organisations_with_calendars())
    jobs = data.draw(workloads(tuple(s.name for s in org.queue.shares)))
    options = SimulationOptions(preemption_s=data.draw(st.sampled_from([0.0, 20.0])))
    assert not runs_as_baseline(org) & set(org.calendars)
    derived = simulate(org, jobs, options=options).baseline_utilisation
    assert derived == whole_baseline_run(org, jobs, options)


def whole_baseline_run(
    org: Organisation, jobs: list[WorkloadJob], options: SimulationOptions | None = None
) -> float:
    """The all-RESERVE baseline run to its end, as a configuration of its own: the figure the
    baseline, run only to the end of the window, must equal."""
    reserve = replace(org, queue=baseline_queue(org.queue), calendars={})
    return simulate(reserve, jobs, options=options).utilisation


@given(data=st.data())
def test_the_baseline_run_to_the_end_of_its_window_is_the_whole_run_to_the_last_bit(
    data: st.DataObject,
) -> None:
    """The baseline stops at the end of the window (the default one, or a shorter or longer
    one set by the options): the same figure as the all-RESERVE run to its end."""
    org = data.draw(organisations())
    jobs = data.draw(workloads(tuple(s.name for s in org.queue.shares)))
    window = data.draw(st.sampled_from([None, 50.0, 333.5, 10_000.0]))
    options = SimulationOptions(preemption_s=data.draw(st.sampled_from([0.0, 20.0])))
    options = replace(options, window_s=window)
    assert baseline_utilisation(org, jobs, options=options) == whole_baseline_run(
        org, jobs, options
    )


def test_a_long_busy_baseline_read_from_the_run_is_the_one_simulated() -> None:
    """Seven shares, two of them RESERVE without in-share preemption, 3,000 jobs at about
    twice the capacity: the derived baseline equals the simulated one to the last bit."""
    rng = random.Random(3)
    lab, lend, reserve = (SharingStrategy[n] for n in ("LEND_AND_BORROW", "LEND", "RESERVE"))
    strategies = [lab, lend, reserve, reserve, lab, reserve, lend]  # s3 preempts in-share
    shares = tuple(
        QuotaShareSpec(
            name=f"s{i}",
            capacity={GPU: rng.randint(1, 4)},
            strategy=strategy,
            in_share_preemption=i % 3 == 0,
        )
        for i, strategy in enumerate(strategies)
    )
    org = Organisation(name="lab", queue=JobQueueSpec(shares=shares))
    assert runs_as_baseline(org) == {"s2", "s5"}
    jobs = [
        WorkloadJob(
            60.0 * n, rng.choice(shares).name, GPU, rng.randint(1, 3), rng.uniform(60, 3600), 1
        )
        for n in range(3000)
    ]
    result = simulate(org, jobs)
    derived = result.baseline_utilisation
    assert derived == baseline_utilisation(org, jobs)
    assert derived == whole_baseline_run(org, jobs)
    assert 0.3 < derived < 1


def test_an_overloaded_baseline_stopped_at_its_window_is_the_whole_run() -> None:
    """Three times the capacity: most of the backlog drains after the window, which the
    baseline no longer runs; its figure is still that of the whole run to the last bit."""
    rng = random.Random(11)
    shares = tuple(
        QuotaShareSpec(name=f"s{i}", capacity={GPU: 2}, strategy=SharingStrategy.LEND)
        for i in range(4)
    )
    org = Organisation(name="lab", queue=JobQueueSpec(shares=shares))
    jobs = [
        WorkloadJob(30.0 * n, rng.choice(shares).name, GPU, rng.randint(1, 2), 300.0, 1)
        for n in range(2000)
    ]
    result = simulate(org, jobs)
    assert result.end_s > 2 * result.window_s  # the window ends long before the backlog
    assert result.baseline_utilisation == whole_baseline_run(org, jobs)
    assert result.baseline_utilisation > 0.8
