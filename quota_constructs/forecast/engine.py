"""The forecast: the scheduling core run forward many times with sampled run times.

Each sample builds one :class:`~quota_constructs.scheduling.Scheduler` of the queue's shares,
places the jobs running now when they were placed (each for its run so far plus a sampled
remainder, so that one preempted in the sample runs again from its start), follows the
organisation's calendars and plans from now on (the core's timetable flips them inside the
horizon), submits the waiting jobs in their submit order, and advances until every waiting job
has been placed or the horizon is reached. A job's start is when it is first placed
(``SCHEDULED``, holding its instances). Over the samples each job gets its 10th, 50th and 90th
percentile start; a sample in which it is not placed inside the horizon counts as later than
the horizon. Preemptions a job causes in at least half of the samples are reported.

The queue's RUNNABLE time-limit actions (:attr:`QueueState.time_limits`) run in the samples as
the core runs them (a job RUNNABLE with a matching reason, first of its share, for that long is
cancelled): a job cancelled in more than half of the samples has no start, and its reason says
which limit cancels it and when; a job that can never run (``never``) and that a limit cancels
says when too. A job's time RUNNABLE before now is not in the API: the limits count from now.

Jobs that may arrive meanwhile are foreseen by an :class:`~.arrivals.ArrivalModel` of each
share's past submissions, by default wherever the history allows it (``arrivals=None``, "auto").
What it does not know is said in :attr:`Forecast.caveats`: shares with too short a history
(run times then drawn from every team's runs), and shares whose arrivals are not foreseen.
Deterministic for a ``seed``.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from quota_constructs.forecast.arrivals import Arrival, ArrivalModel, history_spans_days
from quota_constructs.forecast.calibration import Calibration
from quota_constructs.forecast.inputs import LiveJob, QueueState
from quota_constructs.forecast.runtimes import MIN_RUNS, RunTimeModel, Sampler
from quota_constructs.model import (
    JobQueueSpec,
    JobStatus,
    ShareState,
)
from quota_constructs.scheduling import (
    JSTLA_REASON,
    EventKind,
    JobRequest,
    PreemptionRule,
    Scheduler,
    SchedulerEvent,
    SchedulerOptions,
    SubmitRejected,
)

DEFAULT_HORIZON_S = 7 * 86400.0
"""How far ahead the forecast runs (a job not placed by then starts "beyond the horizon")."""
JOB_BUDGET = 12000
"""Jobs simulated in all samples together when ``samples`` is not given: the samples are
``JOB_BUDGET`` / (jobs + the arrivals expected within the horizon), between
:data:`MIN_SAMPLES` and :data:`MAX_SAMPLES` (a status view of 1,000 waiting jobs stays within
its CPU budget, docs/runtime.md)."""
MIN_SAMPLES = 12
MAX_SAMPLES = 200
PREEMPT_SHARE = 0.5
"""A preemption is reported when a job causes it in at least this share of the samples."""
KIND_OF_RULE = {PreemptionRule.CROSS_SHARE: "reclaim", PreemptionRule.IN_SHARE: "in_share"}
WHAT_IF_ID = "what-if"
"""Job id of the job a what-if asks about (it is not submitted)."""
NO_ARRIVALS = "jobs submitted after now are not foreseen (no arrival model)"
CANCELLED_BY = JSTLA_REASON.split("{")[0]
"""The start of the reason of a job the queue's RUNNABLE time-limit action cancelled."""
LIMITS_FROM_NOW = (
    "the queue's RUNNABLE time limits are counted from now: a job's time RUNNABLE so far is not "
    "in the API, so a cancellation may come sooner than forecast"
)
Arrivals = ArrivalModel | bool | None
"""How a forecast foresees jobs that may arrive: ``None`` ("auto", the default): each share's
past whole days where the history holds one (:data:`~.arrivals.MIN_DAYS`), none elsewhere;
``True``: forced on (an hourly Poisson rate where the history is shorter); ``False``: none; or
an :class:`ArrivalModel` of your own."""


@dataclass(frozen=True)
class Preempt:
    """A job another job's start preempts: ``kind`` ``reclaim`` (cross-share) or ``in_share``;
    ``probability``: share of the samples in which it happens."""

    job_id: str
    job_name: str
    share: str
    kind: str
    probability: float

    def as_json(self) -> dict[str, object]:
        return {
            "jobId": self.job_id,
            "jobName": self.job_name,
            "share": self.share,
            "kind": self.kind,
        }


@dataclass(frozen=True)
class JobForecast:
    """When one waiting job starts: percentiles in seconds from now (``None``: beyond the
    horizon), or ``never`` with the reason; what it waits on now; what it would preempt."""

    job_id: str
    job_name: str
    share: str
    p10_s: float | None = None
    p50_s: float | None = None
    p90_s: float | None = None
    never: bool = False
    reason: str = ""
    waiting_on: str = ""
    preempts: tuple[Preempt, ...] = ()
    runtime_source: str = ""
    cancel_p: float = 0.0
    cancel_s: float | None = None
    cancel_reason: str = ""

    @property
    def cancelled(self) -> bool:
        """Whether the queue's time-limit action cancels the job in more than half of the
        samples (``cancel_p``: that share; ``cancel_s``: the median time, seconds from now;
        ``cancel_reason``: the status reason code whose limit runs out)."""
        return self.cancel_p > 0.5

    def start_json(self) -> dict[str, float | None] | None:
        """``forecastStartS``: ``{"p50", "p90"}`` (seconds from now), ``None`` when it is not
        known to start inside the horizon (then :attr:`reason` says why)."""
        if self.never or self.cancelled or self.p50_s is None:
            return None
        return {"p50": _round(self.p50_s), "p90": _round(self.p90_s)}

    def fields_json(self) -> dict[str, object]:
        """The fields a job or share head carries: ``forecastStartS`` and ``forecastReason``."""
        return {"forecastStartS": self.start_json(), "forecastReason": self.reason or None}

    def as_json(self) -> dict[str, object]:
        """The whole answer: start, reason, what it waits on, whom it preempts."""
        return {
            "jobName": self.job_name,
            "share": self.share,
            **self.fields_json(),
            "waitingOn": self.waiting_on,
            "runtimeFrom": self.runtime_source,
            "preempts": [p.as_json() for p in self.preempts],
            "timeLimit": self._time_limit_json(),
        }

    def _time_limit_json(self) -> dict[str, object] | None:
        if not self.cancel_p:
            return None
        return {
            "reason": self.cancel_reason,
            "probability": round(self.cancel_p, 3),
            "cancelledInS": _round(self.cancel_s),
        }


@dataclass(frozen=True)
class Forecast:
    """Every waiting job's :class:`JobForecast` (submit order) and what the forecast does not
    know (:attr:`caveats`)."""

    now_s: float
    horizon_s: float
    samples: int
    seed: int
    jobs: Mapping[str, JobForecast]
    caveats: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        return {
            "horizonS": self.horizon_s,
            "samples": self.samples,
            "seed": self.seed,
            "caveats": list(self.caveats),
            "jobs": [{"jobId": f.job_id, **f.as_json()} for f in self.jobs.values()],
        }


@dataclass(frozen=True)
class WhatIf:
    """The answer to "what if I submitted this job now": ``outcome`` ``starts_now``,
    ``waits`` or ``never``, with the job's :class:`JobForecast` and the whole queue's."""

    outcome: str
    job: JobForecast
    forecast: Forecast

    @property
    def reason(self) -> str:
        return self.job.reason or self.job.waiting_on

    def as_json(self) -> dict[str, object]:
        """The ``--what-if --json`` answer, exactly its four fields (the caveats are in
        :attr:`forecast`)."""
        job = self.job
        starts = (
            None
            if job.never or job.cancelled
            else {"p50": _round(job.p50_s), "p90": _round(job.p90_s)}
        )
        return {
            "outcome": self.outcome,
            "startsInS": starts,
            "preempts": [p.as_json() for p in job.preempts],
            "reason": self.reason,
        }


def forecast(
    state: QueueState,
    *,
    samples: int | None = None,
    horizon_s: float = DEFAULT_HORIZON_S,
    seed: int = 0,
    options: SchedulerOptions | None = None,
    arrivals: Arrivals = None,
    what_if: LiveJob | None = None,
    watch: Collection[str] | None = None,
    calibration: Calibration | None = None,
) -> Forecast:
    """The forecast of every waiting job of ``state`` (and of ``what_if``, not submitted).

    ``samples``: runs of the core (default: from :data:`JOB_BUDGET`); ``horizon_s``: how far
    ahead; ``seed``: the random draws; ``options``: the core's (delays, choices);
    ``arrivals``: jobs that may arrive meanwhile (:data:`Arrivals`; default "auto");
    ``watch``: the ids of the waiting jobs to forecast (default every one; the what-if job
    always): the others are simulated alike, and a watched job gets the same answer as in
    the whole forecast; a sample ends once the watched ones are placed (each sample still
    submits every job and draws its arrivals, which cost the most on a long queue);
    ``calibration``: the bounds of the jobs forecast to wait widened as a backtest showed they
    must be (:mod:`~.calibration`; default as sampled).
    """
    model = arrival_model(state, arrivals)
    waiting = sorted(state.waiting, key=lambda j: j.created_s)  # stable: listed order on ties
    queue = JobQueueSpec(shares=state.shares)
    never = _never_reasons(state, queue, waiting)
    refused: set[str] = set()  # never let into the queue: not simulated
    if what_if is not None:
        waiting.append(what_if)
        if why := never_reason(state, queue, what_if, submitting=True):
            never[what_if.job_id] = why
            if why != never_reason(state, queue, what_if):  # the submit would be refused
                refused.add(what_if.job_id)
    expected = model.expected(horizon_s) if model is not None else 0.0
    count = samples or _samples_for(len(waiting) + len(state.running) + round(expected))
    runtimes = RunTimeModel(state.history)
    options = _with_time_limits(options or SchedulerOptions(), state)
    watched = None if watch is None else {*watch, *([what_if.job_id] if what_if else [])}
    runner = _Runner(state, waiting, never, runtimes, options, horizon_s, refused, watched)
    rng = random.Random(seed)
    for index in range(count):
        runner.sample(rng, first=index == 0, arrivals=model)
    jobs = {
        j.job_id: _calibrated(runner.result(j, count, runtimes), calibration, horizon_s)
        for j in waiting
        if watched is None or j.job_id in watched
    }
    notes = _caveats(state, runtimes, model) + _unseen_days_caveat(state, model, horizon_s)
    if calibration is not None:
        mismatch = calibration.mismatch(s.name for s in state.shares)
        notes += (calibration.describe(), *((mismatch,) if mismatch else ()))
    notes += _retry_caveat([*state.running, *waiting])
    if any(j.cancel_p for j in jobs.values()):
        notes += (LIMITS_FROM_NOW,)
    return Forecast(state.now_s, horizon_s, count, seed, jobs, notes)


def _calibrated(job: JobForecast, calibration: Calibration | None, horizon_s: float) -> JobForecast:
    """``job`` with its bounds calibrated (itself without a calibration)."""
    if calibration is None:
        return job
    p10, p90 = calibration.bounds(job.p10_s, job.p50_s, job.p90_s, horizon_s)
    return replace(job, p10_s=p10, p90_s=p90)


def copies_past_priorities(state: QueueState, arrivals: Arrivals) -> bool:
    """Whether a forecast of ``state`` with ``arrivals`` uses its finished jobs' priorities: only
    the jobs it foresees arriving copy them, so only when it foresees them from the history
    (``True``, or "auto" where the history spans :data:`~.arrivals.MIN_DAYS` whole days). A live
    read describes a few finished jobs per share for them only then."""
    if arrivals is None:
        return history_spans_days(state)
    return arrivals is True


def arrival_model(state: QueueState, arrivals: Arrivals) -> ArrivalModel | None:
    """The :class:`ArrivalModel` a forecast of ``state`` uses (``None``: none; see
    :data:`Arrivals`)."""
    if arrivals is None or arrivals is True:
        return ArrivalModel.from_state(state, forced=arrivals is True)
    return arrivals or None


def _unseen_days_caveat(
    state: QueueState, model: ArrivalModel | None, horizon_s: float
) -> tuple[str, ...]:
    """The caveat of the kinds of day within the horizon whose arrivals the history cannot
    foresee (no whole past day of that kind: a history that began on a Monday has no weekend)."""
    unseen = [] if model is None else model.unseen_days(state.now_s, horizon_s)
    if model is not None and model.days:
        lacks, why = "whole {} day", "the arrival model replays past days of the same kind"
    else:
        lacks, why = "{} hour", "the arrival model's hourly rates are per kind of day"
    return tuple(
        f"no {lacks.format(kind)} in the history: jobs submitted on {kind} days within the "
        f"horizon are not foreseen ({why})"
        for kind in unseen
    )


def _retry_caveat(jobs: Sequence[LiveJob]) -> tuple[str, ...]:
    """The caveat of jobs with a retry strategy: a failed attempt runs again, not modelled."""
    retried = [j for j in jobs if (j.retry_attempts or 1) > 1]
    if not retried:
        return ()
    return (
        f"{len(retried)} job(s) have a retry strategy (retryStrategy attempts > 1): an attempt "
        "that fails runs again, which the forecast does not model (each job runs one drawn "
        "time; failed runs are among the draws, so a failure without a retry is)",
    )


def _with_time_limits(options: SchedulerOptions, state: QueueState) -> SchedulerOptions:
    """``options`` running the queue's time-limit actions (unless they set their own)."""
    if options.runnable_time_limits or not state.time_limits:
        return options
    return replace(options, runnable_time_limits=dict(state.time_limits))


def what_if(
    state: QueueState,
    job: LiveJob,
    *,
    samples: int | None = None,
    horizon_s: float = DEFAULT_HORIZON_S,
    seed: int = 0,
    options: SchedulerOptions | None = None,
    arrivals: Arrivals = None,
    watch: Collection[str] | None = None,
    calibration: Calibration | None = None,
) -> WhatIf:
    """Whether ``job``, submitted now, starts now, waits (and how long) or can never run, and
    whom it preempts; the other arguments are :func:`forecast`'s (``watch=()``: the job
    alone)."""
    result = forecast(
        state,
        samples=samples,
        horizon_s=horizon_s,
        seed=seed,
        options=options,
        arrivals=arrivals,
        what_if=job,
        watch=watch,
        calibration=calibration,
    )
    mine = result.jobs[job.job_id]
    if mine.never or mine.cancelled:  # it runs only if placed before the limit: mostly not
        outcome = "never"
    elif mine.p90_s == 0.0:
        outcome = "starts_now"
    else:
        outcome = "waits"
    return WhatIf(outcome, mine, result)


def never_reason(
    state: QueueState, queue: JobQueueSpec, job: LiveJob, *, submitting: bool = False
) -> str:
    """Why ``job`` can never run in its share ("" when it can): no share, an instance type the
    share has no capacity for, more instances than it can ever use, a plan that has ended; and
    for a job ``submitting`` (a what-if): a DISABLED share, a priority above the team's cap
    (a job in the queue was let in: DISABLED shares run theirs, caps are checked at submit)."""
    names = [s.name for s in state.shares]
    if not job.share:
        return "a job queue without quota shares (first in, first out): not forecast"
    if job.share not in names:
        return f"no quota share {job.share!r} on this queue (shares: {', '.join(names)})"
    if submitting and _disabled(state, job.share):
        return f"quota share {job.share} is DISABLED and accepts no new jobs"
    cap = state.priority_caps.get(job.share) if submitting else None
    if cap is not None and job.priority > cap:
        return (
            f"priority {job.priority} is above team {job.share}'s cap of {cap} "
            "(access.max_priority): the submit would be denied"
        )
    now_at = datetime.fromtimestamp(state.now_s, UTC)
    ahead = queue.settings_ahead(state.calendars, now_at)
    reasons = (_never_in(state, settings, job) for settings in ahead)
    now = next(reasons)
    if not now or any(not later for later in reasons):  # some setting of the week fits
        return ""
    return now


def _never_in(state: QueueState, queue: JobQueueSpec, job: LiveJob) -> str:
    """Why ``job`` cannot run while ``queue``'s settings are in force ("" when it can)."""
    capacity = _capacity_never(queue, job)
    if capacity:
        return capacity
    ended = _ended_plan(state, job)
    if ended:
        return ended
    se = state.service_environment if not state.plans else None
    return queue.infeasibility(job.share, job.demand, service_environment=se) or ""


def _capacity_never(queue: JobQueueSpec, job: LiveJob) -> str:
    """Why ``job`` never fits its share's capacity in ``queue`` ("" when it fits)."""
    for itype, count in job.demand.items():
        usable = queue.max_usable(job.share, itype)
        if queue.share(job.share).limit(itype) == 0 and usable == 0:
            return f"quota share {job.share} has no capacity for {itype}"
        if count > usable:
            return (
                f"{count} x {itype} is more than quota share {job.share} can ever use "
                f"({usable}, borrowing included)"
            )
    return ""


def _never_reasons(
    state: QueueState, queue: JobQueueSpec, jobs: Sequence[LiveJob]
) -> dict[str, str]:
    """Job id -> why it can never run, for the jobs that cannot; asked once per kind of job
    (share, instances, priority), as a queue holds many alike."""
    asked: dict[tuple[str, tuple[tuple[str, int], ...], int], str] = {}
    found = {}
    for job in jobs:
        key = (job.share, tuple(sorted(job.demand.items())), job.priority)
        if key not in asked:
            asked[key] = never_reason(state, queue, job)
        if asked[key]:
            found[job.job_id] = asked[key]
    return found


def _ended_plan(state: QueueState, job: LiveJob) -> str:
    """The reason when every plan reserving the job's type has ended and the type has no other
    capacity (its instances come only from plans)."""
    for itype in job.demand:
        plans = [p for p in state.plans if not p.by_arn and p.instance_type == itype]
        if plans and all(p.end_s <= state.now_s for p in plans):
            se = (state.service_environment or {}).get(itype)
            if se == 0:
                last = max(plans, key=lambda p: p.end_s)
                return (
                    f"training plan {last.label} for {itype} has ended ({last.start} + "
                    f"{last.duration_hours} h): no capacity of that type is left"
                )
    return ""


def _disabled(state: QueueState, share: str) -> bool:
    return any(s.name == share and s.state is not ShareState.ENABLED for s in state.shares)


def _samples_for(jobs: int) -> int:
    return max(MIN_SAMPLES, min(MAX_SAMPLES, JOB_BUDGET // max(jobs, 1)))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _caveats(
    state: QueueState, model: RunTimeModel, arrivals: ArrivalModel | None
) -> tuple[str, ...]:
    active = {j.share for j in (*state.running, *state.waiting)}
    notes = [NO_ARRIVALS] if arrivals is None else _unforeseen(arrivals.missing, active)
    notes += _short_histories({s: model.runs_of(s) for s in sorted(active)})
    if not state.calendars and not state.plans:
        notes.append("no share calendars or training plans given: none are assumed")
    return tuple(notes)


def _short_histories(runs: Mapping[str, int]) -> list[str]:
    """The note of the shares with fewer than :data:`MIN_RUNS` past runs (one note for all)."""
    short = {share: n for share, n in runs.items() if n < MIN_RUNS}
    if not short:
        return []
    if len(short) == 1:
        ((share, n),) = short.items()
        named = f"share {share}: {n} past run(s) in the history (fewer than {MIN_RUNS}): run times"
        whose = "its"
    else:
        listed = ", ".join(f"{share} ({n})" for share, n in short.items())
        named = f"shares {listed}: fewer than {MIN_RUNS} past runs each in the history: run times"
        whose = "their"
    return [
        f"{named} of {whose} jobs without a hint are drawn from every team's runs, or uniform up "
        "to their MaxRuntimeInSeconds when the queue has fewer than that"
    ]


def _unforeseen(missing: Mapping[str, str], active: set[str]) -> list[str]:
    """One note per reason the arrival model foresees nothing for active shares, naming them
    (a queue of 20 new shares gets one line, not 20)."""
    by_reason: dict[str, list[str]] = {}
    for share, why in sorted(missing.items()):
        if share in active:
            by_reason.setdefault(why, []).append(share)
    return [
        f"{'share' if len(shares) == 1 else 'shares'} {', '.join(shares)}: jobs submitted after "
        f"now are not foreseen (no arrival model: {why})"
        for why, shares in by_reason.items()
    ]


class _Runner:
    """The samples of one forecast: their starts and preemptions per job."""

    def __init__(
        self,
        state: QueueState,
        waiting: Sequence[LiveJob],
        never: Mapping[str, str],
        model: RunTimeModel,
        options: SchedulerOptions,
        horizon_s: float,
        refused: set[str] | frozenset[str] = frozenset(),
        watched: set[str] | None = None,
    ) -> None:
        self.state = state
        lead = options.scheduled_to_starting_s + options.starting_to_running_s
        self.placed = sorted(
            ((*_placed(j, state.now_s, lead), j) for j in state.running),
            key=lambda item: (item[0], -item[2].priority),
        )
        """Each running job with its placement in the sample's time (now is 0) and its run
        time so far (RUNNING at its ``started_s``, ``lead`` seconds after its placement), in
        the order the core placed them: by placement, the higher priority first among jobs
        placed together (the core dispatches a share's jobs by priority); a job not started
        yet at now."""
        self.running = [job for _, _, job in self.placed]
        self.past_runs = _held_at_placements(state, [at for at, _, _ in self.placed], lead)
        """The past runs that held instances when a running job was placed, each with its
        placement and run: placed too, so that each running job holds its share's own
        instances or borrowed ones as it does in the queue (:func:`_held_at_placements`)."""
        self.placements = sorted(
            (*self.placed, *self.past_runs), key=lambda item: (item[0], -item[2].priority)
        )
        """The running jobs and the past runs together, in the order the core placed them."""
        self.waiting = [j for j in waiting if j.job_id not in never]
        limited = bool(options.runnable_time_limits)
        self.queued = [  # in submit order; with time limits, the jobs that never run too
            j for j in waiting if j.job_id not in never or (limited and j.job_id not in refused)
        ]
        self.never = never
        self.options = options
        self.horizon = horizon_s
        now = state.now_s
        self.samplers: dict[str, Sampler] = {
            j.job_id: model.sampler(j, now) for j in (*self.running, *self.queued)
        }
        seen = (lambda j: True) if watched is None else (lambda j: j.job_id in watched)
        self.starts: dict[str, list[float]] = {j.job_id: [] for j in self.waiting if seen(j)}
        """Per watched job that can run, its start in each sample."""
        self.cancels: dict[str, list[float]] = {j.job_id: [] for j in self.queued if seen(j)}
        self.cancel_reasons: dict[str, str] = {}
        self.preempts: dict[str, dict[str, tuple[str, str, str, int]]] = {}
        self.waiting_on: dict[str, str] = {}
        self.names = {j.job_id: j for j in (*self.running, *self.waiting)}

    def _scheduler(self) -> Scheduler:
        """The queue's shares, every one ENABLED until its jobs are in (:meth:`_disable`),
        its clock at the earliest placement of a running job (:meth:`_place_running`)."""
        state = self.state
        return Scheduler(
            queue_name="forecast",
            shares=[replace(s, state=ShareState.ENABLED) for s in state.shares],
            service_environment=state.service_environment,
            options=self.options,
            start_time=self.placements[0][0] if self.placements else 0.0,
        )

    def _place_running(self, sched: Scheduler, rng: random.Random) -> None:
        """Place the running jobs when they were placed (before now, time 0), each for what it
        ran so far plus a drawn remainder: one preempted in the sample runs again from its
        start (the core keeps only checkpointed progress), not just its remainder; among
        them, the past runs that held instances then, each for its run (ended by now)."""
        draw = self.samplers
        for at, ran, job in self.placements:
            sched.advance(at)
            sampler = draw.get(job.job_id)  # a past run has none: it ran what it ran
            self._submit(sched, job, ran if sampler is None else ran + sampler.draw(rng), now=at)
        sched.advance(0.0)
        past = (job.job_id for _, _, job in self.past_runs)
        late = [job_id for job_id in past if not sched.job(job_id).status.is_terminal]
        if late:  # placed later than it was (the history does not tell everything): ended now
            sched.terminate_all(late, "ended before the forecast", now=0.0)

    def _disable(self, sched: Scheduler) -> None:
        """DISABLED shares as they are: their jobs in the queue still run (as Batch runs
        them), new ones are refused."""
        for spec in self.state.shares:
            if spec.state is not ShareState.ENABLED:
                sched.upsert_share(spec, now=0.0)

    def _submit(self, sched: Scheduler, job: LiveJob, duration: float, *, now: float = 0.0) -> None:
        request = JobRequest(
            job_name=job.job_name,
            share_name=job.share,
            demand=job.demand,
            duration_s=duration,
            priority=job.priority,
            preemption_retries=job.preemption_retries,
            job_id=job.job_id,
        )
        with suppress(SubmitRejected):  # refused now (a share DISABLED since): never placed
            sched.submit(request, now=now)

    def sample(self, rng: random.Random, *, first: bool, arrivals: ArrivalModel | None) -> None:
        sched = self._scheduler()
        draw = self.samplers
        self._place_running(sched, rng)
        self._follow_timetable(sched)
        tracked = set(self.starts)
        started: dict[str, float] = {}
        cancelled: dict[str, tuple[float, str]] = {}
        sched.subscribe(_on_placed(tracked, started))
        if self.options.runnable_time_limits:
            sched.subscribe(_on_cancelled(set(self.cancels), started, cancelled))
        for job in self.queued:
            self._submit(sched, job, draw[job.job_id].draw(rng))
        self._disable(sched)
        arriving = iter(()) if arrivals is None else self._arrivals(rng, arrivals)
        upcoming = next(arriving, None)
        sched.advance(0.0)
        if first:
            self._note_waiting_on(sched, started)
        watched = len(tracked) + self._timed_never(sched)
        horizon, timetable = self.horizon, sched.timetable
        while len(started) + len(cancelled) < watched:
            nxt = sched.next_event_time()
            due = min(math.inf if nxt is None else nxt, timetable.next_time())
            if upcoming is not None:
                due = min(due, upcoming[0])
            if due > horizon:
                break
            while upcoming is not None and upcoming[0] <= due:
                self._submit(sched, upcoming[1], upcoming[2], now=due)
                upcoming = next(arriving, None)
            sched.advance(due)
        for job_id in tracked:
            self.starts[job_id].append(started.get(job_id, math.inf))
        for job_id, times in self.cancels.items():
            at, reason = cancelled.get(job_id, (math.inf, ""))
            times.append(at)
            if reason:
                self.cancel_reasons.setdefault(job_id, reason)
        self._note_preemptions(sched, tracked)

    def _arrivals(self, rng: random.Random, model: ArrivalModel) -> Iterator[Arrival]:
        """The sample's arrivals, drawn as the sample reaches them, from a generator of their
        own (seeded from ``rng``): the other draws do not depend on how far a sample ran."""
        own = random.Random(rng.getrandbits(64))
        return model.stream(own, self.state.now_s, self.horizon)

    def _timed_never(self, sched: Scheduler) -> int:
        """How many jobs that never run a time limit will cancel (RUNNABLE with a reason that
        has one); the others stay RUNNABLE to the horizon, so the sample does not wait on them."""
        limits = self.options.runnable_time_limits
        count = 0
        for job_id in self.cancels.keys() - self.starts.keys():
            with suppress(KeyError):
                reason = sched.job(job_id).status_reason or ""
                count += reason.split(" - ")[0] in limits or reason.startswith(CANCELLED_BY)
        return count

    def _follow_timetable(self, sched: Scheduler) -> None:
        state = self.state
        for share in state.shares:
            calendar = state.calendars.get(share.name)
            if calendar is not None:
                sched.follow_calendar(share, calendar, epoch_s=state.now_s)
        if state.plans:
            sched.follow_plans([p for p in state.plans if not p.by_arn], epoch_s=state.now_s)

    def _note_waiting_on(self, sched: Scheduler, started: Mapping[str, float]) -> None:
        for job_id in self.starts:
            if job_id in started:
                continue
            try:
                reason = sched.pending_reason(job_id)
            except KeyError:
                continue
            if reason is not None:
                self.waiting_on[job_id] = f"{reason.kind.value}: {reason.message}"

    def _note_preemptions(self, sched: Scheduler, tracked: set[str]) -> None:
        for job in sched.jobs:
            seen: set[tuple[str, str]] = set()
            for record in job.preemptions:
                preemptor = record.preemptor_job_id
                kind = KIND_OF_RULE.get(record.rule)
                if preemptor not in tracked or kind is None or (preemptor, kind) in seen:
                    continue
                seen.add((preemptor, kind))
                found = self.preempts.setdefault(preemptor, {})
                key = f"{job.job_id}/{kind}"
                name, share, _, n = found.get(key, (job.request.job_name, job.share_name, kind, 0))
                found[key] = (name, share, kind, n + 1)

    def _with_cancels(self, base: JobForecast, count: int) -> JobForecast:
        """``base`` with the share of the samples in which a time limit cancels the job, the
        median time of it and the reason code (unchanged when none does)."""
        times = sorted(self.cancels.get(base.job_id, ()))
        n = sum(1 for t in times if not math.isinf(t))
        if not n:
            return base
        reason = self.cancel_reasons.get(base.job_id, "")
        return replace(base, cancel_p=n / count, cancel_s=times[(n - 1) // 2], cancel_reason=reason)

    def _cancel_text(self, job: JobForecast) -> str:
        seconds = self.options.runnable_time_limits.get(job.cancel_reason)
        limit = f"{seconds:g} s" if seconds is not None else "its limit"
        return (
            f"cancelled by the queue's time-limit action (jobStateTimeLimitActions: RUNNABLE "
            f"with {job.cancel_reason} for {limit}) in {job.cancel_p:.0%} of the samples, "
            f"about {(job.cancel_s or 0.0) / 60:.0f} min from now: it runs only if placed "
            "before that"
        )

    def result(self, job: LiveJob, count: int, model: RunTimeModel) -> JobForecast:
        base = JobForecast(
            job.job_id, job.job_name, job.share, runtime_source=model.source(job).kind
        )
        base = self._with_cancels(base, count)
        why = self.never.get(job.job_id)
        if why:
            if base.cancelled:
                why = f"{why}; {self._cancel_text(base)}"
            return replace(base, never=True, reason=why, waiting_on=why)
        starts = sorted(self.starts[job.job_id])
        p10, p50, p90 = (prediction_bound(starts, q) for q in (0.1, 0.5, 0.9))
        preempts = tuple(
            Preempt(key.split("/")[0], name, share, kind, n / count)
            for key, (name, share, kind, n) in self.preempts.get(job.job_id, {}).items()
            if n / count >= PREEMPT_SHARE
        )
        reason = ""
        if base.cancelled:
            reason = self._cancel_text(base)
        elif p50 is None:
            reason = f"not placed within the horizon ({self.horizon / 3600:g} h) in most samples"
        return replace(
            base,
            p10_s=p10,
            p50_s=p50,
            p90_s=p90,
            reason=reason,
            waiting_on=self.waiting_on.get(job.job_id, "" if p90 == 0.0 else "capacity"),
            preempts=preempts,
        )


PAST_RUN_ID = "past-run-{}"
"""The ids the forecast gives the past runs it places (:func:`_held_at_placements`)."""


def _held_at_placements(
    state: QueueState, placements: Sequence[float], lead_s: float
) -> list[tuple[float, float, LiveJob]]:
    """The past runs that held instances at one of ``placements`` (a running job's placement,
    in a sample's time: now is 0), each as (its placement, its run, the job): the history's
    finished runs and the earlier attempts of the jobs running and waiting (a job preempted
    since). Placed with the running jobs, they hold the capacity they held then, so the core
    gives each running job the same own or borrowed instances as the queue did: which job
    holds borrowed instances decides what a reclaim or an in-share preemption frees, and the
    API does not tell it. Runs without their end time are left out, and so are runs that
    held nothing when a running job was placed (they change nothing)."""
    marks = sorted(at for at in placements if at < 0.0)
    if not marks:
        return []
    found: list[tuple[float, float, LiveJob]] = []
    for job, started_s, stopped_s in _past_runs(state):
        stop = stopped_s - state.now_s
        run = stopped_s - started_s
        start = stop - run - lead_s
        first_after = bisect.bisect_right(marks, start)
        if first_after < len(marks) and marks[first_after] < stop:
            found.append((start, run, replace(job, job_id=PAST_RUN_ID.format(len(found)))))
    return found


def _past_runs(state: QueueState) -> Iterator[tuple[LiveJob, float, float]]:
    """Each past run of ``state`` whose end is known: the job, its start and its end."""
    for run in state.history:
        if run.stopped_s is not None:
            demand = {run.instance_type: run.instance_count}
            job = LiveJob("", run.job_name, run.share, demand, run.priority or 0)
            yield job, run.stopped_s - run.run_s, run.stopped_s
    for job in (*state.running, *state.waiting):
        for started_s, stopped_s in job.held:
            yield job, started_s, stopped_s


def _placed(job: LiveJob, now_s: float, lead_s: float) -> tuple[float, float]:
    """When a running job was placed, in a sample's time (now is 0), and how long it has run
    (``(0, 0)`` when it has not started yet)."""
    if job.started_s is None or job.started_s >= now_s:
        return 0.0, 0.0
    ran = now_s - job.started_s
    return -ran - lead_s, ran


def prediction_bound(sorted_values: Sequence[float], q: float) -> float | None:
    """The start that a share ``q`` of the actual starts falls at or before, from the samples'
    sorted starts; ``None`` when it falls beyond the horizon. A prediction bound, not the
    samples' own quantile: a new draw falls at or below the k-th of n sorted draws with
    probability k / (n + 1), so an upper bound takes k = q(n + 1) rounded up and a lower one
    rounded down (with 12 samples p90 is the latest, p10 the earliest: their nearest-rank
    quantiles, the 11th and 2nd, would cover 85 % and 69 % where 90 % and 80 % are meant);
    the median is the nearest-rank one."""
    n = len(sorted_values)
    if not n:
        return None
    rank = round(q * (n + 1), 9)  # 0.9 x 20 is 18, not 18.000000000000004
    if q == 0.5:
        k = math.ceil(q * n)
    elif q > 0.5:
        k = math.ceil(rank)
    else:
        k = math.floor(rank)
    value = sorted_values[min(n, max(1, k)) - 1]
    return None if math.isinf(value) else value


def _on_cancelled(
    watched: set[str], started: Mapping[str, float], cancelled: dict[str, tuple[float, str]]
) -> Callable[[SchedulerEvent], None]:
    """A listener noting when a watched job not yet placed is cancelled by a time-limit
    action, and the status reason code whose limit ran out."""

    def listener(event: SchedulerEvent) -> None:
        reason = event.status_reason or ""
        if event.status is JobStatus.FAILED and reason.startswith(CANCELLED_BY):
            job_id = event.job.job_id
            if job_id in watched and job_id not in started and job_id not in cancelled:
                cancelled[job_id] = (event.time, reason.removeprefix(CANCELLED_BY))

    return listener


def _on_placed(tracked: set[str], started: dict[str, float]) -> Callable[[SchedulerEvent], None]:
    """A listener noting when each tracked job is first placed."""

    def listener(event: SchedulerEvent) -> None:
        if event.status is JobStatus.SCHEDULED and event.kind is EventKind.STATE_CHANGE:
            job_id = event.job.job_id
            if job_id in tracked and job_id not in started:
                started[job_id] = event.time

    return listener
