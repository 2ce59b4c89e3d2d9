"""The forecast engine on plain queue states: calendars and plans inside the horizon, never
reasons, run-time sources, determinism, arrivals, and the backtest's bookkeeping."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import pytest

from quota_constructs.forecast import (
    RUNTIME_HINT_TAG,
    ArrivalModel,
    LiveJob,
    PastRun,
    QueueState,
    forecast,
    runtime_hint,
    what_if,
)
from quota_constructs.forecast.arrivals import slot_of
from quota_constructs.forecast.backtest import Coverage, Prediction, backtest, seed_interval
from quota_constructs.forecast.engine import prediction_bound
from quota_constructs.forecast.runtimes import (
    MIN_RUNS,
    RUN_JITTER,
    RunTimeModel,
    kernel_width,
    name_stem,
)
from quota_constructs.model import (
    MISCONFIGURATION_REASONS,
    JobQueueSpec,
    QuotaConfigError,
    QuotaShareSpec,
    ShareCalendar,
    ShareState,
    ShareWindow,
    SharingStrategy,
    TrainingPlanSpec,
)

GPU = "ml.g5.xlarge"
P5 = "ml.p5.48xlarge"
MONDAY = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
HOUR = 3600.0


def shares(**strategy: SharingStrategy) -> tuple[QuotaShareSpec, ...]:
    return tuple(QuotaShareSpec(name, {GPU: 1}, s) for name, s in strategy.items())


def job(job_id: str, share: str, **fields: object) -> LiveJob:
    base = LiveJob(job_id, job_id, share, {GPU: 1}, max_runtime_s=12 * HOUR)
    return replace(base, **fields)  # type: ignore[arg-type]


def test_a_waiting_job_starts_when_the_running_one_ends() -> None:
    state = QueueState(
        now_s=MONDAY,
        shares=shares(a=SharingStrategy.RESERVE),
        running=(job("r", "a", started_s=MONDAY - HOUR, hint_s=3 * HOUR),),
        waiting=(job("w", "a", created_s=MONDAY - 60, hint_s=HOUR),),
    )
    result = forecast(state, samples=100).jobs["w"]
    assert result.p10_s is not None and result.p50_s is not None and result.p90_s is not None
    assert result.p10_s < 2 * HOUR < result.p90_s  # the hint's median: 2 h left of 3
    assert 1.5 * HOUR < result.p50_s < 2.5 * HOUR
    assert result.waiting_on.startswith("SHARE_LIMIT") or "capacity" in result.waiting_on.lower()


def test_a_past_run_the_queue_could_not_have_held_then_takes_nothing_after_now() -> None:
    """A history that does not add up (a finished run said to hold share a's one GPU while r
    held it): the past run cannot be placed when it ran, and is ended at now instead of
    taking the GPU after r; w's forecast is the one without it."""
    r = job("r", "a", started_s=MONDAY - 5 * HOUR, hint_s=6 * HOUR)
    r2 = job("r2", "a", started_s=MONDAY - HOUR, hint_s=2 * HOUR)
    w = job("w", "a", created_s=MONDAY - 60, hint_s=HOUR)
    clean = QueueState(
        now_s=MONDAY,
        shares=shares(a=SharingStrategy.RESERVE),
        running=(r, r2),
        waiting=(w,),
    )
    held = PastRun("a", "f", GPU, 1, 3 * HOUR, stopped_s=MONDAY - HOUR / 2)
    muddled = replace(clean, history=(held,))
    assert forecast(muddled, samples=24).jobs["w"] == forecast(clean, samples=24).jobs["w"]


def test_a_running_job_holds_the_share_s_own_instances_only_if_they_were_free() -> None:
    """a's own GPU was held by a run since finished when ``early`` started, so ``early``
    borrowed b's; ``late`` started after that run and holds a's own. h (priority between
    theirs) preempts ``late`` in-share and starts at once. Without the finished run,
    ``early`` would hold a's own and ``late`` the borrowed GPU, which an in-share preemption
    does not free: h would be forecast to wait."""
    a = QuotaShareSpec(
        "a", {GPU: 1}, SharingStrategy.LEND_AND_BORROW, borrow_limit=100, in_share_preemption=True
    )
    b = QuotaShareSpec("b", {GPU: 1}, SharingStrategy.LEND)
    early = job("early", "a", priority=5, started_s=MONDAY - 2 * HOUR, hint_s=4 * HOUR)
    late = job("late", "a", priority=2, started_s=MONDAY - HOUR / 2, hint_s=4 * HOUR)
    h = job("h", "a", priority=3, created_s=MONDAY - 60, hint_s=HOUR)
    held = PastRun("a", "f", GPU, 1, 2 * HOUR, stopped_s=MONDAY - HOUR)
    state = QueueState(now_s=MONDAY, shares=(a, b), running=(early, late), waiting=(h,))
    alone = forecast(state, samples=12).jobs["h"]
    assert alone.p50_s is not None and alone.p50_s > 0 and alone.preempts == ()
    placed = forecast(replace(state, history=(held,)), samples=12).jobs["h"]
    assert placed.p90_s == 0.0
    assert [(p.job_id, p.kind) for p in placed.preempts] == [("late", "in_share")]


def test_a_running_job_preempted_in_the_forecast_runs_again_from_its_start() -> None:
    """r has run 50 min of its hinted hour; h preempts it (in-share) and runs 30 min; r then
    runs its whole hour again (no checkpoint), not just the 10 min it had left; q, the
    lowest priority, starts after both: about 90 min, not 40."""
    a = QuotaShareSpec("a", {GPU: 1}, SharingStrategy.RESERVE, in_share_preemption=True)
    state = QueueState(
        now_s=MONDAY,
        shares=(a,),
        running=(job("r", "a", priority=10, started_s=MONDAY - 50 * 60, hint_s=HOUR),),
        waiting=(
            job("h", "a", priority=100, created_s=MONDAY - 60, hint_s=HOUR / 2),
            job("q", "a", priority=5, created_s=MONDAY - 30, hint_s=60.0),
        ),
    )
    result = forecast(state, samples=200)
    assert result.jobs["h"].p90_s == 0.0
    q = result.jobs["q"].p50_s
    assert q is not None and 1.2 * HOUR < q < 2 * HOUR


def test_a_running_job_not_started_yet_is_placed_at_now_after_the_started_ones() -> None:
    """r0 is placed but not started (no ``startedAt``: SCHEDULED or STARTING), r1 started
    30 min ago; each holds one of the share's two GPUs for about its hinted hour: the waiting
    job starts when r1 ends, about 30 min from now."""
    a = QuotaShareSpec("a", {GPU: 2}, SharingStrategy.RESERVE)
    state = QueueState(
        now_s=MONDAY,
        shares=(a,),
        running=(
            job("r0", "a", hint_s=HOUR),
            job("r1", "a", started_s=MONDAY - HOUR / 2, hint_s=HOUR),
        ),
        waiting=(job("w", "a", created_s=MONDAY - 60, hint_s=HOUR),),
    )
    start = forecast(state, samples=100).jobs["w"].p50_s
    assert start is not None and 0.2 * HOUR < start < 0.8 * HOUR


def test_the_same_seed_gives_the_same_forecast_and_another_seed_another() -> None:
    state = QueueState(
        now_s=MONDAY,
        shares=shares(a=SharingStrategy.RESERVE),
        running=(job("r", "a", started_s=MONDAY, hint_s=HOUR),),
        waiting=(job("w", "a"),),
    )
    first, again = forecast(state, seed=3), forecast(state, seed=3)
    assert first.jobs["w"] == again.jobs["w"]
    assert forecast(state, seed=4).jobs["w"].p50_s != first.jobs["w"].p50_s


def test_a_calendar_that_opens_borrowing_inside_the_horizon_starts_the_job_then() -> None:
    """Share b may borrow only on weekends (its calendar): its job waits for Saturday 00:00."""
    specs = (
        QuotaShareSpec("a", {GPU: 1}, SharingStrategy.LEND),
        QuotaShareSpec("b", {GPU: 1}, SharingStrategy.RESERVE),
    )
    weekend = ShareCalendar(
        (ShareWindow(("sat", "sun"), strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit=-1),)
    )
    friday_noon = MONDAY + 4 * 86400 + 12 * HOUR
    state = QueueState(
        now_s=friday_noon,
        shares=specs,
        running=(job("own", "b", started_s=friday_noon, hint_s=48 * HOUR, max_runtime_s=None),),
        waiting=(job("w", "b", hint_s=HOUR),),
        calendars={"b": weekend},
    )
    result = forecast(state, samples=20).jobs["w"]
    assert result.p10_s == pytest.approx(12 * HOUR, abs=60)
    assert result.p90_s == pytest.approx(12 * HOUR, abs=60)
    without = forecast(replace(state, calendars={}), samples=20).jobs["w"]
    assert without.p50_s is not None and without.p50_s > 24 * HOUR


def lending_week(**windows: ShareWindow) -> QueueState:
    """Borrower b (LEND_AND_BORROW, 1 GPU of its own, borrowing unlimited) and lender a (1 GPU,
    RESERVE unless its calendar says otherwise); Monday 00:00; calendars from ``windows``."""
    specs = (
        QuotaShareSpec("a", {GPU: 1}, SharingStrategy.RESERVE),
        QuotaShareSpec("b", {GPU: 1}, SharingStrategy.LEND_AND_BORROW, borrow_limit=-1),
    )
    return QueueState(
        now_s=MONDAY,
        shares=specs,
        calendars={name: ShareCalendar((w,)) for name, w in windows.items()},
    )


def test_a_job_that_fits_only_when_a_lender_lends_waits_for_its_window() -> None:
    """b's 2-GPU job needs a's GPU; a lends only from 03:00 to 05:00: not never, it starts
    at 03:00."""
    state = lending_week(a=ShareWindow(("mon",), "03:00", "05:00", SharingStrategy.LEND))
    answer = what_if(state, replace(job("x", "b", hint_s=HOUR), demand={GPU: 2}), samples=12)
    assert answer.outcome == "waits", answer.reason
    assert answer.job.p10_s == answer.job.p90_s == pytest.approx(3 * HOUR, abs=60)
    without = what_if(replace(state, calendars={}), replace(job("x", "b"), demand={GPU: 2}))
    assert without.outcome == "never"
    assert "more than quota share b can ever use (1, borrowing included)" in without.reason


def test_a_job_that_fits_only_in_windows_that_never_meet_is_never() -> None:
    """a lends now, until 02:00, and b borrows only from 03:00 to 05:00: b's window with a's
    setting of now would fit b's 2-GPU job, but the two never meet; they do when a lends
    until 04:00."""
    state = lending_week(
        a=(lends := ShareWindow(("mon",), "00:00", "02:00", SharingStrategy.LEND)),
        b=ShareWindow(("mon",), "03:00", "05:00", SharingStrategy.LEND_AND_BORROW, -1),
    )
    reserve = replace(state.shares[1], strategy=SharingStrategy.RESERVE, borrow_limit=None)
    state = replace(state, shares=(state.shares[0], reserve))
    wide = replace(job("x", "b", hint_s=HOUR), demand={GPU: 2})
    answer = what_if(state, wide, samples=12)
    assert answer.outcome == "never"
    assert answer.reason == "2 x ml.g5.xlarge is more than quota share b can ever use " + (
        "(1, borrowing included)"
    )
    meeting = {**state.calendars, "a": ShareCalendar((replace(lends, end="04:00"),))}
    met = what_if(replace(state, calendars=meeting), wide, samples=12)
    assert met.outcome == "waits", met.reason
    assert met.job.p50_s == pytest.approx(3 * HOUR, abs=60)


def test_changes_at_the_same_moment_are_one_setting() -> None:
    """a stops lending at 05:00 exactly when b starts borrowing: the queue is never in a
    setting where both hold, so b's 2-GPU job is never (b listed first: its change is taken
    first)."""
    state = lending_week(
        a=ShareWindow(("mon",), "00:00", "05:00", SharingStrategy.LEND),
        b=ShareWindow(("mon",), "05:00", "09:00", SharingStrategy.LEND_AND_BORROW, -1),
    )
    reserve = replace(state.shares[1], strategy=SharingStrategy.RESERVE, borrow_limit=None)
    state = replace(state, shares=(reserve, state.shares[0]))
    answer = what_if(state, replace(job("x", "b"), demand={GPU: 2}), samples=12)
    assert answer.outcome == "never"


def test_a_plan_starting_inside_the_horizon_starts_its_jobs_then() -> None:
    starts = datetime.fromtimestamp(MONDAY + 5 * HOUR, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    plan = TrainingPlanSpec("p5-june", P5, 2, starts, 24)
    state = QueueState(
        now_s=MONDAY,
        shares=(QuotaShareSpec("llm", {P5: 2}, SharingStrategy.RESERVE),),
        waiting=(replace(job("w", "llm", hint_s=HOUR), demand={P5: 2}),),
        plans=(plan,),
    )
    result = forecast(state, samples=20).jobs["w"]
    assert result.p50_s == pytest.approx(5 * HOUR, abs=60)


@pytest.mark.parametrize(
    ("share", "demand", "priority", "reason"),
    [
        ("a", {P5: 1}, 0, "has no capacity for ml.p5.48xlarge"),
        ("a", {GPU: 3}, 0, "more than quota share a can ever use (2, borrowing included)"),
        ("a", {GPU: 1}, 60, "above team a's cap of 50"),
        ("nope", {GPU: 1}, 0, "no quota share 'nope'"),
    ],
)
def test_what_if_never_says_why(
    share: str, demand: dict[str, int], priority: int, reason: str
) -> None:
    specs = (
        QuotaShareSpec("a", {GPU: 1}, SharingStrategy.LEND_AND_BORROW, borrow_limit=-1),
        QuotaShareSpec("b", {GPU: 1}, SharingStrategy.LEND),
    )
    state = QueueState(now_s=MONDAY, shares=specs, priority_caps={"a": 50})
    answer = what_if(state, replace(job("x", share, priority=priority), demand=demand))
    assert answer.outcome == "never"
    assert reason in answer.reason
    assert answer.as_json()["startsInS"] is None


def test_what_if_never_when_the_plan_of_its_type_has_ended() -> None:
    plan = TrainingPlanSpec("old", P5, 2, "2023-12-01T00:00:00Z", 24)
    state = QueueState(
        now_s=MONDAY,
        shares=(QuotaShareSpec("llm", {P5: 2}, SharingStrategy.RESERVE),),
        plans=(plan,),
        service_environment={P5: 0},
    )
    answer = what_if(state, replace(job("x", "llm"), demand={P5: 1}))
    assert (answer.outcome, "training plan old" in answer.reason) == ("never", True)


def test_run_times_come_from_the_hint_then_similar_runs_then_the_queue() -> None:
    runs = [PastRun("a", f"train-{i}", GPU, 1, 600.0 + i) for i in range(MIN_RUNS)]
    runs += [PastRun("b", f"other-{i}", GPU, 1, 60.0) for i in range(MIN_RUNS)]
    model = RunTimeModel(runs)
    assert model.source(job("x", "a", hint_s=5.0)).kind == "hint"
    similar = model.source(job("train-99", "a"))
    assert (similar.kind, min(similar.runs)) == ("history", 600.0)
    assert model.source(job("new", "c")).kind == "queue-history"
    assert RunTimeModel([]).source(job("new", "c")).kind == "max-runtime"
    assert name_stem("train-0042") == "train"


def test_a_drawn_run_never_passes_max_runtime() -> None:
    sampler = RunTimeModel([]).sampler(job("x", "a", max_runtime_s=100.0, hint_s=5000.0), 0.0)
    rng = random.Random(0)
    assert max(sampler.draw(rng) for _ in range(200)) <= 100.0


def test_a_running_job_near_its_share_s_longest_runs_is_not_drawn_to_end_at_once() -> None:
    """Past runs of an hour; a job that has run 58 minutes is drawn among them, and the
    kernel's jitter is drawn on the condition that the run outlasts what has run: its
    remainder is minutes, not the second a jitter below 58 minutes would leave."""
    history = [PastRun("a", f"t-{n}", GPU, 1, HOUR) for n in range(MIN_RUNS)]
    running = job("x", "a", started_s=MONDAY - 58 * 60)
    sampler = RunTimeModel(history).sampler(running, MONDAY)
    rng = random.Random(3)
    left = sorted(sampler.draw(rng) for _ in range(1000))
    assert sum(d <= 1.0 for d in left) < 10  # a jitter below 58 min left 1 s in a third
    assert 2 * 60 < left[500] < 12 * 60


def test_draws_from_a_few_widely_spread_runs_reach_past_them_and_tight_runs_stay_tight() -> None:
    """Eight past runs of a team whose run times vary widely: the draws go beyond the longest
    and below the shortest (a kernel as wide as the runs' spread), not just among the eight;
    eight runs of nearly the same length stay close to it (the jitter's floor)."""
    rng = random.Random(1)
    wide = [rng.lognormvariate(math.log(HOUR), 0.8) for _ in range(8)]
    tight = [HOUR * rng.uniform(0.99, 1.01) for _ in range(8)]

    def draws(runs: list[float]) -> list[float]:
        history = [PastRun("a", f"t-{n}", GPU, 1, r) for n, r in enumerate(runs)]
        sampler = RunTimeModel(history).sampler(job("x", "a", max_runtime_s=100 * HOUR), 0.0)
        return [sampler.draw(rng) for _ in range(2000)]

    spread = draws(wide)
    beyond = sum(d > max(wide) for d in spread) + sum(d < min(wide) for d in spread)
    assert beyond > 0.1 * len(spread)
    assert kernel_width(wide) > 0.3 and kernel_width(tight) == RUN_JITTER
    assert all(0.6 * HOUR < d < 1.6 * HOUR for d in draws(tight))


def test_a_bad_hint_is_refused_when_strict_and_ignored_otherwise() -> None:
    assert runtime_hint({RUNTIME_HINT_TAG: "5400"}) == 5400.0
    assert runtime_hint({RUNTIME_HINT_TAG: "soon"}) is None
    with pytest.raises(QuotaConfigError, match=RUNTIME_HINT_TAG):
        runtime_hint({RUNTIME_HINT_TAG: "-3"}, strict=True)


def test_a_short_history_and_unforeseen_arrivals_are_said() -> None:
    state = QueueState(
        now_s=MONDAY,
        shares=shares(a=SharingStrategy.RESERVE),
        waiting=(job("w", "a", created_s=MONDAY),),
    )
    caveats = forecast(state, samples=12).caveats
    assert any("share a: 0 past run(s)" in c for c in caveats)
    assert any("not foreseen" in c for c in caveats)
    forced = forecast(state, samples=12, arrivals=True).caveats  # no hour of history at all:
    unseen = [c for c in forced if c.startswith("no week")]  # neither kind of day is foreseen
    assert [c.split(":")[0] for c in unseen] == [
        "no weekday hour in the history",
        "no weekend hour in the history",
    ]
    assert not any("not foreseen" in c for c in forced if c not in unseen)
    assert any("not foreseen" in c for c in forecast(state, samples=12, arrivals=False).caveats)


def test_a_kind_of_day_the_history_does_not_hold_is_said_to_be_unforeseen() -> None:
    """Three weekdays of history, now Thursday: the week's horizon holds a weekend the
    history has none of; a one-day horizon does not; a history with a weekend has one."""

    def state_with_runs_from(first_day: float, days: int, now: float) -> QueueState:
        runs = tuple(
            PastRun("a", f"t-{d}-{h}", GPU, 1, 600.0, created_s=first_day + d * 86400 + h * HOUR)
            for d in range(days)
            for h in (9, 12, 15)
        )
        waiting = (job("w", "a", created_s=now - 60),)
        return QueueState(
            now_s=now, shares=shares(a=SharingStrategy.RESERVE), waiting=waiting, history=runs
        )

    def unseen(state: QueueState, horizon_s: float) -> list[str]:
        caveats = forecast(state, samples=12, horizon_s=horizon_s).caveats
        return [c for c in caveats if c.startswith("no whole")]

    thursday = MONDAY + 3 * 86400
    weekdays_only = state_with_runs_from(MONDAY, 3, thursday)
    assert unseen(weekdays_only, 7 * 86400) == [
        "no whole weekend day in the history: jobs submitted on weekend days within the "
        "horizon are not foreseen (the arrival model replays past days of the same kind)"
    ]
    assert unseen(weekdays_only, 86400) == []
    with_a_weekend = state_with_runs_from(MONDAY - 3 * 86400, 6, thursday)
    assert unseen(with_a_weekend, 7 * 86400) == []
    hourly = ArrivalModel.from_state(weekdays_only, method="poisson")  # the hourly rates
    caveats = forecast(weekdays_only, samples=12, arrivals=hourly).caveats
    assert [c for c in caveats if c.startswith("no weekend hour in the history")] == [
        "no weekend hour in the history: jobs submitted on weekend days within the horizon are "
        "not foreseen (the arrival model's hourly rates are per kind of day)"
    ]


def test_arrivals_of_a_higher_priority_delay_a_waiting_job() -> None:
    runs = tuple(PastRun("a", "hi", GPU, 1, HOUR, priority=9) for _ in range(MIN_RUNS))
    state = QueueState(
        now_s=MONDAY,
        shares=shares(a=SharingStrategy.RESERVE),
        running=(job("r", "a", started_s=MONDAY, hint_s=HOUR),),
        waiting=(job("w", "a", hint_s=HOUR),),
        history=runs,
    )
    busy = ArrivalModel.steady({"a": 2.0}, {"a": [(GPU, 1, HOUR, 9)]})
    calm = forecast(state, samples=40).jobs["w"]
    crowded = forecast(state, samples=40, arrivals=busy).jobs["w"]
    assert calm.p50_s is not None and (crowded.p50_s is None or crowded.p50_s > 2 * calm.p50_s)


def test_the_arrival_model_counts_jobs_per_hour_of_weekdays_and_weekends() -> None:
    assert (slot_of(MONDAY), slot_of(MONDAY + 5 * 86400 + 3 * HOUR)) == (0, 27)
    runs = tuple(
        PastRun("a", "x", GPU, 1, 60.0, created_s=MONDAY + d * 86400 + 9 * HOUR + 60)
        for d in range(5)
    )
    state = QueueState(
        now_s=MONDAY + 7 * 86400, shares=shares(a=SharingStrategy.RESERVE), history=runs
    )
    model = ArrivalModel.from_state(state, since_s=MONDAY, method="poisson")
    assert model.rates["a"][9] == pytest.approx(1.0)  # one a weekday at 09:00
    assert sum(model.rates["a"]) == pytest.approx(1.0)


@dataclass(frozen=True)
class Item:
    submit_time_s: float
    share: str
    instance_type: str
    instance_count: int
    duration_s: float
    priority: int


def test_the_backtest_compares_each_forecast_with_the_actual_start() -> None:
    queue = JobQueueSpec(shares=shares(a=SharingStrategy.RESERVE))
    items = [Item(i * 600.0, "a", GPU, 1, 1800.0, 0) for i in range(12)]
    result = backtest(queue, items, warmup_s=3000.0, samples=20)
    assert len(result.predictions) == 7  # the jobs submitted at 3000 s and later
    waits = [p.actual_s for p in result.predictions]
    assert waits == sorted(waits) and waits[0] > 0  # a queue that only grows
    overall = result.overall
    assert 0.0 <= overall.interval <= overall.below_p90 <= 1.0
    assert result.per_share["a"].jobs == 7


def test_coverage_counts_starts_inside_the_interval() -> None:
    found = [
        Prediction("a", 10, 20, 30, 5, 25),
        Prediction("a", 10, 20, 30, 5, 5),
        Prediction("a", 10, 20, 30, 5, 40),
        Prediction("a", 0, 0, 0, 0, 0),
    ]
    coverage = Coverage.of(found)
    assert (coverage.interval, coverage.below_p90) == (0.5, 0.75)
    assert (coverage.median_error_s, coverage.naive_median_error_s) == (10.0, 10.0)
    assert math.isnan(Coverage.of([]).interval)


@pytest.mark.parametrize("samples", [12, 20, 60, 200])
def test_p90_and_p10_bound_a_new_start_as_often_as_they_say(samples: int) -> None:
    """Over many forecasts of a perfectly known distribution, the next actual start falls at
    or before p90 about 90 % of the time and inside p10-p90 about 80 %, at the few samples the
    commands take at a long queue too (nearest-rank quantiles of 12 samples: 85 % and 69 %)."""
    rng = random.Random(samples)
    below = inside = 0
    trials = 6000
    for _ in range(trials):
        starts = sorted(rng.expovariate(1 / 600) for _ in range(samples))
        actual = rng.expovariate(1 / 600)
        p10, p90 = prediction_bound(starts, 0.1), prediction_bound(starts, 0.9)
        assert p10 is not None and p90 is not None
        below += actual <= p90
        inside += p10 <= actual <= p90
    assert 0.885 <= below / trials <= 0.94
    assert 0.77 <= inside / trials <= 0.87


def test_the_coverage_interval_resamples_whole_workloads() -> None:
    """Forecasts of one workload move together: the interval over workloads is wide when the
    workloads disagree, narrow when they agree, and not given for a single workload."""
    inside, late = Prediction("a", 10, 20, 30, 5, 25), Prediction("a", 10, 20, 30, 5, 40)
    agree = seed_interval([[inside] * 9 + [late]] * 6)
    assert agree == {"interval": (0.9, 0.9), "below_p90": (0.9, 0.9)}
    split = seed_interval([[inside] * 10] * 3 + [[late] * 10] * 3)
    low, high = split["interval"]
    assert (
        low < 0.3 and high > 0.7 and split == seed_interval([[inside] * 10] * 3 + [[late] * 10] * 3)
    )
    assert seed_interval([[inside, late]]) == {}


def test_a_disabled_share_runs_its_queued_jobs_and_refuses_a_new_one() -> None:
    specs = (QuotaShareSpec("a", {GPU: 1}, SharingStrategy.RESERVE, state=ShareState.DISABLED),)
    state = QueueState(
        now_s=MONDAY,
        shares=specs,
        running=(job("r", "a", started_s=MONDAY, hint_s=HOUR),),
        waiting=(job("w", "a", hint_s=HOUR),),
    )
    answer = what_if(state, job("x", "a"))
    assert answer.forecast.jobs["w"].p50_s == pytest.approx(HOUR, rel=0.5)
    assert (answer.outcome, "DISABLED" in answer.reason) == ("never", True)


def test_a_queued_job_above_the_cap_was_let_in_and_is_forecast() -> None:
    state = QueueState(
        now_s=MONDAY,
        shares=shares(a=SharingStrategy.RESERVE),
        waiting=(job("w", "a", priority=90, hint_s=HOUR),),
        priority_caps={"a": 50},
    )
    assert forecast(state, samples=12).jobs["w"].p90_s == 0.0
    assert what_if(state, job("x", "a", priority=90)).outcome == "never"


# --- RUNNABLE time-limit actions run in the samples (issue 44, gaps) ------------------------

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


def test_watching_a_few_jobs_gives_them_the_whole_forecasts_answer() -> None:
    """Share heads alone (as `quota status` asks) or the what-if job alone: the same starts,
    preemptions and reasons as in the forecast of the whole queue, and only those jobs."""
    specs = (
        QuotaShareSpec("a", {GPU: 2}, SharingStrategy.LEND_AND_BORROW, borrow_limit=100),
        QuotaShareSpec("b", {GPU: 2}, SharingStrategy.LEND, in_share_preemption=True),
        QuotaShareSpec("c", {GPU: 1}, SharingStrategy.RESERVE),
    )
    rng = random.Random(5)
    running = tuple(
        job(f"r{n}", share, started_s=MONDAY - rng.uniform(0, HOUR), hint_s=rng.uniform(600, 7200))
        for n, share in enumerate("aabc")
    )
    waiting = tuple(
        job(
            f"w{n}",
            "abc"[n % 3],
            priority=rng.randint(0, 9),
            created_s=MONDAY - 600 + n,
            hint_s=rng.uniform(600, 7200),
        )
        for n in range(12)
    )
    state = QueueState(now_s=MONDAY, shares=specs, running=running, waiting=waiting)
    whole = forecast(state, samples=40, seed=2, arrivals=False)
    heads = forecast(state, samples=40, seed=2, arrivals=False, watch={"w0", "w1", "w2"})
    assert set(heads.jobs) == {"w0", "w1", "w2"}
    assert all(heads.jobs[j] == whole.jobs[j] for j in heads.jobs)
    probe = job("x", "b", priority=9, hint_s=HOUR)
    alone = what_if(state, probe, samples=40, seed=2, arrivals=False, watch=())
    everything = what_if(state, probe, samples=40, seed=2, arrivals=False)
    assert set(alone.forecast.jobs) == {"x"} and len(everything.forecast.jobs) == 13
    assert (alone.outcome, alone.job) == (everything.outcome, everything.job)
