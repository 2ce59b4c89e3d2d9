"""The what-if simulator against small traces computed by hand (scheduler core underneath)."""

from __future__ import annotations

import pytest

from quota_constructs.advisor.simulate import (
    PROGRESS_EVERY,
    SimulationOptions,
    all_reserve,
    alternatives,
    baseline_utilisation,
    compare,
    jain,
    simulate,
)
from quota_constructs.advisor.workload import WorkloadError, WorkloadJob
from quota_constructs.model import JobQueueSpec, Organisation, QuotaShareSpec, SharingStrategy

GPU = "ml.g5.xlarge"
H = 3600.0


def org(*shares: QuotaShareSpec) -> Organisation:
    return Organisation(name="lab", queue=JobQueueSpec(shares=shares))


def share(name: str, strategy: SharingStrategy, **kw: object) -> QuotaShareSpec:
    return QuotaShareSpec(name=name, capacity={GPU: 1}, strategy=strategy, **kw)  # type: ignore[arg-type]


def job(
    t: float, name: str, duration: float, priority: int = 1, count: int = 1, **kw: object
) -> WorkloadJob:
    return WorkloadJob(t, name, GPU, count, duration, priority, **kw)  # type: ignore[arg-type]


INSTANT = SimulationOptions(preemption_s=0)
"""Hand-computed traces: preemptions free capacity at once (the default takes 20 s)."""

TUTORIAL = org(
    share("A", SharingStrategy.LEND_AND_BORROW, borrow_limit=200, in_share_preemption=True),
    share("B", SharingStrategy.LEND),
    share("C", SharingStrategy.RESERVE),
)
# A's p3 job runs on A's unit, A's p2 job borrows B's; B's job at t=10 reclaims the unit
# (cross-share preemption); A's p2 job borrows it again when B's job ends at 60.
RECLAIM = [job(0, "A", 100, 3), job(0, "A", 100, 2), job(10, "B", 50)]


def test_cross_share_reclaim_trace() -> None:
    result = simulate(TUTORIAL, RECLAIM, options=INSTANT)
    a, b, c = result.shares
    assert (a.wait_p50_s, a.wait_max_s, b.wait_max_s) == (0, 0, 0)
    assert a.completion_mean_s == pytest.approx((100 + 160) / 2)  # restarted job: 60 + 100
    assert b.completion_mean_s == pytest.approx(50)
    assert a.preemptions == {"CROSS_SHARE": 1, "IN_SHARE": 0, "LIMIT_LOWERED": 0}
    assert a.lost_instance_hours == pytest.approx(10 / H)  # ran 10 s, no checkpoint
    # borrowed 0-10 and 60-160: 110 instance-seconds; B lent exactly that
    assert a.borrowed_instance_hours == pytest.approx(110 / H)
    assert b.lent_instance_hours == pytest.approx(110 / H)
    assert c.jobs == 0 and c.own_use == 0
    assert result.end_s == pytest.approx(160)


def test_cross_share_trace_window_utilisation_and_baseline() -> None:
    result = simulate(TUTORIAL, RECLAIM, options=INSTANT)
    # window = max(submit + duration) = 100. In it: A own 100, A borrowed 0-10 + 60-100 = 50,
    # B own 10-60 = 50 -> 200 of 3 x 100 instance-seconds.
    assert result.window_s == 100
    assert result.utilisation == pytest.approx(200 / 300)
    # all RESERVE: A's second job waits for A's unit (100-200); in the window 100 + 50.
    assert result.baseline_utilisation == pytest.approx(150 / 300)
    a, b, _ = result.shares
    assert (a.own_use, b.own_use) == (pytest.approx(1.0), pytest.approx(0.5))
    # stretch: A (1 + 100/160) / 2, B 1
    assert result.fairness == pytest.approx(jain([0.8125, 1.0]))


def test_reclaim_with_the_default_20_s_preemption() -> None:
    result = simulate(TUTORIAL, RECLAIM)
    a, b = result.share("A"), result.share("B")
    # preemption 10-30: the victim holds the unit (and keeps running) until 30, B waits 20 s
    # and runs 30-80; A's job restarts at 80 and ends at 180.
    assert b.wait_max_s == pytest.approx(20) and b.completion_mean_s == pytest.approx(70)
    assert a.lost_instance_hours == pytest.approx(30 / H)
    assert a.completion_mean_s == pytest.approx((100 + 180) / 2)
    assert a.borrowed_instance_hours == pytest.approx(130 / H)
    assert [(t, s, r) for t, s, r in result.timeline.preemptions] == [(10, "A", "CROSS_SHARE")]


def test_checkpoint_keeps_work_across_a_reclaim() -> None:
    jobs = [job(0, "A", 100, 3), job(0, "A", 100, 2, checkpoint_interval_s=4.0), job(10, "B", 50)]
    a = simulate(TUTORIAL, jobs, options=INSTANT).share("A")
    # 10 s run, checkpoint at 8 -> 2 s lost; the remaining 92 s run 60-152.
    assert a.lost_instance_hours == pytest.approx(2 / H)
    assert a.completion_mean_s == pytest.approx((100 + 152) / 2)


def test_in_share_preemption_trace() -> None:
    solo = org(share("X", SharingStrategy.RESERVE, in_share_preemption=True))
    result = simulate(solo, [job(0, "X", 100, 1, count=1), job(30, "X", 20, 5)], options=INSTANT)
    x = result.share("X")
    assert x.preemptions["IN_SHARE"] == 1 and x.wait_max_s == 0
    assert x.lost_instance_hours == pytest.approx(30 / H)
    # urgent job 30-50; the preempted one restarts 50-150
    assert x.completion_mean_s == pytest.approx((150 + 20) / 2)
    assert [t for t, _, rule in result.timeline.preemptions if rule == "IN_SHARE"] == [30]


def test_without_in_share_preemption_the_urgent_job_waits() -> None:
    solo = org(share("X", SharingStrategy.RESERVE))
    x = simulate(solo, [job(0, "X", 100, 1), job(30, "X", 20, 5)]).share("X")
    assert x.preemptions["IN_SHARE"] == 0 and x.lost_instance_hours == 0
    assert x.wait_max_s == pytest.approx(70)
    assert x.completion_mean_s == pytest.approx((100 + 90) / 2)


def test_startup_delay_holds_capacity_before_running() -> None:
    solo = org(share("X", SharingStrategy.RESERVE))
    options = SimulationOptions(startup_s=5)
    x = simulate(solo, [job(0, "X", 100), job(0, "X", 100)], options=options).share("X")
    # 0-105 then 105-210
    assert x.wait_max_s == pytest.approx(105)
    assert x.completion_mean_s == pytest.approx((105 + 210) / 2)


def test_jobs_that_can_never_fit_are_reported_not_dropped() -> None:
    solo = org(share("X", SharingStrategy.RESERVE))
    x = simulate(solo, [job(0, "X", 10, count=2), job(0, "X", 10)]).share("X")
    assert (x.jobs, x.completed, x.failed, x.never_started) == (2, 1, 0, 1)
    [reason] = x.not_started_reasons
    assert reason.startswith("MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE")


def test_queue_time_limit_terminates_jobs_that_can_never_fit() -> None:
    queue = JobQueueSpec(shares=(share("X", SharingStrategy.RESERVE),), runnable_timeout_minutes=10)
    limited = Organisation(name="lab", queue=queue)
    result = simulate(limited, [job(0, "X", 10, count=2), job(0, "X", 10)])
    x = result.share("X")
    assert (x.completed, x.failed, x.never_started) == (1, 1, 1)
    assert x.completion_mean_s == pytest.approx(10)  # only the job that succeeded
    [reason] = x.not_started_reasons
    assert reason.startswith("Terminated by JobStateTimeLimit action due to reason: ")
    assert result.end_s == pytest.approx(600)


def test_timeline_is_piecewise_usage() -> None:
    result = simulate(TUTORIAL, RECLAIM, options=INSTANT)
    tl = result.timeline
    at = {t: (tl.own["A"][i], tl.borrowed["A"][i], tl.own["B"][i]) for i, t in enumerate(tl.times)}
    assert at[0] == (1, 1, 0) and at[10] == (1, 0, 1) and at[60] == (1, 1, 0)
    assert at[100] == (0, 1, 0) and at[160] == (0, 0, 0)


def test_rejects_jobs_for_unknown_shares_naming_lines() -> None:
    jobs = [
        WorkloadJob(0, "nope", GPU, 1, 10, 1, line=7),
        WorkloadJob(1, "nope", GPU, 1, 10, 1, line=9),
    ]
    with pytest.raises(WorkloadError) as info:
        simulate(TUTORIAL, jobs)
    [problem] = info.value.problems
    assert str(problem).startswith("line 7, line 9 (2 jobs).share: not a quota share of")
    assert "(shares: A, B, C)" in str(problem)


def test_compare_runs_configurations_on_the_same_workload() -> None:
    configs = alternatives(TUTORIAL)
    assert list(configs) == ["recommended", "all-RESERVE", "all-LEND_AND_BORROW"]
    assert configs["all-RESERVE"].queue == all_reserve(TUTORIAL.queue)
    rec, reserve, borrow = compare(list(configs.values()), RECLAIM)
    # no sharing: utilisation equals its own baseline; A's second job waits 100 s
    assert reserve.utilisation == pytest.approx(reserve.baseline_utilisation)
    assert reserve.share("A").wait_max_s == pytest.approx(100)
    assert rec.baseline_utilisation == reserve.baseline_utilisation
    assert borrow.share("C").strategy == "LEND_AND_BORROW"


def test_simulation_is_deterministic() -> None:
    assert simulate(TUTORIAL, RECLAIM).shares == simulate(TUTORIAL, RECLAIM).shares


def test_jain_index_bounds() -> None:
    assert jain([1, 1, 1]) == 1 and jain([1, 0, 0]) == pytest.approx(1 / 3)


def test_logged_usage_matches_the_core_ledger_at_every_step() -> None:
    from quota_constructs.advisor.profiles import load_teams
    from quota_constructs.advisor.simulate import _Recorder, _request
    from quota_constructs.advisor.workload import GeneratorOptions, generate_workload
    from quota_constructs.config import load_organisation
    from quota_constructs.scheduling import Scheduler
    from tests.advisor.helpers import ORG_FILE, TEAMS_FILE

    research = load_organisation(ORG_FILE)
    jobs = generate_workload(
        load_teams(TEAMS_FILE), days=7, seed=5, options=GeneratorOptions(intensity=4)
    )
    sched = Scheduler.for_queue(
        research.queue,
        queue_name="q",
        options=SimulationOptions().scheduler_options(research.queue),
    )
    recorder = _Recorder(sched, 7 * 86400.0)
    recorder.start()
    expected: list[tuple[int, dict[str, list[int]]]] = []
    """(sample of the step, the ledger's own, borrowed and lent instances per share)."""
    logged = [0]  # log entries at the end of each step

    def step(now: float) -> None:
        sched.advance(now)
        recorder.end_step()
        logged.append(len(recorder.log.changes))
        sample = (expected[-1][0] if expected else 0) + (logged[-1] > logged[-2])
        ledger = {
            name: [sum(e.own.values()), sum(e.borrowed.values()), sum(e.lent.values())]
            for name, e in sched.ledger().items()
        }
        expected.append((sample, ledger))

    for index, item in enumerate(jobs):  # to each event and each submit, as the feed goes
        while (t := sched.next_event_time()) is not None and t < item.submit_time_s:
            step(t)
        sched.submit(_request(index, item), now=item.submit_time_s)
        step(item.submit_time_s)
    while (t := sched.next_event_time()) is not None:
        step(t)
    recorder.integrate()
    for name in recorder.names:
        counts = [series.tolist() for series in recorder.share_counts(name)]
        for sample, ledger in expected:
            assert [c[sample] for c in counts] == ledger[name], (sample, name)
    assert max(recorder.share_counts("generative")[1]) > 0  # it borrowed
    assert expected[-1][1]["generative"] == [0, 0, 0]


def test_rejects_jobs_the_core_refuses_naming_the_line() -> None:
    disabled = org(share("X", SharingStrategy.RESERVE, state="DISABLED"))
    with pytest.raises(WorkloadError) as info:
        simulate(disabled, [WorkloadJob(0, "X", GPU, 1, 10, 1, line=4)])
    [problem] = info.value.problems
    assert str(problem).startswith("line 4: quotaShareName: the quota share is DISABLED")


def test_an_all_reserve_organisation_is_its_own_baseline() -> None:
    reserve = alternatives(TUTORIAL)["all-RESERVE"]
    [result] = compare([reserve], RECLAIM, options=INSTANT)
    assert result.baseline_utilisation == result.utilisation
    assert result.baseline_utilisation == baseline_utilisation(reserve, RECLAIM, options=INSTANT)


def test_the_baseline_of_a_sharing_organisation_is_its_all_reserve_run() -> None:
    reserve = simulate(alternatives(TUTORIAL)["all-RESERVE"], RECLAIM, options=INSTANT)
    assert simulate(TUTORIAL, RECLAIM, options=INSTANT).baseline_utilisation == (
        reserve.utilisation
    )


def test_progress_reports_the_simulated_time_as_it_grows() -> None:
    jobs = [job(float(i), "A", 1) for i in range(2 * PROGRESS_EVERY)]
    seen: list[tuple[str, float]] = []
    simulate(TUTORIAL, jobs, options=INSTANT, progress=lambda o, now: seen.append((o, now)))
    assert len(seen) >= 2 and {o for o, _ in seen} == {TUTORIAL.name}
    assert [now for _, now in seen] == sorted(now for _, now in seen)


def test_vectorised_integration_equals_a_per_step_loop_to_the_last_bit() -> None:
    """The recorder sums instance-seconds once at the end (numpy, left to right); a loop over
    the shares at every sample, as the recorder did before, gives exactly the same floats."""
    from quota_constructs.advisor.profiles import load_teams
    from quota_constructs.advisor.simulate import _run, _Usage, default_window
    from quota_constructs.advisor.workload import GeneratorOptions, generate_workload
    from quota_constructs.config import load_organisation
    from tests.advisor.helpers import ORG_FILE, TEAMS_FILE

    def loop(usage: _Usage) -> tuple[dict[str, list[float]], float]:
        """The reference: span after span, share after share, in Python floats."""
        counts = {n: [s.tolist() for s in usage.share_counts(n)] for n in usage.names}
        totals = {n: [0.0, 0.0, 0.0, 0.0] for n in usage.names}
        used, w, times = 0.0, usage.window_s, usage.times
        for i in range(1, len(times)):
            span = times[i] - times[i - 1]
            in_window = max(0.0, min(times[i], w) - min(times[i - 1], w))
            for name in usage.names:
                own, borrowed, lent = (c[i - 1] for c in counts[name])
                if own or borrowed or lent:
                    acc = totals[name]
                    acc[0] += own * span
                    acc[1] += borrowed * span
                    acc[2] += lent * span
                    acc[3] += own * in_window
                    used += (own + borrowed) * in_window
        return totals, used

    research = load_organisation(ORG_FILE)
    jobs = generate_workload(
        load_teams(TEAMS_FILE), days=7, seed=3, options=GeneratorOptions(intensity=6)
    )
    for window in (default_window(jobs), 3 * 86400.0):  # the window ending mid-run too
        _, usage = _run(research.queue, "lab", jobs, SimulationOptions(), window, _Usage)
        assert (usage.totals, usage.used_in_window) == loop(usage)
        assert any(t[1] for t in usage.totals.values())  # borrowing happened
