"""The forecast's gaps closed on plain queue states: the queue's RUNNABLE time-limit actions
run in the samples as the core runs them."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from quota_constructs.forecast import QueueState, forecast, what_if
from quota_constructs.model import (
    MISCONFIGURATION_REASONS,
    QuotaShareSpec,
    ShareCalendar,
    ShareWindow,
    SharingStrategy,
    TrainingPlanSpec,
)
from tests.forecast.test_engine import GPU, HOUR, MONDAY, P5, job

SE_MAX, SHARE_LIMIT = MISCONFIGURATION_REASONS
TEN_MIN = {reason: 600.0 for reason in MISCONFIGURATION_REASONS}


def plan_state(**fields: object) -> QueueState:
    """A P5 job waiting for a plan that starts in 5 h (its type has no capacity before)."""
    starts = datetime.fromtimestamp(MONDAY + 5 * HOUR, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    state = QueueState(
        now_s=MONDAY,
        shares=(QuotaShareSpec("llm", {P5: 2}, SharingStrategy.RESERVE),),
        waiting=(replace(job("w", "llm", hint_s=HOUR), demand={P5: 2}),),
        plans=(TrainingPlanSpec("p5-june", P5, 2, starts, 24),),
    )
    return replace(state, **fields)  # type: ignore[arg-type]


def test_a_time_limit_shorter_than_the_wait_for_capacity_cancels_the_job() -> None:
    result = forecast(plan_state(time_limits=TEN_MIN), samples=20)
    w = result.jobs["w"]
    assert (w.cancelled, w.cancel_p, w.cancel_reason) == (True, 1.0, SE_MAX)
    assert w.cancel_s == pytest.approx(600, abs=5)
    assert w.start_json() is None
    assert w.fields_json()["forecastReason"] == (
        f"cancelled by the queue's time-limit action (jobStateTimeLimitActions: RUNNABLE with "
        f"{SE_MAX} for 600 s) in 100% of the samples, about 10 min from now: it runs only if "
        "placed before that"
    )
    assert any("counted from now" in c for c in result.caveats)


def test_a_time_limit_longer_than_the_wait_lets_the_job_start() -> None:
    eight_hours = {SE_MAX: 8 * HOUR}
    w = forecast(plan_state(time_limits=eight_hours), samples=20).jobs["w"]
    assert (w.cancelled, w.cancel_p) == (False, 0.0)
    assert w.p50_s == pytest.approx(5 * HOUR, abs=60)
    assert w.as_json()["timeLimit"] is None


def test_what_if_of_a_job_the_limit_cancels_is_never_with_the_limit_as_reason() -> None:
    state = plan_state(time_limits=TEN_MIN, waiting=())
    new = replace(job("new", "llm", hint_s=HOUR), demand={P5: 2})
    answer = what_if(state, new, samples=20)
    assert answer.outcome == "never"
    assert answer.as_json()["startsInS"] is None
    assert f"RUNNABLE with {SE_MAX} for 600 s" in answer.reason
    assert what_if(plan_state(waiting=()), new, samples=20).outcome == "waits"


def test_jobs_that_can_never_run_are_cancelled_one_after_another_and_say_when() -> None:
    """The limit runs for the first blocked job of a share only: the second's starts after."""
    state = QueueState(
        now_s=MONDAY,
        shares=(QuotaShareSpec("a", {GPU: 1}, SharingStrategy.RESERVE),),
        waiting=(
            replace(job("first", "a", created_s=MONDAY - 2), demand={GPU: 2}),
            replace(job("second", "a", created_s=MONDAY - 1), demand={GPU: 2}),
        ),
        time_limits=TEN_MIN,
    )
    result = forecast(state, samples=12).jobs
    assert [result[j].cancel_s for j in ("first", "second")] == [600.0, 1200.0]
    assert all(r.never and r.cancel_reason == SE_MAX for r in result.values())  # 2 > 1 in all
    assert "can ever use" in result["second"].reason
    assert "about 20 min from now" in result["second"].reason
    without = forecast(replace(state, time_limits={}), samples=12).jobs
    assert without["first"].cancel_p == 0 and "time-limit" not in without["first"].reason


def test_a_calendar_that_stops_borrowing_makes_a_waiting_job_cancelled() -> None:
    """b borrows a's idle GPU for its 2-GPU job until Monday 01:00, when b turns RESERVE: from
    then on the job can never run and the time limit cancels it 10 minutes later."""
    specs = (
        QuotaShareSpec("a", {GPU: 1}, SharingStrategy.LEND),
        QuotaShareSpec("b", {GPU: 1}, SharingStrategy.LEND_AND_BORROW, borrow_limit=-1),
    )
    night = ShareCalendar((ShareWindow(("mon",), "01:00", "06:00", SharingStrategy.RESERVE),))
    state = QueueState(
        now_s=MONDAY,
        shares=specs,
        running=(job("a-run", "a", started_s=MONDAY, hint_s=3 * HOUR, max_runtime_s=None),),
        waiting=(replace(job("w", "b", hint_s=HOUR), demand={GPU: 2}),),
        calendars={"b": night},
        time_limits=TEN_MIN,
    )
    w = forecast(state, samples=20).jobs["w"]
    assert w.cancelled and w.cancel_reason == SHARE_LIMIT
    assert w.cancel_s == pytest.approx(HOUR + 600, abs=5)
    assert not forecast(replace(state, time_limits={}), samples=20).jobs["w"].cancelled


def test_a_what_if_the_submit_refuses_is_not_run_against_the_limits() -> None:
    state = plan_state(time_limits=TEN_MIN, waiting=(), priority_caps={"llm": 5})
    new = replace(job("new", "llm", priority=9), demand={P5: 2})
    answer = what_if(state, new, samples=12)
    assert answer.outcome == "never"
    assert "above team llm's cap of 5" in answer.reason
    assert answer.job.cancel_p == 0 and "time-limit" not in answer.reason
