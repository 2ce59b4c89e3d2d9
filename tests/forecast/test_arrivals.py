"""The arrival model: past whole days replayed (the default where the history allows), the
auto default and its caveats, the sample count, and the backtest's live-like history."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import pytest

from quota_constructs.forecast import ArrivalModel, LiveJob, PastRun, QueueState, forecast
from quota_constructs.forecast.arrivals import MIN_DAYS, sample_for_priorities
from quota_constructs.forecast.backtest import backtest, queue_state
from quota_constructs.forecast.engine import MIN_SAMPLES
from quota_constructs.forecast.runtimes import MIN_RUNS
from quota_constructs.model import JobQueueSpec, QuotaShareSpec, SharingStrategy
from quota_constructs.scheduling import JobRequest, Scheduler

GPU = "ml.g5.xlarge"
MONDAY = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
HOUR = 3600.0
DAY = 86400.0
SHARES = (QuotaShareSpec("a", {GPU: 1}, SharingStrategy.RESERVE),)


def burst(day_s: float, at_h: float, n: int, priority: int | None = 7) -> tuple[PastRun, ...]:
    """``n`` finished runs of share a submitted a minute apart from ``at_h`` on ``day_s``."""
    at = day_s + at_h * HOUR
    return tuple(
        PastRun("a", "x", GPU, 1, 1800.0, priority, created_s=at + 60 * i) for i in range(n)
    )


def day_state(now_s: float, history: tuple[PastRun, ...], **fields: object) -> QueueState:
    return replace(QueueState(now_s=now_s, shares=SHARES, history=history), **fields)  # type: ignore[arg-type]


def test_a_past_weekday_is_replayed_with_its_burst() -> None:
    state = day_state(MONDAY + DAY, burst(MONDAY, 10, 5))  # Monday whole, now Tuesday 00:00
    model = replace(ArrivalModel.from_state(state, since_s=MONDAY), spread_h=0)
    found = model.draw(random.Random(1), state.now_s, DAY)
    assert [round(at / 60) for at, _, _ in found] == [600, 601, 602, 603, 604]
    assert {(job.share, job.priority, dict(job.demand)[GPU]) for _, job, _ in found} == {
        ("a", 7, 1)
    }


def test_a_replayed_jobs_run_time_is_jittered_as_widely_as_its_shares_runs_vary() -> None:
    """A share whose past runs last from minutes to hours: its replayed copies vary beyond
    them (the run-time draws' kernel); a share whose runs all last 30 min stays near 30 min."""
    rng = random.Random(3)
    wide = tuple(replace(run, run_s=rng.lognormvariate(7.5, 0.9)) for run in burst(MONDAY, 10, 10))
    runs = [run.run_s for run in wide]
    spread = replace(
        ArrivalModel.from_state(day_state(MONDAY + DAY, wide), since_s=MONDAY), spread_h=0
    )
    copies = [
        run
        for seed in range(40)
        for _, _, run in spread.draw(random.Random(seed), MONDAY + DAY, DAY)
    ]
    assert sum(c > max(runs) or c < min(runs) for c in copies) > 0.1 * len(copies)
    tight = replace(
        ArrivalModel.from_state(day_state(MONDAY + DAY, burst(MONDAY, 10, 10)), since_s=MONDAY),
        spread_h=0,
    )
    same = [
        run
        for seed in range(40)
        for _, _, run in tight.draw(random.Random(seed), MONDAY + DAY, DAY)
    ]
    assert all(0.6 * 1800 < c < 1.6 * 1800 for c in same)


def test_a_spread_moves_a_replayed_burst_by_whole_hours_at_most() -> None:
    state = day_state(MONDAY + DAY, burst(MONDAY, 10, 5))
    model = ArrivalModel.from_state(state, since_s=MONDAY)
    starts = {
        round(at / 60) % 60
        for seed in range(20)
        for at, _, _ in model.draw(random.Random(seed), state.now_s, DAY)
    }
    assert starts <= {0, 1, 2, 3, 4}  # a minute apart, moved by whole hours only


def test_weekend_days_replay_only_what_weekends_submitted() -> None:
    saturday = MONDAY + 5 * DAY
    state = day_state(MONDAY + 7 * DAY, burst(saturday, 12, 5) + burst(saturday + DAY, 12, 5))
    model = replace(ArrivalModel.from_state(state, since_s=MONDAY), spread_h=0)
    found = model.draw(random.Random(2), state.now_s, 7 * DAY)
    assert [round(at / DAY, 1) for at, _, _ in found][::5] == [5.5, 6.5]  # Saturday, Sunday noon


class CountingRandom(random.Random):
    """A generator that counts its uniform draws."""

    calls = 0

    def random(self) -> float:
        self.calls += 1
        return super().random()


def test_arrivals_are_drawn_only_as_far_as_they_are_read() -> None:
    """A forecast's sample stops once its jobs are placed: the arrivals of the rest of the
    horizon are not drawn (one draw per share and hour read so far), and reading them all gives
    the same arrivals, in time order, as drawing them at once."""
    days = sum((burst(MONDAY + d * DAY, h + 0.5, 1) for d in range(7) for h in range(24)), ())
    state = day_state(MONDAY + 7 * DAY, days)
    model = ArrivalModel.from_state(state, since_s=MONDAY)
    rng = CountingRandom(5)
    first = next(model.stream(rng, state.now_s, 7 * DAY))
    assert first[0] < 2 * HOUR and rng.calls < 10  # an hour or two read, not 168
    whole = model.draw(random.Random(5), state.now_s, 7 * DAY)
    assert [at for at, _, _ in whole] == sorted(at for at, _, _ in whole)
    assert len(whole) > 100 and whole[0][0] == first[0]
    assert list(model.stream(random.Random(5), state.now_s, 7 * DAY)) == whole


def test_the_shares_foreseen_nothing_for_one_reason_share_one_note() -> None:
    """A new queue of many shares: one note names them all, not one note per share."""
    waiting = tuple(
        LiveJob(f"w{share}", "w", share, {GPU: 1}, created_s=MONDAY + 2 * HOUR)
        for share in ("b", "a")
    )
    state = day_state(MONDAY + 3 * HOUR, burst(MONDAY, 1, MIN_RUNS), waiting=waiting)
    shares = (*state.shares, replace(state.shares[0], name="b"))
    notes = [
        c
        for c in forecast(replace(state, shares=shares), samples=12).caveats
        if "not foreseen" in c
    ]
    assert notes == [
        "shares a, b: jobs submitted after now are not foreseen (no arrival model: the history "
        f"spans fewer than {MIN_DAYS} whole UTC day(s) (2.0 h))"
    ]


def test_auto_foresees_no_arrivals_on_a_short_history_and_names_the_share() -> None:
    state = day_state(
        MONDAY + 3 * HOUR,
        burst(MONDAY, 1, MIN_RUNS),
        waiting=(LiveJob("w", "w", "a", {GPU: 1}, created_s=MONDAY + 2 * HOUR),),
    )
    caveats = forecast(state, samples=12).caveats
    assert any(
        c.startswith("share a: jobs submitted after now are not foreseen")
        and f"fewer than {MIN_DAYS} whole UTC day" in c
        for c in caveats
    )
    forced = forecast(state, samples=12, arrivals=True).caveats  # an hourly rate instead
    assert not any(c.startswith("share a") and "not foreseen" in c for c in forced)
    assert any(c.startswith("no weekend hour in the history") for c in forced)  # Monday only


def test_auto_replays_past_days_where_the_history_holds_one() -> None:
    running = LiveJob("r", "r", "a", {GPU: 1}, 9, MONDAY + DAY, started_s=MONDAY + DAY)
    waiting = LiveJob("w", "w", "a", {GPU: 1}, 1, MONDAY + DAY, hint_s=HOUR)
    history = burst(MONDAY, 0, 20, priority=9)  # a busy Monday of higher priorities
    state = day_state(MONDAY + DAY, history, running=(running,), waiting=(waiting,))
    auto, off = forecast(state, samples=20), forecast(state, samples=20, arrivals=False)
    assert not any(c.startswith("share a") and "not foreseen" in c for c in auto.caveats)
    assert any(c.startswith("no whole weekend day") for c in auto.caveats)  # Monday only
    assert auto.jobs["w"].p50_s > off.jobs["w"].p50_s  # type: ignore[operator]


def test_a_share_with_too_few_finished_runs_has_no_day_model() -> None:
    state = day_state(
        MONDAY + 2 * DAY,
        burst(MONDAY, 10, MIN_RUNS - 1),
        waiting=(LiveJob("w", "w", "a", {GPU: 1}, created_s=MONDAY + DAY),),
    )
    model = ArrivalModel.from_state(state, since_s=MONDAY, forced=False)
    assert "a" not in model.shares and "finished run(s)" in model.missing["a"]


def test_expected_arrivals_lower_the_samples() -> None:
    state = day_state(MONDAY, (), waiting=(LiveJob("w", "w", "a", {GPU: 1}, hint_s=HOUR),))
    busy = ArrivalModel.steady({"a": 100.0}, {"a": [(GPU, 1, HOUR, 0)]})
    assert busy.expected(DAY) == pytest.approx(2400.0)
    assert forecast(state, arrivals=busy).samples == MIN_SAMPLES
    assert forecast(state, arrivals=False).samples > MIN_SAMPLES


def test_rejects_an_unknown_arrival_method() -> None:
    with pytest.raises(ValueError, match="'hourly' is not one of days, poisson"):
        ArrivalModel.from_state(day_state(MONDAY, ()), method="hourly")


def test_rejects_an_unknown_backtest_arrivals_mode() -> None:
    queue = JobQueueSpec(shares=SHARES)
    with pytest.raises(ValueError, match="'yes' is not one of auto, on, off"):
        backtest(queue, [], arrivals="yes")


def test_the_backtest_history_shows_the_priorities_a_live_forecast_reads() -> None:
    """Of 7 finished jobs of a share, the priorities of 5 spread over them (first and last
    included) are read, as a live forecast describes them; none with 0, all when known."""
    queue = JobQueueSpec(shares=SHARES)
    sched = Scheduler.for_queue(queue, queue_name="q")
    for n in range(7):
        request = JobRequest(f"x{n}", "a", {GPU: 1}, 60.0, priority=n, job_id=f"j{n}")
        sched.submit(request, now=float(n))
    sched.run_until_idle()
    seen = [r.priority for r in queue_state(sched, queue, 9000.0).history]
    assert seen == [0, None, 2, 3, 4, None, 6]
    hidden = queue_state(sched, queue, 9000.0, priority_sample=0)
    assert [r.priority for r in hidden.history] == [None] * 7
    known = queue_state(sched, queue, 9000.0, known_priorities=True)
    assert [r.priority for r in known.history] == list(range(7))


def test_the_priority_sample_spreads_over_each_shares_jobs_in_creation_order() -> None:
    shares = ["a", "b", "a", "a", "b", "a"]
    created = [5.0, 1.0, 1.0, 3.0, 0.0, 9.0]
    assert sample_for_priorities(shares, created, 2) == [1, 2, 4, 5]  # a: first 1.0, last 9.0
    assert sample_for_priorities(shares, created, 3) == [0, 1, 2, 4, 5]  # a: 1.0, 5.0, 9.0
    assert sample_for_priorities(shares, created, 0) == []


def test_past_jobs_copy_the_finished_jobs_priorities_not_the_waiting_ones() -> None:
    """The jobs waiting now are the share's lowest priorities (the higher went first): a past
    job whose priority is not known copies one of the share's finished jobs read, and only
    with none read one of the jobs waiting or running."""
    waiting = (LiveJob("w", "w", "a", {GPU: 1}, priority=1),)
    read = burst(MONDAY, 10, 2, priority=9) + burst(MONDAY, 12, 4, priority=None)
    state = day_state(MONDAY + DAY, read, waiting=waiting)
    model = ArrivalModel.from_state(state, since_s=MONDAY)
    assert {p for _, _, _, p in model.examples["a"]} == {9}
    unread = day_state(MONDAY + DAY, burst(MONDAY, 12, 6, priority=None), waiting=waiting)
    assert {p for _, _, _, p in ArrivalModel.from_state(unread).examples["a"]} == {1}


@dataclass(frozen=True)
class Item:
    """A workload item as the advisor's generator makes them."""

    submit_time_s: float
    share: str
    instance_type: str
    instance_count: int
    duration_s: float
    priority: int


def test_the_oracle_foresees_the_later_job_that_overtakes() -> None:
    queue = JobQueueSpec(shares=SHARES)
    warm = [Item(i * 900.0, "a", GPU, 1, 600.0, 0) for i in range(6)]
    late = [Item(6000.0, "a", GPU, 1, 600.0, 0), Item(6100.0, "a", GPU, 1, 600.0, 0)]
    jump = Item(6200.0, "a", GPU, 1, 600.0, 9)  # overtakes the job submitted at 6100 s
    waits = {
        mode: backtest(queue, [*warm, *late, jump], warmup_s=6050.0, arrivals=mode, samples=20)
        for mode in ("off", "oracle")
    }
    off, oracle = (waits[m].predictions[0] for m in ("off", "oracle"))
    assert off.actual_s == oracle.actual_s == pytest.approx(1100.0, abs=10.0)  # 500 s, then 600
    assert off.p90_s < off.actual_s <= oracle.p90_s
