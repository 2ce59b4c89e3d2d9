"""The simulator honours share calendars with the model's function, applied as the emulator
applies them: a weekday lender turns RESERVE at Saturday 00:00 (simulated time 0 is a Monday,
00:00 UTC), so its weekend jobs start at once and the borrower on its capacity is preempted at
the edge instead of by the weekend job."""

from __future__ import annotations

from dataclasses import replace

from quota_constructs.advisor.billing import simulated_attempts
from quota_constructs.advisor.simulate import SimulationOptions, alternatives, simulate
from quota_constructs.advisor.workload import DAY_S, WorkloadJob
from quota_constructs.model import (
    JobQueueSpec,
    Organisation,
    QuotaShareSpec,
    ShareCalendar,
    ShareWindow,
    SharingStrategy,
)

GPU = "ml.g5.xlarge"
H = 3600.0
SATURDAY = 5 * DAY_S
WEEKEND = ShareCalendar((ShareWindow(("sat", "sun"), strategy=SharingStrategy.RESERVE),))
PLAIN = Organisation(
    name="lab",
    queue=JobQueueSpec(
        shares=(
            QuotaShareSpec("weekend", {GPU: 1}, SharingStrategy.LEND),
            QuotaShareSpec("weekday", {GPU: 1}, SharingStrategy.LEND_AND_BORROW),
        )
    ),
)
CALENDAR = replace(PLAIN, calendars={"weekend": WEEKEND})
JOBS = [
    WorkloadJob(SATURDAY - 2 * H, "weekday", GPU, 1, 6 * H, 1),  # own capacity
    WorkloadJob(SATURDAY - 2 * H + 1, "weekday", GPU, 1, 6 * H, 1),  # borrows weekend's
    WorkloadJob(SATURDAY + 1 * H, "weekend", GPU, 1, 2 * H, 1),
]
INSTANT = SimulationOptions(preemption_s=0)


def test_without_the_calendar_the_weekend_job_reclaims_its_capacity_on_arrival() -> None:
    result = simulate(PLAIN, JOBS, options=INSTANT)
    weekday = result.share("weekday")
    assert weekday.preemptions["CROSS_SHARE"] == 1
    assert result.timeline.preemptions == [(SATURDAY + H, "weekday", "CROSS_SHARE")]


def test_with_the_calendar_the_borrower_is_preempted_at_the_saturday_edge() -> None:
    result = simulate(CALENDAR, JOBS, options=INSTANT)
    assert result.timeline.preemptions == [(SATURDAY, "weekday", "LIMIT_LOWERED")]
    weekend = result.share("weekend")
    assert weekend.wait_max_s == 0
    preemptions = result.share("weekday").preemptions
    assert (preemptions["LIMIT_LOWERED"], preemptions["CROSS_SHARE"]) == (1, 0)


def test_a_calendar_window_in_force_at_time_zero_applies_from_the_start() -> None:
    always = ShareCalendar(
        (
            ShareWindow(
                ("mon", "tue", "wed", "thu", "fri", "sat", "sun"), strategy=SharingStrategy.RESERVE
            ),
        )
    )
    org = replace(PLAIN, calendars={"weekend": always})
    jobs = [WorkloadJob(0, "weekday", GPU, 2, H, 1)]
    result = simulate(org, jobs, options=INSTANT)
    assert result.share("weekday").never_started == 1


def test_the_alternatives_compared_drop_the_calendar() -> None:
    compared = alternatives(CALENDAR)
    assert compared["recommended"].calendars == {"weekend": WEEKEND}
    assert compared["all-RESERVE"].calendars == {}
    assert compared["all-LEND_AND_BORROW"].calendars == {}


def test_the_bill_sees_the_borrower_preempted_at_the_calendar_edge() -> None:
    attempts = simulated_attempts(CALENDAR, JOBS, options=INSTANT)
    preempted = [(a.share, a.start_s, a.stop_s) for a in attempts if a.preempted]
    assert preempted == [("weekday", SATURDAY - 2 * H + 1, SATURDAY)]
