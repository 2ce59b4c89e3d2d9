"""Calibration backtest: forecast each job at its submit, then compare with when it started.

A workload (jobs with a submit time, share, instances, run time and priority: the advisor's
generated team workloads, or a recorded history) is run through the scheduling core the
emulator runs, in virtual time. Just before each selected job is submitted, the queue's state
is read as the live API would show it (running jobs with their start times, waiting jobs, the
finished jobs' run times; never the future) and the what-if of that job is forecast. After the
run, its actual start (first placement) is compared with:

- the forecast's 10th-90th percentile interval (nominal 80 %) and its 90th percentile
  (nominal 90 % of starts at or before it);
- the median absolute error of the forecast's median, next to the naive forecast's: queue
  position x the share's mean past run time, the position being the share's jobs waiting ahead
  of it plus one when its share has no idle instance for it now.

Only jobs submitted after ``warmup_s`` are forecast (the history has to exist first).
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from quota_constructs.forecast.arrivals import (
    PRIORITY_SAMPLE,
    Arrival,
    ArrivalModel,
    sample_for_priorities,
)
from quota_constructs.forecast.calibration import (
    BANDS_FROM_S,
    OFFSET_S,
    Calibration,
    CalibrationError,
    Judged,
    band_label,
    band_of,
    fit_calibration,
)
from quota_constructs.forecast.engine import DEFAULT_HORIZON_S, what_if
from quota_constructs.forecast.inputs import LiveJob, PastRun, QueueState
from quota_constructs.model import SIMULATION_START, JobQueueSpec, JobStatus
from quota_constructs.scheduling import Job, JobRequest, Scheduler

ARRIVALS = ("auto", "on", "off", "oracle")
"""How the backtest's forecasts foresee arrivals (``auto``: as the commands by default;
``oracle``: the workload's actual later submissions, with their run times and priorities, a
measuring stick that separates arrival error from run-time error)."""
EPOCH_S = SIMULATION_START.timestamp()
"""Epoch seconds of workload time 0 (:data:`~quota_constructs.model.SIMULATION_START`, a Monday,
the simulator's)."""


class WorkloadItem(Protocol):
    """What the backtest reads of a job to replay (the advisor's ``WorkloadJob`` is one)."""

    @property
    def submit_time_s(self) -> float: ...
    @property
    def share(self) -> str: ...
    @property
    def instance_type(self) -> str: ...
    @property
    def instance_count(self) -> int: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def priority(self) -> int: ...


@dataclass(frozen=True)
class Prediction:
    """One job's forecast at its submit and its actual wait (seconds; ``inf``: never started);
    ``submitted_s``: when, in seconds from the workload's time 0."""

    share: str
    p10_s: float
    p50_s: float
    p90_s: float
    naive_s: float
    actual_s: float
    submitted_s: float = 0.0


@dataclass(frozen=True)
class Coverage:
    """Calibration of a group of predictions."""

    jobs: int
    interval: float
    """Share of actual starts inside [p10, p90] (nominal 0.8)."""
    below_p90: float
    """Share of actual starts at or before p90 (nominal 0.9)."""
    median_error_s: float
    naive_median_error_s: float

    @classmethod
    def of(cls, predictions: Sequence[Prediction]) -> Coverage:
        n = len(predictions)
        if not n:
            return cls(0, math.nan, math.nan, math.nan, math.nan)
        return cls(
            jobs=n,
            interval=sum(p.p10_s <= p.actual_s <= p.p90_s for p in predictions) / n,
            below_p90=sum(p.actual_s <= p.p90_s for p in predictions) / n,
            median_error_s=statistics.median(_error(p.p50_s, p.actual_s) for p in predictions),
            naive_median_error_s=statistics.median(
                _error(p.naive_s, p.actual_s) for p in predictions
            ),
        )

    def as_json(self) -> dict[str, float]:
        return {
            "jobs": self.jobs,
            "intervalCoverage": round(self.interval, 3),
            "p90Coverage": round(self.below_p90, 3),
            "medianErrorS": round(self.median_error_s, 1),
            "naiveMedianErrorS": round(self.naive_median_error_s, 1),
        }


def waited(predictions: Sequence[Prediction]) -> list[Prediction]:
    """The predictions of jobs that waited or were forecast to (``overall, waits``: most jobs
    start at once, and every forecast gets those right)."""
    return [p for p in predictions if p.p90_s > 0 or p.actual_s > 0]


BOOTSTRAP_ROUNDS = 2000
"""Resamples behind :func:`seed_interval` (its bounds move by about 0.5 point between seeds)."""


def seed_interval(
    groups: Sequence[Sequence[Prediction]], *, level: float = 0.95, seed: int = 0
) -> dict[str, tuple[float, float]]:
    """The ``level`` bootstrap interval of the two coverages (``interval``, ``below_p90``) over
    ``groups`` of predictions, one group per workload (seed): workloads are resampled whole, as
    the forecasts of one workload share its backlog and are not independent of each other (a
    few long runs make every forecast of a busy day late together). Empty with fewer than two
    groups."""
    groups = [g for g in groups if g]
    if len(groups) < 2:
        return {}
    rng = random.Random(seed)
    counts = [
        (
            len(g),
            sum(p.p10_s <= p.actual_s <= p.p90_s for p in g),
            sum(p.actual_s <= p.p90_s for p in g),
        )
        for g in groups
    ]
    inner: list[float] = []
    below: list[float] = []
    for _ in range(BOOTSTRAP_ROUNDS):
        drawn = [counts[int(rng.random() * len(counts))] for _ in counts]
        jobs = sum(c[0] for c in drawn)
        inner.append(sum(c[1] for c in drawn) / jobs)
        below.append(sum(c[2] for c in drawn) / jobs)
    tail = (1.0 - level) / 2.0
    return {
        name: (_quantile(sorted(values), tail), _quantile(sorted(values), 1.0 - tail))
        for name, values in (("interval", inner), ("below_p90", below))
    }


@dataclass(frozen=True)
class HeldOut:
    """A calibration judged on periods it was not fitted on (:func:`leave_one_out`): the
    waited jobs' coverage, pooled over the periods, and its bootstrap interval over them."""

    waits: Coverage
    periods: int
    spread: Mapping[str, tuple[float, float]]
    """:func:`seed_interval` of the judged periods (``interval``, ``below_p90``; empty when
    fewer than two had a job that waited)."""
    bands: Mapping[int, Coverage] = field(default_factory=dict)
    """The coverage of each band of the forecast median (index into
    :data:`~.calibration.BANDS_FROM_S`) that held a waited job: whether short and long
    forecasts are each covered as stated, not only all of them together."""
    judged_periods: tuple[tuple[Prediction, ...], ...] = field(
        default=(), compare=False, repr=False
    )
    """Each period's waited jobs as judged (:func:`held_out`), for :meth:`of_periods`."""

    @classmethod
    def of(cls, judged: Sequence[Sequence[Prediction]]) -> HeldOut:
        """The coverage of ``judged`` (:func:`held_out`'s groups)."""
        pooled = [p for group in judged for p in group]
        banded: dict[int, list[Prediction]] = {}
        for p in pooled:
            banded.setdefault(band_of(p.p50_s), []).append(p)
        bands = {band: Coverage.of(banded[band]) for band in sorted(banded)}
        periods = tuple(tuple(group) for group in judged)
        return cls(Coverage.of(pooled), len(judged), seed_interval(judged), bands, periods)

    def of_periods(self, start: int, stop: int) -> HeldOut:
        """The judgement of periods ``start`` to ``stop`` (0-based, ``stop`` excluded) alone:
        one organisation's, of several whose periods were fitted together."""
        if not 0 <= start < stop <= self.periods:
            raise ValueError(
                f"periods {start}-{stop}: not within the {self.periods} judged; fix: "
                f"0 <= start < stop <= {self.periods}"
            )
        return HeldOut.of(self.judged_periods[start:stop])

    def as_json(self) -> dict[str, object]:
        return {
            **self.waits.as_json(),
            "periods": self.periods,
            "intervalCoverage95": self._range("interval"),
            "p90Coverage95": self._range("below_p90"),
            "bands": [
                {"fromS": BANDS_FROM_S[band], **_coverages(found)}
                for band, found in self.bands.items()
            ],
        }

    def judged(self) -> Judged:
        """What a calibration file keeps of it (shown with each forecast)."""
        return Judged(self.waits.interval, self.waits.below_p90, self.periods)

    def _range(self, key: str) -> list[float] | None:
        found = self.spread.get(key)
        return None if found is None else [round(v, 3) for v in found]

    def describe(self) -> str:
        """One line: the coverages and their interval over the periods."""

        def over(key: str) -> str:
            found = self.spread.get(key)
            return "" if found is None else f"; {found[0]:.1%}-{found[1]:.1%} over the periods"

        bands = ", ".join(
            f"{band_label(BANDS_FROM_S, band)} {found.interval:.1%} / {found.below_p90:.1%} "
            f"({found.jobs} jobs)"
            for band, found in self.bands.items()
        )
        return (
            f"judged on each of the {self.periods} periods with a fit on the others: "
            f"{self.waits.interval:.1%} of the waited jobs' starts in p10-p90 (80 % meant"
            f"{over('interval')}), {self.waits.below_p90:.1%} at or before p90 (90 % meant"
            f"{over('below_p90')}), {self.waits.jobs} jobs"
            f"{f'; by the forecast median: {bands}' if bands else ''}"
        )


def _coverages(found: Coverage) -> dict[str, object]:
    return {
        "jobs": found.jobs,
        "intervalCoverage": round(found.interval, 3),
        "p90Coverage": round(found.below_p90, 3),
    }


def leave_one_out(
    groups: Sequence[Sequence[Prediction]],
    *,
    offset_s: float = OFFSET_S,
    horizon_s: float = DEFAULT_HORIZON_S,
) -> HeldOut:
    """How a calibration fitted on such periods covers one it was not fitted on
    (:func:`held_out`, pooled). Fitted and judged on the same forecasts, a calibration covers
    what it states by construction; this is what the queue's next period can expect."""
    return HeldOut.of(held_out(groups, offset_s=offset_s, horizon_s=horizon_s))


def held_out(
    groups: Sequence[Sequence[Prediction]],
    *,
    offset_s: float = OFFSET_S,
    horizon_s: float = DEFAULT_HORIZON_S,
) -> list[list[Prediction]]:
    """Per period (``groups``: the predictions of one period of the history, or of one
    workload, as sampled), its waited jobs' predictions calibrated with a fit on the other
    periods. Raises :class:`CalibrationError` with fewer than two periods, or when the others
    of one are too few to fit."""
    if len(groups) < 2:
        raise CalibrationError(
            f"periods: {len(groups)} backtested; judging a calibration on a period it was not "
            "fitted on needs at least 2; fix: backtest a longer history (it is cut into "
            "--period-days periods), more --workload files or two or more --seed"
        )
    judged: list[list[Prediction]] = []
    for index, group in enumerate(groups):
        others = [p for other, g in enumerate(groups) if other != index for p in g]
        try:
            fit = fit_calibration(others, offset_s=offset_s)
        except CalibrationError as error:
            raise CalibrationError(f"the fit without period {index + 1}: {error}") from error
        judged.append(waited([calibrated(p, fit, horizon_s) for p in group]))
    return judged


PERIOD_DAYS = 7
"""Days of the periods a calibration is judged on by default (``quota forecast calibrate
--period-days``): a week holds both kinds of day."""


def by_period(workloads: Sequence[Sequence[Prediction]], period_s: float) -> list[list[Prediction]]:
    """Each workload's predictions cut into periods of ``period_s`` by their submit, in order
    (a workload as long as a period is one)."""
    periods: list[list[Prediction]] = []
    for predictions in workloads:
        cut: dict[int, list[Prediction]] = {}
        for p in predictions:
            cut.setdefault(int(p.submitted_s // period_s), []).append(p)
        periods += [cut[index] for index in sorted(cut)]
    return periods


def fit_and_judge(
    periods: Sequence[Sequence[Prediction]], *, fitted_on: str = "", shares: Sequence[str] = ()
) -> tuple[Calibration, HeldOut | str]:
    """The calibration of every period's predictions (:func:`fit_calibration`; its
    :class:`CalibrationError` raised), keeping how a fit on the others covered each
    (:func:`leave_one_out`) when the periods allow it, else why not."""
    pooled = [p for period in periods for p in period]
    calibration = fit_calibration(pooled, fitted_on=fitted_on, shares=shares)
    try:
        judged = leave_one_out(periods)
    except CalibrationError as error:
        return calibration, str(error)
    return replace(calibration, judged=judged.judged()), judged


def calibrated(prediction: Prediction, calibration: Calibration, horizon_s: float) -> Prediction:
    """``prediction`` with its bounds calibrated as a forecast's are (``inf``: beyond the
    horizon, as a forecast's ``None``)."""

    def known(value: float) -> float | None:
        return None if math.isinf(value) else value

    p10, p90 = calibration.bounds(
        known(prediction.p10_s), known(prediction.p50_s), known(prediction.p90_s), horizon_s
    )
    return replace(
        prediction,
        p10_s=math.inf if p10 is None else p10,
        p90_s=math.inf if p90 is None else p90,
    )


def _quantile(ordered: Sequence[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _error(forecast: float, actual: float) -> float:
    if math.isinf(forecast) and math.isinf(actual):
        return 0.0
    return abs(forecast - actual) if math.isfinite(forecast - actual) else DEFAULT_HORIZON_S


@dataclass(frozen=True)
class BacktestResult:
    """Every prediction, and coverage per share and overall."""

    predictions: tuple[Prediction, ...]
    per_share: Mapping[str, Coverage] = field(default_factory=dict)

    @property
    def overall(self) -> Coverage:
        return Coverage.of(self.predictions)


def backtest(
    queue: JobQueueSpec,
    jobs: Sequence[WorkloadItem],
    *,
    warmup_s: float = 86400.0,
    every: int = 1,
    samples: int = 60,
    horizon_s: float = DEFAULT_HORIZON_S,
    seed: int = 0,
    arrivals: str = "auto",
    method: str = "days",
    known_priorities: bool = False,
    calibration: Calibration | None = None,
    epoch_s: float = EPOCH_S,
    priority_sample: int = PRIORITY_SAMPLE,
) -> BacktestResult:
    """Replay ``jobs`` on ``queue`` and forecast every ``every``-th job submitted after
    ``warmup_s`` (see the module docstring). ``arrivals``: ``auto`` (the commands' default),
    ``on`` or ``off``, with the :class:`ArrivalModel`'s ``method``; ``known_priorities``: the
    finished jobs' priorities are all known (the live list does not tell them: a live forecast reads
    those of ``priority_sample`` finished jobs per share, :func:`~.arrivals.sample_for_priorities`);
    ``calibration``: the forecasts' bounds calibrated (:mod:`~.calibration`); ``epoch_s``: when the
    workload's time 0 was (epoch seconds; default :data:`EPOCH_S`, a Monday 00:00 UTC, as generated
    workloads start): the arrival model's kinds of day follow it."""
    if arrivals not in ARRIVALS:
        raise ValueError(f"arrivals {arrivals!r} is not one of {', '.join(ARRIVALS)}: use auto")
    sched = Scheduler.for_queue(queue, queue_name="backtest")
    ordered = sorted(jobs, key=lambda j: j.submit_time_s)
    asked: dict[str, tuple[str, float, tuple[float, float, float], float]] = {}
    for index, item in enumerate(ordered):
        t = item.submit_time_s
        sched.advance(t)
        request = job_request(item, index)
        job_id = request.job_id or ""
        if t >= warmup_s and index % every == 0:
            state = queue_state(
                sched,
                queue,
                t,
                known_priorities=known_priorities,
                epoch_s=epoch_s,
                priority_sample=priority_sample,
            )
            live = LiveJob(job_id, request.job_name, item.share, request.demand, item.priority)
            model: ArrivalModel | bool
            if arrivals == "oracle":
                model = OracleArrivals(actual=_future(ordered, index, t, horizon_s, epoch_s))
            elif arrivals == "off":
                model = False
            else:
                model = ArrivalModel.from_state(
                    state, epoch_s, method=method, forced=arrivals == "on"
                )
            answer = what_if(
                state,
                live,
                samples=samples,
                horizon_s=horizon_s,
                seed=seed,
                arrivals=model,
                calibration=calibration,
            )
            mine = answer.job
            quantiles = tuple(
                math.inf if v is None else v for v in (mine.p10_s, mine.p50_s, mine.p90_s)
            )
            if mine.never:
                quantiles = (math.inf, math.inf, math.inf)
            asked[job_id] = (item.share, t, quantiles, naive(sched, state, live))  # type: ignore[assignment]
        sched.submit(request, now=t)
    sched.run_until_idle()
    predictions = tuple(
        Prediction(share, q[0], q[1], q[2], naive_s, _first_start(sched.job(job_id)) - t, t)
        for job_id, (share, t, q, naive_s) in asked.items()
    )
    shares = sorted({p.share for p in predictions})
    per_share = {s: Coverage.of([p for p in predictions if p.share == s]) for s in shares}
    return BacktestResult(predictions, per_share)


@dataclass(frozen=True)
class OracleArrivals(ArrivalModel):
    """The arrivals that actually follow (``backtest(arrivals="oracle")``): every sample gets
    the same jobs, at their real submit offsets, with their real run times and priorities."""

    actual: tuple[Arrival, ...] = ()

    def expected(self, horizon_s: float) -> float:
        return float(sum(1 for a in self.actual if a[0] <= horizon_s))

    def stream(self, rng: random.Random, now_s: float, horizon_s: float) -> Iterator[Arrival]:
        return (a for a in self.actual if a[0] <= horizon_s)


def _future(
    ordered: Sequence[WorkloadItem], index: int, t: float, horizon_s: float, epoch_s: float
) -> tuple[Arrival, ...]:
    """The jobs submitted after the ``index``-th (at ``t``) within ``horizon_s``, as arrivals
    (ids and names as the replay's, so the core orders them alike)."""
    found = []
    for later in range(index + 1, len(ordered)):
        item = ordered[later]
        if item.submit_time_s - t > horizon_s:
            break
        request = job_request(item, later)
        job = LiveJob(
            request.job_id or "",
            request.job_name,
            item.share,
            request.demand,
            item.priority,
            created_s=epoch_s + item.submit_time_s,
        )
        found.append((item.submit_time_s - t, job, item.duration_s))
    return tuple(found)


def job_request(item: WorkloadItem, index: int) -> JobRequest:
    """The core's request of the ``index``-th job of a workload in submit order (its id
    ``job-NNNNNN``, the same in every replay)."""
    return JobRequest(
        job_name=f"{item.share}-{index}",
        share_name=item.share,
        demand={item.instance_type: item.instance_count},
        duration_s=item.duration_s,
        priority=item.priority,
        job_id=f"job-{index:06d}",
    )


def coverage_table(title: str, rows: Mapping[str, Coverage]) -> str:
    """``rows`` as the backtest commands print them: per share, coverage and median errors."""
    lines = [
        f"\n{title}",
        f"{'share':16s} {'jobs':>5s} {'p10-p90':>8s} {'<=p90':>6s} "
        f"{'median err':>11s} {'naive err':>10s}",
    ]
    for name, c in rows.items():
        lines.append(
            f"{name:16s} {c.jobs:5d} {c.interval:8.1%} {c.below_p90:6.1%} "
            f"{c.median_error_s / 60:9.1f} m {c.naive_median_error_s / 60:8.1f} m"
        )
    return "\n".join(lines)


def _first_start(job: Job) -> float:
    if job.attempts:
        return job.attempts[0].scheduled_at
    return math.inf if job.scheduled_at is None else job.scheduled_at


def queue_state(
    sched: Scheduler,
    queue: JobQueueSpec,
    t: float,
    *,
    known_priorities: bool = False,
    epoch_s: float = EPOCH_S,
    priority_sample: int = PRIORITY_SAMPLE,
) -> QueueState:
    """The queue at ``t`` as the live API shows it: running and waiting jobs, finished runs
    (epoch seconds from ``epoch_s``) with the priorities a live forecast reads: those of
    :func:`~.arrivals.sample_for_priorities` (``priority_sample`` per share), or all of them when
    ``known_priorities``."""
    running, waiting, history = [], [], []
    for job in sched.jobs:
        live = LiveJob(
            job.job_id,
            job.request.job_name,
            job.share_name,
            job.demand,
            job.priority,
            created_s=epoch_s + job.created_at,
            started_s=_running_since(job, epoch_s),
            held=tuple(
                (epoch_s + a.started_at, epoch_s + a.stopped_at)
                for a in job.attempts
                if a.started_at is not None
            ),
        )
        if job.status.is_dispatched:
            running.append(live)
        elif job.status in (JobStatus.SUBMITTED, JobStatus.RUNNABLE):
            waiting.append(live)
        elif job.attempts and job.attempts[-1].started_at is not None:
            last = job.attempts[-1]
            (itype, count), *_ = job.demand.items()
            run_s = max(last.stopped_at - (last.started_at or last.stopped_at), 1.0)
            history.append(
                PastRun(
                    job.share_name,
                    job.request.job_name,
                    itype,
                    count,
                    run_s,
                    job.priority,
                    epoch_s + job.created_at,
                    epoch_s + last.stopped_at,
                )
            )
    if not known_priorities:
        read = set(
            sample_for_priorities(
                [r.share for r in history], [r.created_s for r in history], priority_sample
            )
        )
        history = [r if i in read else replace(r, priority=None) for i, r in enumerate(history)]
    return QueueState(
        now_s=epoch_s + t,
        shares=tuple(queue.shares),
        running=tuple(running),
        waiting=tuple(waiting),
        history=tuple(history),
    )


def _running_since(job: Job, epoch_s: float) -> float | None:
    """As the live reader: a dispatched job's ``startedAt``, else ``scheduledAt``; ``None``
    for a job not holding capacity (a preempted one keeps its last attempt's times)."""
    if not job.status.is_dispatched:
        return None
    since = job.started_at if job.started_at is not None else job.scheduled_at
    return None if since is None else epoch_s + since


def naive(sched: Scheduler, state: QueueState, job: LiveJob) -> float:
    """Queue position x the share's mean past run time (see the module docstring)."""
    runs = [r.run_s for r in state.history if r.share == job.share] or [
        r.run_s for r in state.history
    ]
    mean = statistics.fmean(runs) if runs else 3600.0
    ahead = sum(1 for w in state.waiting if w.share == job.share and w.priority >= job.priority)
    idle = sched.ledger()[job.share].idle if job.share in sched.ledger() else {}
    fits = all(idle.get(itype, 0) >= n for itype, n in job.demand.items())
    position = ahead + (0 if fits and not ahead else 1)
    return 0.0 if position == 0 else position * mean
