"""What-if simulator: run a workload through the scheduler core in virtual time.

The scheduling itself is :class:`quota_constructs.scheduling.Scheduler` (the same code the local
emulator serves over HTTP); this module only feeds it jobs, steps virtual time from event to
event and measures. Definitions (also in docs/advisor.md):

* wait: first dispatch minus submit; completion time: end minus submit;
* lost instance-hours: per preempted attempt, run time since its last checkpoint (all of it
  without checkpointing) times the job's instances;
* own use: instance-hours a share ran on its own capacity / (its limit x the window);
  borrowed / lent: instance-hours on other shares' capacity / of its capacity used by others;
* the window is ``[0, W]``, W the end of the workload (``days`` for generated workloads, else the
  latest submit + duration); utilisation: instance-hours used in the window / (service
  environment x window), also for the all-RESERVE baseline of the same shares and workload;
* fairness: Jain's index over shares of the mean of ``duration / completion time`` per share
  (1 = every share's jobs are slowed down alike).
"""

from __future__ import annotations

import heapq
import itertools
import math
from array import array
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter, itemgetter
from typing import TypeVar

import numpy as np

from quota_constructs.advisor.workload import WorkloadError, WorkloadJob
from quota_constructs.model import (
    DEFAULT_TIMEZONE,
    PLAN_STOP_BEFORE_END_S,
    SIMULATION_START,
    JobQueueSpec,
    Organisation,
    Problem,
    QuotaShareSpec,
    ShareCalendar,
    SharingStrategy,
    TrainingPlanSpec,
)
from quota_constructs.scheduling import (
    Job,
    JobRequest,
    JobStatus,
    PreemptionRule,
    Scheduler,
    SchedulerOptions,
    SubmitRejected,
    collector_paused,
)
from quota_constructs.scheduling.records import UsageLog

HOUR_S = 3600.0
PROGRESS_EVERY = 1024
"""Virtual-time instants between two progress calls."""
BILLED_STARTUP_S = 120.0
"""Of each start-up, the part SageMaker bills by default: the download of the training image
and data, after the instances are up (UNCONFIRMED split; docs/cost.md)."""
Progress = Callable[[str, float], None]
"""Called during a run: (organisation, simulated seconds so far)."""


@dataclass(frozen=True)
class SimulationOptions:
    """Timing of the simulated service (seconds).

    Defaults: a job runs the instant it is dispatched; a preemption takes 20 s from 'started'
    to 'completed' (AWS's EventBridge example: 19:57:27 to 19:57:47), during which the victim
    still holds the capacity and the beneficiary waits.
    """

    startup_s: float = 0.0
    """From dispatch (SCHEDULED) to RUNNING: instance provisioning and image download."""
    billed_startup_s: float = BILLED_STARTUP_S
    """The last part of :attr:`startup_s` SageMaker bills (from ``TrainingStartTime``: the
    downloads); the provisioning before it is not billed. At most :attr:`startup_s`."""
    backfill_depth: int = 0
    """Jobs looked at behind a share's blocked head (0: strict order, head-of-line blocking
    across instance types; the core's UNCONFIRMED choice)."""
    preemption_s: float = 20.0
    """From 'preemption started' to the capacity being free."""
    window_s: float | None = None
    """End of the measurement window; ``None``: the latest submit + duration of the workload."""
    plan_epoch_s: float | None = None
    """UTC epoch of simulated time 0 for training plan windows; ``None``: the first plan's start."""
    plan_stop_before_end_s: float = PLAN_STOP_BEFORE_END_S
    """When, before a plan's end, its capacity goes and its running jobs stop (AWS: 30 min)."""
    calendar_grace_s: float = 0.0
    """How long borrowers of a share whose calendar stops it lending may finish before the flip
    preempts them (0: at the window edge; the scheduler's :class:`Timetable`, as
    ``quota local serve --calendar-grace``)."""
    on_demand_with_plans: tuple[tuple[str, int], ...] = ()
    """``(type, capacity)``: a plan's type whose capacity is on demand but for its plans'
    instances inside their windows (the reservation sizing's candidates; the model's
    ``mixed_capacity_at``); by default a plan's type has only its plans' instances."""

    @property
    def unbilled_startup_s(self) -> float:
        """From dispatch to the start of billing: the provisioning part of the start-up."""
        return max(self.startup_s - self.billed_startup_s, 0.0)

    def scheduler_options(self, queue: JobQueueSpec) -> SchedulerOptions:
        return SchedulerOptions(
            scheduled_to_starting_s=self.startup_s,
            starting_to_running_s=0.0,
            preemption_duration_s=self.preemption_s,
            backfill_depth=self.backfill_depth,
            runnable_time_limits=SchedulerOptions.time_limits_for(queue),
        )


@dataclass(frozen=True)
class ShareMetrics:
    """What one share experienced. Times in seconds, work in instance-hours."""

    share: str
    strategy: str
    jobs: int
    completed: int
    """Jobs that SUCCEEDED (completion times are theirs)."""
    failed: int
    """Jobs that ended FAILED (e.g. terminated by the queue's RUNNABLE time limit)."""
    never_started: int
    not_started_reasons: Mapping[str, int]
    """Why jobs never started: their status reason (or pending reason) -> count."""
    wait_p50_s: float
    wait_p95_s: float
    wait_max_s: float
    completion_mean_s: float
    completion_p95_s: float
    completion_max_s: float
    """Longest submit-to-end time of a job; ``inf`` when a job did not succeed."""
    preemptions: Mapping[str, int]
    preempted_jobs: int
    """Jobs preempted at least once (any rule)."""
    lost_instance_hours: float
    own_use: float
    borrowed_instance_hours: float
    lent_instance_hours: float


@dataclass(frozen=True)
class Timeline:
    """Piecewise-constant usage per instance type and share: from ``times[i]`` to ``times[i+1]``.

    ``own_by_type[type][share]``: instances of the share's own capacity it runs;
    ``borrowed_by_type[type][share]``: instances it runs on other shares' capacity. ``own`` and
    ``borrowed`` sum them over types. ``capacity`` (service environment per type) and
    ``max_usable[type][share]`` (own + what the borrow limit and the lenders allow) are the
    limits the plots draw.
    """

    times: list[float] = field(default_factory=list)
    own_by_type: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    borrowed_by_type: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    preemptions: list[tuple[float, str, str]] = field(default_factory=list)
    """(time, victim share, rule) of each preemption started."""
    waits: dict[str, list[float]] = field(default_factory=dict)
    capacity: dict[str, int] = field(default_factory=dict)
    max_usable: dict[str, dict[str, int]] = field(default_factory=dict)
    borrowing: list[str] = field(default_factory=list)
    """Shares whose strategy borrows."""

    @property
    def own(self) -> dict[str, list[int]]:
        """Instances each share runs on its own capacity, summed over instance types."""
        return _sum_types(self.own_by_type, len(self.times))

    @property
    def borrowed(self) -> dict[str, list[int]]:
        """Instances each share runs on borrowed capacity, summed over instance types."""
        return _sum_types(self.borrowed_by_type, len(self.times))


def _sum_types(by_type: dict[str, dict[str, list[int]]], length: int) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for shares in by_type.values():
        for share, values in shares.items():
            total = out.setdefault(share, [0] * length)
            for i, v in enumerate(values):
                total[i] += v
    return out


@dataclass(frozen=True)
class SimulationResult:
    """Per-share metrics and the overall figures of one configuration on one workload."""

    organisation: str
    window_s: float
    end_s: float
    """When the last job ended (or the last event happened)."""
    utilisation: float
    baseline_utilisation: float
    """Same shares, all RESERVE (no sharing), same workload."""
    fairness: float
    shares: tuple[ShareMetrics, ...]
    timeline: Timeline
    events: int
    """Virtual-time steps processed (for the benchmark)."""
    jobs: tuple[Job, ...] = field(default=(), compare=False, repr=False, metadata={"json": False})
    """Every job after the run, attempts included (what the cost model bills; not in ``--json``)."""

    def share(self, name: str) -> ShareMetrics:
        return next(s for s in self.shares if s.share == name)


def all_reserve(queue: JobQueueSpec) -> JobQueueSpec:
    """The all-RESERVE alternative: the same shares with RESERVE (no lending, no borrowing)."""
    return JobQueueSpec(
        shares=tuple(
            replace(s, strategy=SharingStrategy.RESERVE, borrow_limit=None) for s in queue.shares
        ),
        priority=queue.priority,
        runnable_timeout_minutes=queue.runnable_timeout_minutes,
    )


def baseline_queue(queue: JobQueueSpec) -> JobQueueSpec:
    """What the all-RESERVE baseline runs: the same shares and capacities, all RESERVE, no
    in-share preemption, nothing else; so every configuration of one comparison with the same
    capacities has the same baseline figure."""
    return JobQueueSpec(
        shares=tuple(
            QuotaShareSpec(name=s.name, capacity=s.capacity, strategy=SharingStrategy.RESERVE)
            for s in queue.shares
        ),
        priority=queue.priority,
        runnable_timeout_minutes=queue.runnable_timeout_minutes,
    )


def check_workload(org: Organisation, jobs: Sequence[WorkloadJob]) -> None:
    """Every job's share must be a share of ``org``; :class:`WorkloadError` names the others.

    One problem per unknown share name, with its job count and first lines (or job indexes).
    """
    names = {s.name for s in org.queue.shares}
    unknown: dict[str, list[str]] = {}
    for index, job in enumerate(jobs):
        if job.share not in names:
            where = f"line {job.line}" if job.line is not None else f"job {index}"
            unknown.setdefault(job.share, []).append(where)
    check_share_names(org, {share: (len(where), where) for share, where in unknown.items()})


def check_share_names(org: Organisation, shares: Mapping[str, tuple[int, Sequence[str]]]) -> None:
    """Every name of ``shares`` (share name -> its job count and its first jobs' places, e.g.
    ``line 3``) must be a share of ``org``; :class:`WorkloadError` names the others."""
    names = {s.name for s in org.queue.shares}
    problems = [
        Problem(
            f"{', '.join(where[:5])}{', ...' if count > 5 else ''} ({count} jobs).share",
            share,
            f"not a quota share of organisation {org.name!r} (shares: {', '.join(sorted(names))})",
            "use one of the organisation's share names",
        )
        for share, (count, where) in shares.items()
        if share not in names
    ]
    if problems:
        raise WorkloadError(problems, context=f"workload for {org.name}")


def default_window(jobs: Iterable[WorkloadJob]) -> float:
    """The earliest the workload could end on an empty system: max(submit + duration)."""
    return max((j.submit_time_s + j.duration_s for j in jobs), default=0.0)


class _Usage:
    """Instances each share holds, from the core's usage log, integrated over time at the end.

    The core logs each allocation a job takes (``Job.alloc``: lender share -> type ->
    instances) when it starts holding capacity (SCHEDULED) and gives back when it stops (end
    or preemption), instead of a listener seeing every event. Each instant that changed
    something is a sample (time 0 is the first): :meth:`integrate` turns the log into one
    row per (entry, lender, type), counts each share's own, borrowed and lent instances at
    every sample with numpy (exact: integer counts), and sums the instance-seconds left to
    right, shares in order, as a per-step loop over the shares would (a test checks the
    figures are identical to the last bit, and the counts equal ``Scheduler.ledger()`` at
    every step). This is all the all-RESERVE baseline needs; :class:`_Recorder` adds the
    timeline.
    """

    def __init__(self, sched: Scheduler, window_s: float) -> None:
        self._setup([s.name for s in sched.queue.shares], sched.keep_usage_log(), window_s)

    @classmethod
    def of_changes(
        cls,
        names: Sequence[str],
        changes: Iterable[tuple[float, str, str, str, int]],
        window_s: float,
    ) -> _Usage:
        """The usage of a log made elsewhere (``changes`` in time order), shares ``names``."""
        usage = cls.__new__(cls)
        log = UsageLog()
        log.changes.extend(changes)
        usage._setup(list(names), log, window_s)
        return usage

    def _setup(self, names: list[str], log: UsageLog, window_s: float) -> None:
        self.window_s = window_s
        self.names = names
        self.totals: dict[str, list[float]] = {n: [0.0, 0.0, 0.0, 0.0] for n in self.names}
        """Instance-seconds per share: own, borrowed, lent (whole run), own within the window
        (set by :meth:`integrate`)."""
        self.used_in_window = 0.0
        self.samples = 0
        """Spans integrated so far."""
        self.times: list[float] = [0.0]
        """Time of each sample (an instant that changed something; time 0 first)."""
        self.steps = 0
        """Instants the run stepped through (time 0 included)."""
        self.end_time = 0.0
        self.log = log
        self.closed_at: float | None = None
        """Set for a run stopped before its end (:func:`_run`'s ``until``): a last sample at
        that time, so the span from the last change to it is counted; the totals then cover
        only the run up to there."""
        self._steps_ended: list[int] = []
        """Log lengths at the end of steps that must be samples of their own (a calendar
        flip and submits at the same time are two steps)."""
        self._carry = np.zeros((len(names), 3), dtype=np.float64)
        """Each share's own, borrowed and lent instances at the last sample integrated so far
        (whose span is not yet known: :meth:`flush`)."""
        self._types: dict[str, int] = {}
        self._rows = np.zeros((5, 0), dtype=np.int64)
        """Sample, share, lender share, instance type and signed instances of each row."""

    def start(self) -> None:
        """The first instant: time 0, before anything is held."""
        self.steps = 1

    def end_step(self) -> None:
        """A step ended (at the time of its last log entry): the next entries, whatever their
        time, are a new sample."""
        self._steps_ended.append(len(self.log.changes))

    def _read_log(self) -> None:
        """Rows from the log and the sample times: a new sample at each new time or step
        (the first sample is the one carried from the last flush: time 0 at first)."""
        changes = self.log.changes
        self.times = self.times[-1:]
        if not changes:
            self._rows = np.zeros((5, 0), dtype=np.int64)
            if self.closed_at is not None and self.closed_at > self.times[-1]:
                self.times.append(self.closed_at)
            return
        when, holders, lenders, itypes, counts = zip(*changes, strict=True)
        rows = len(changes)
        times = np.fromiter(when, dtype=np.float64, count=rows)
        starts = np.empty(len(times), dtype=bool)
        starts[0] = True
        starts[1:] = times[1:] != times[:-1]
        ended = [end for end in self._steps_ended if end < len(times)]
        starts[ended] = True
        self.times = [self.times[-1], *times[starts].tolist()]
        if self.closed_at is not None and self.closed_at > self.times[-1]:
            self.times.append(self.closed_at)  # no change there: the counts stay as they were
        index = {name: i for i, name in enumerate(self.names)}
        types = self._types
        for itype in dict.fromkeys(itypes):
            types.setdefault(itype, len(types))
        self._rows = np.empty((5, rows), dtype=np.int64)
        np.cumsum(starts, out=self._rows[0])
        for row, values in enumerate(
            (
                map(index.__getitem__, holders),
                map(index.__getitem__, lenders),
                map(types.__getitem__, itypes),
                counts,
            ),
            start=1,
        ):
            self._rows[row] = np.fromiter(values, dtype=np.int64, count=rows)

    def _counts(self, select: np.ndarray) -> np.ndarray:
        """Instances of the selected rows held at each sample (float64, exact)."""
        sample, count = self._rows[0], self._rows[4]
        per_sample = np.bincount(
            sample[select], weights=count[select].astype(np.float64), minlength=len(self.times)
        )
        return np.cumsum(per_sample)

    def share_counts(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The share's own, borrowed and lent instances at each sample (of the last flush)."""
        share = self.names.index(name)
        holder, lender = self._rows[1], self._rows[2]
        own = holder == lender
        carried = self._carry[share]
        return (
            carried[0] + self._counts(own & (holder == share)),
            carried[1] + self._counts(~own & (holder == share)),
            carried[2] + self._counts(~own & (lender == share)),
        )

    def integrate(self) -> None:
        """Set :attr:`totals` and :attr:`used_in_window` for the whole run (its last
        :meth:`flush`); the log is kept (the baseline reads it)."""
        self.flush(keep=True)

    def flush(self, *, keep: bool = False) -> None:
        """Add the log so far to :attr:`totals` and :attr:`used_in_window` (span i, sample i
        to i+1, at the values of sample i, summed span after span, shares in order) and drop
        it; the last sample, whose span the next change ends, is carried to the next flush.

        A streamed run flushes between two instants, where the next change starts a new
        sample, so its figures are those of one flush at the end to the last bit (sums
        continued left to right)."""
        self._read_log()
        times = np.array(self.times, dtype=np.float64)
        span = times[1:] - times[:-1]
        window = self.window_s
        in_window = np.maximum(0.0, np.minimum(times[1:], window) - np.minimum(times[:-1], window))
        used = np.empty((len(span), len(self.names)), dtype=np.float64)
        for column, name in enumerate(self.names):
            series = self.share_counts(name)
            own, borrowed, lent = (values[:-1] for values in series)
            totals = self.totals[name]
            self.totals[name] = [
                _running_sum(own * span, totals[0]),
                _running_sum(borrowed * span, totals[1]),
                _running_sum(lent * span, totals[2]),
                _running_sum(own * in_window, totals[3]),
            ]
            used[:, column] = (own + borrowed) * in_window
            self._carry[column] = [values[-1] for values in series]
        self.used_in_window = _running_sum(used.ravel(), self.used_in_window)
        self.samples += len(span)
        if not keep:
            del self.log.changes[:]
            self._steps_ended = []


def _running_sum(values: np.ndarray, start: float = 0.0) -> float:
    """``start + values[0] + values[1] + ...`` added left to right, as a loop would (not
    ``np.sum``'s pairwise order, whose last bits differ)."""
    if not len(values):
        return start
    if start:
        values = np.concatenate(([start], values))
    return float(np.add.accumulate(values)[-1])


class _Recorder(_Usage):
    """:class:`_Usage` plus the timeline: usage per share and instance type, preemptions."""

    def __init__(self, sched: Scheduler, window_s: float) -> None:
        super().__init__(sched, window_s)
        queue = sched.queue
        self.types = list(queue.service_environment_capacity())
        self.timeline = Timeline(
            capacity=queue.service_environment_capacity(),
            max_usable={t: {n: queue.max_usable(n, t) for n in self.names} for t in self.types},
            borrowing=[s.name for s in queue.shares if s.strategy.borrows],
        )

    def finish(self) -> Timeline:
        """The timeline: every series with one value per sample, the preemptions started."""
        timeline = self.timeline
        timeline.times.extend(self.times)
        timeline.preemptions.extend(self.log.preemptions)
        _, holder, lender, kind, _ = self._rows
        own = holder == lender
        for itype in self.types:
            of_type = kind == self._types.get(itype, -1)
            own_by_share = timeline.own_by_type.setdefault(itype, {})
            borrowed_by_share = timeline.borrowed_by_type.setdefault(itype, {})
            for share, name in enumerate(self.names):
                mine = of_type & (holder == share)
                own_by_share[name] = self._counts(mine & own).astype(np.int64).tolist()
                borrowed_by_share[name] = self._counts(mine & ~own).astype(np.int64).tolist()
        return timeline


_U = TypeVar("_U", bound=_Usage)


def _request(index: int, job: WorkloadJob) -> JobRequest:
    return JobRequest(
        job_name=f"{job.share}-{index}",
        share_name=job.share,
        demand={job.instance_type: job.instance_count},
        duration_s=job.duration_s,
        priority=job.priority,
        checkpoint_interval_s=job.checkpoint_interval_s,
        job_id=f"job-{index:07d}",
    )


def on_simulated_clock(calendar: ShareCalendar) -> ShareCalendar:
    """``calendar`` as the simulator reads it: its windows on the workload's week clock, so
    that time 0 is Monday 00:00 in the calendar's own time zone (a workload's times are its
    teams' local times; simulated time has no daylight-saving jump)."""
    if calendar.timezone == DEFAULT_TIMEZONE:
        return calendar
    return replace(calendar, timezone=DEFAULT_TIMEZONE)


def on_simulated_clocks(org: Organisation) -> Organisation:
    """``org`` with every calendar :func:`on_simulated_clock` (what a simulated bill reads)."""
    if all(c.timezone == DEFAULT_TIMEZONE for c in org.calendars.values()):
        return org
    calendars = {name: on_simulated_clock(c) for name, c in org.calendars.items()}
    return replace(org, calendars=calendars)


def follow_timetable(
    sched: Scheduler,
    calendars: Mapping[str, ShareCalendar],
    plans: Sequence[TrainingPlanSpec],
    options: SimulationOptions,
) -> None:
    """Register the shares' ``calendars`` (time 0 is :data:`SIMULATION_START`) and the plans'
    windows (time 0 is ``options.plan_epoch_s``, else the first named plan's start) with
    ``sched``'s timetable, as the emulator registers them on its clock."""
    for share in sched.queue.shares:
        calendar = calendars.get(share.name)
        if calendar is not None:
            sched.follow_calendar(
                share,
                on_simulated_clock(calendar),
                epoch_s=SIMULATION_START.timestamp(),
                grace_s=options.calendar_grace_s,
            )
    named = [p for p in plans if not p.by_arn]
    first = min((p.start_s for p in named), default=0.0)
    sched.follow_plans(
        named,
        epoch_s=first if options.plan_epoch_s is None else options.plan_epoch_s,
        stop_before_end_s=options.plan_stop_before_end_s,
        on_demand=dict(options.on_demand_with_plans),
    )


def _run(
    queue: JobQueueSpec,
    name: str,
    jobs: Sequence[WorkloadJob],
    options: SimulationOptions,
    window_s: float,
    recorder_type: Callable[[Scheduler, float], _U],
    progress: Progress | None = None,
    calendars: Mapping[str, ShareCalendar] | None = None,
    plans: Sequence[TrainingPlanSpec] = (),
    until: float = math.inf,
) -> tuple[Scheduler, _U]:
    """Run ``jobs`` (sorted by submit time) through a scheduler for ``queue``, measured by a
    ``recorder_type``; shares with a calendar flip at its edges, plan-backed capacity exists
    only in the plans' windows. ``until``: stop before that time (the instants before it are
    run as in the whole run: nothing at or after it can change them), the recorder closed
    there."""
    workload = _sorted(jobs)
    sched = Scheduler.for_queue(
        queue, queue_name=f"{name}-queue", options=options.scheduler_options(queue)
    )
    follow_timetable(sched, calendars or {}, plans, options)
    recorder = recorder_type(sched, window_s)
    recorder.start()
    feeder = _Feeder(sched, recorder, name, progress, until)
    with collector_paused():
        feeder.feed(workload.requests, workload.times, workload)
    recorder.steps += feeder.steps
    if until != math.inf:
        recorder.closed_at = until
    recorder.integrate()
    recorder.end_time = sched.now
    return sched, recorder


class _Workload(list[WorkloadJob]):
    """A workload sorted by submit time, with the core's requests and their submit times, made
    once (a run and its baseline, or the runs of a comparison, share them)."""

    def __init__(self, jobs: Iterable[WorkloadJob]) -> None:
        super().__init__(sorted(jobs, key=_SUBMIT_TIME))
        self.requests = [_request(index, job) for index, job in enumerate(self)]
        self.times = [job.submit_time_s for job in self]

    def of_shares(self, names: Container[str]) -> _Workload:
        """The jobs of the shares ``names``, with the requests made for the whole workload."""
        keep = [index for index, job in enumerate(self) if job.share in names]
        subset = _Workload(())
        subset.extend(self[index] for index in keep)
        subset.requests = [self.requests[index] for index in keep]
        subset.times = [self.times[index] for index in keep]
        return subset


_SUBMIT_TIME = attrgetter("submit_time_s")


def _sorted(jobs: Sequence[WorkloadJob]) -> _Workload:
    """``jobs`` sorted by submit time, with their requests (made once)."""
    return jobs if isinstance(jobs, _Workload) else _Workload(jobs)


def simulated_jobs(
    org: Organisation, jobs: Sequence[WorkloadJob], *, options: SimulationOptions | None = None
) -> list[Job]:
    """Every job of ``jobs`` after running them through ``org``'s queue (attempts included),
    with its share calendars and training plans, as :func:`simulate` runs them."""
    return list(simulated_scheduler(org, jobs, options=options).jobs)


def simulated_scheduler(
    org: Organisation, jobs: Sequence[WorkloadJob], *, options: SimulationOptions | None = None
) -> Scheduler:
    """The scheduler after :func:`simulated_jobs`' run: its jobs, shares and timetable (the
    calendar flips applied) as the run left them."""
    options = options or SimulationOptions()
    check_workload(org, jobs)
    ordered = _sorted(jobs)
    window = options.window_s or default_window(ordered)
    sched, _ = _run(
        org.queue,
        org.name,
        ordered,
        options,
        window,
        _Usage,
        calendars=org.calendars,
        plans=org.training_plans,
    )
    return sched


class _Feeder:
    """Submits a workload to a scheduler, a chunk at a time: each job at its time, advancing
    from instant to instant (the core's :meth:`~Scheduler.feed`, between calendar flips)
    until the run ends or the next instant is ``until`` or later. Calendar flips are applied
    at their times while jobs remain (they never prolong a run); a plan's edge is while jobs
    wait. Fed chunk by chunk (:meth:`feed`: every job of the chunk, and the time of the next
    chunk's first job), a run makes the same calls as fed the whole workload at once."""

    def __init__(
        self,
        sched: Scheduler,
        recorder: _Usage,
        name: str,
        progress: Progress | None,
        until: float,
    ) -> None:
        self.sched, self.recorder, self.name, self.until = sched, recorder, name, until
        self.report = None if progress is None else (lambda now: progress(name, now))
        self.requests: list[JobRequest] = []
        self.times: list[float] = []
        self.jobs: list[WorkloadJob] = []
        self.index = 0
        self.first = 0
        """The workload index of ``jobs[0]``."""
        self.flipped = 0
        self.ended = False
        """The run is over (nothing left before ``until``): later jobs are not submitted."""
        self.forgotten = 0
        """Finished jobs the scheduler was told to forget (:meth:`forget_finished`)."""

    def feed(
        self,
        requests: Sequence[JobRequest],
        times: Sequence[float],
        jobs: Sequence[WorkloadJob],
        next_time: float = math.inf,
    ) -> None:
        """Add a chunk and run every instant before ``next_time`` (``math.inf``: the last
        chunk, run to the end)."""
        if self.index:
            del self.requests[: self.index], self.times[: self.index], self.jobs[: self.index]
            self.first += self.index
            self.index = 0
        self.requests += requests
        self.times += times
        self.jobs += jobs
        if not self.ended:
            self._run_before(next_time)

    def _run_before(self, limit: float) -> None:
        sched, timetable = self.sched, self.sched.timetable
        requests, times = self.requests, self.times
        count = len(requests)
        while True:
            before = min(timetable.next_time(), self.until, limit)
            try:
                self.index = sched.feed(
                    requests, times, self.index, before, self.report, PROGRESS_EVERY
                )
            except SubmitRejected as exc:
                index = self.forgotten + len(sched.jobs)  # the jobs submitted before it
                raise _rejected(exc, index, self.jobs[index - self.first], self.name) from None
            next_submit = times[self.index] if self.index < count else limit
            next_event = sched.next_event_time()
            now = min(next_submit, math.inf if next_event is None else next_event)
            if now == math.inf and any(j.status.is_active for j in sched.jobs):
                now = timetable.next_plan_edge()  # jobs wait for a plan's window
            if now == math.inf or now >= self.until:
                self.ended = True
                return
            if now >= limit:
                return  # the next chunk's first job comes first
            now = timetable.next_time()  # the feed stopped before it
            sched.advance(now)
            self.recorder.end_step()  # a sample of its own, even with submits at that time
            self.flipped += 1

    @property
    def steps(self) -> int:
        """Instants stepped through so far."""
        return self.sched.instants_fed + self.flipped

    def forget_finished(self, tallies: Mapping[str, _ShareTally]) -> None:
        """Add every job that ended since the last call to its share's tally and make the
        scheduler forget it: a streamed run holds only the jobs that have not ended."""
        sched = self.sched
        finished = sched.keep_usage_log().finished
        for job in finished:
            tallies[job.share_name].add(sched, job)
            sched.forget(job.job_id)
        self.forgotten += len(finished)
        del finished[:]


def _rejected(exc: SubmitRejected, index: int, job: WorkloadJob, org: str) -> WorkloadError:
    """A refused submit as a workload error naming the CSV line (or job index)."""
    where = f"line {job.line}" if job.line is not None else f"job {index}"
    problems = [Problem(f"{where}: {p.path}", p.value, p.message, p.fix) for p in exc.problems]
    return WorkloadError(problems, context=f"workload for {org}")


def _percentile(values: Sequence[float] | np.ndarray, q: float) -> float:
    """Percentile ``q`` of sorted ``values``: ``statistics.quantiles(values, n=100,
    method="inclusive")[round(q) - 1]``, the same arithmetic without copying the values."""
    count = len(values)
    if not count:
        return 0.0
    if count == 1:
        return float(values[0])
    j, delta = divmod(round(q) * (count - 1), 100)
    return (float(values[j]) * (100 - delta) + float(values[j + 1]) * delta) / 100


def _lost_instance_hours(job: Job) -> float:
    interval = job.request.checkpoint_interval_s
    lost = 0.0
    for attempt in job.attempts:
        if not attempt.preempted or attempt.started_at is None:
            continue
        ran = attempt.stopped_at - attempt.started_at
        kept = math.floor(ran / interval) * interval if interval else 0.0
        lost += (ran - kept) * sum(job.demand.values())
    return lost / HOUR_S


def _pending_message(sched: Scheduler, job: Job) -> str:
    pending = sched.pending_reason(job.job_id)
    return pending.message if pending else "unknown"


def _add_exact(partials: list[float], value: float) -> None:
    """Add ``value`` to the exact sum held as non-overlapping ``partials`` (Shewchuk's, as
    ``math.fsum`` keeps them): ``math.fsum(partials)`` is then ``math.fsum`` of every value."""
    kept = 0
    for other in partials:
        if abs(value) < abs(other):
            value, other = other, value
        high = value + other
        low = other - (high - value)
        if low:
            partials[kept] = low
            kept += 1
        value = high
    partials[kept:] = [value]


class _ShareTally:
    """One share's per-job figures, added job by job in any order (a streamed run adds each
    job when it ends and forgets it): the waits and completion times as 8 bytes each (their
    percentiles are exact), sums kept exact or in submit order, so the metrics are the same
    to the last bit whatever the order."""

    def __init__(self) -> None:
        self.jobs = self.failed = self.preempted = 0
        self.waits = array("d")
        self.completions = array("d")
        self.stretch: list[float] = []
        """Exact partial sums of ``duration / completion time`` (:func:`_add_exact`)."""
        self.stretched = 0
        self.preemptions = {rule.value: 0 for rule in PreemptionRule}
        self.not_started: dict[str, list[int]] = {}
        """Reason -> [first job's submit order, jobs]."""
        self.lost_order = array("q")
        self.lost = array("d")
        """Lost instance-hours of each preempted job, its submit order in ``lost_order``
        (arrays, not objects: a long run leaves no small objects behind)."""

    def add(self, sched: Scheduler, job: Job) -> None:
        """Count ``job`` (still known to ``sched``)."""
        self.jobs += 1
        first = job.attempts[0].scheduled_at if job.attempts else job.scheduled_at
        if first is not None:
            self.waits.append(first - job.created_at)
        else:
            reason = job.status_reason or _pending_message(sched, job)
            seen = self.not_started.setdefault(reason, [job.seq, 0])
            seen[0] = min(seen[0], job.seq)
            seen[1] += 1
        if job.status is JobStatus.SUCCEEDED and job.stopped_at is not None:
            completion = job.stopped_at - job.created_at
            self.completions.append(completion)
            if job.request.duration_s and completion > 0:
                _add_exact(self.stretch, min(1.0, job.request.duration_s / completion))
                self.stretched += 1
        elif job.status is JobStatus.FAILED:
            self.failed += 1
        for record in job.preemptions:
            self.preemptions[record.rule.value] += 1
        if job.preemptions:  # only a preempted attempt loses work
            self.preempted += 1
            self.lost_order.append(job.seq)
            self.lost.append(_lost_instance_hours(job))

    def metrics(
        self, spec: QuotaShareSpec, totals: list[float], window_s: float
    ) -> tuple[ShareMetrics, float | None, np.ndarray]:
        """The share's metrics, its mean stretch (``None`` without a completed job) and its
        waits, sorted."""
        waits = np.sort(np.frombuffer(self.waits, dtype=np.float64))
        completions = np.sort(np.frombuffer(self.completions, dtype=np.float64))
        lost = 0.0
        order = np.argsort(np.frombuffer(self.lost_order, dtype=np.int64), kind="stable")
        for hours in np.frombuffer(self.lost, dtype=np.float64)[order].tolist():
            lost += hours
        reasons = sorted(self.not_started.items(), key=lambda item: item[1][0])
        capacity_s = sum(spec.capacity.values()) * window_s
        jobs, done = self.jobs, len(completions)
        metrics = ShareMetrics(
            share=spec.name,
            strategy=spec.strategy.value,
            jobs=jobs,
            completed=done,
            failed=self.failed,
            never_started=jobs - len(waits),
            not_started_reasons={reason: seen[1] for reason, seen in reasons},
            wait_p50_s=_percentile(waits, 50),
            wait_p95_s=_percentile(waits, 95),
            wait_max_s=float(waits[-1]) if len(waits) else 0.0,
            completion_mean_s=math.fsum(self.completions) / done if done else 0.0,
            completion_p95_s=_percentile(completions, 95),
            completion_max_s=float(completions[-1])
            if done == jobs and jobs
            else (math.inf if jobs else 0.0),
            preemptions=self.preemptions,
            preempted_jobs=self.preempted,
            lost_instance_hours=lost,
            own_use=totals[3] / capacity_s if capacity_s else 0.0,
            borrowed_instance_hours=totals[1] / HOUR_S,
            lent_instance_hours=totals[2] / HOUR_S,
        )
        stretch = math.fsum(self.stretch) / self.stretched if self.stretched else None
        return metrics, stretch, waits


def jain(values: Sequence[float]) -> float:
    """Jain's fairness index: 1 when all values are equal, 1/n when one share gets everything."""
    if not values or not any(values):
        return 1.0
    return sum(values) ** 2 / (len(values) * sum(v * v for v in values))


def _utilisation(queue: JobQueueSpec, used_s: float, window_s: float) -> float:
    capacity = sum(queue.service_environment_capacity().values()) * window_s
    return used_s / capacity if capacity else 0.0


def simulate(
    org: Organisation,
    jobs: Sequence[WorkloadJob],
    *,
    options: SimulationOptions | None = None,
    baseline: float | None = None,
    progress: Progress | None = None,
) -> SimulationResult:
    """Run ``jobs`` through ``org``'s queue and its all-RESERVE baseline; measure both.

    ``baseline``: a precomputed baseline utilisation (compare mode reuses it for organisations
    with the same shares; an all-RESERVE organisation is its own); ``progress``: called during
    the run with the simulated time. Raises :class:`WorkloadError` when a job names an unknown
    share.
    """
    options = options or SimulationOptions()
    check_workload(org, jobs)
    jobs = _sorted(jobs)
    window = options.window_s or default_window(jobs)
    sched, recorder = _run(
        org.queue,
        org.name,
        jobs,
        options,
        window,
        _Recorder,
        progress,
        org.calendars,
        org.training_plans,
    )
    if baseline is None and org.queue == baseline_queue(org.queue) and not org.calendars:
        baseline = _utilisation(org.queue, recorder.used_in_window, window)  # it is the baseline
    elif baseline is None:
        baseline = baseline_utilisation(org, jobs, options=options, window_s=window, run=recorder)
    tallies = {n: _ShareTally() for n in recorder.names}
    for job in sched.jobs:
        tallies[job.share_name].add(sched, job)
    return _result(org, tallies, recorder, baseline, recorder.finish(), tuple(sched.jobs))


def _result(
    org: Organisation,
    tallies: Mapping[str, _ShareTally],
    usage: _Usage,
    baseline: float,
    timeline: Timeline,
    jobs: tuple[Job, ...],
) -> SimulationResult:
    """The result of ``org``'s run: its shares' ``tallies``, its ``usage`` (integrated)."""
    window = usage.window_s
    metrics, stretches = [], []
    for spec in org.queue.shares:
        m, stretch, waits = tallies[spec.name].metrics(spec, usage.totals[spec.name], window)
        metrics.append(m)
        if jobs:  # the whole run is kept: the waits for the plots
            timeline.waits[spec.name] = waits.tolist()
        if stretch is not None:
            stretches.append(stretch)
    return SimulationResult(
        organisation=org.name,
        window_s=window,
        end_s=usage.end_time,
        utilisation=_utilisation(org.queue, usage.used_in_window, window),
        baseline_utilisation=baseline,
        fairness=jain(stretches),
        shares=tuple(metrics),
        timeline=timeline,
        events=usage.steps,
        jobs=jobs,
    )


def baseline_utilisation(
    org: Organisation,
    jobs: Sequence[WorkloadJob],
    *,
    options: SimulationOptions | None = None,
    window_s: float | None = None,
    run: _Usage | None = None,
) -> float:
    """Utilisation of the all-RESERVE version of ``org`` on ``jobs`` over the same window.

    ``run``: the usage of ``org``'s own run of ``jobs`` with the same options. The shares it
    already ran as the baseline runs them (:func:`runs_as_baseline`) are read from it and only
    the others are simulated: such a share neither lends nor borrows, so it runs alone as it
    runs among the others.

    The baseline is run only up to the end of the window: nothing after it counts, and
    nothing at or after it can change the instants before (an overloaded workload's backlog
    drains long after its window). Both give the figure of the whole all-RESERVE run to the
    last bit (``tests/advisor/test_simulate_properties.py`` checks).
    """
    options = options or SimulationOptions()
    jobs = _sorted(jobs)
    window = window_s or options.window_s or default_window(jobs)
    queue = baseline_queue(org.queue)
    kept = runs_as_baseline(org) if run is not None else frozenset()
    if run is None or not kept:
        _, usage = _run(
            queue, org.name, jobs, options, window, _Usage, plans=org.training_plans, until=window
        )
        return _utilisation(queue, usage.used_in_window, window)
    rest = replace(queue, shares=tuple(s for s in queue.shares if s.name not in kept))
    simulated: list[tuple[float, str, str, str, int]] = []
    if rest.shares:
        names = {s.name for s in rest.shares}
        workload = jobs.of_shares(names)
        _, usage = _run(rest, org.name, workload, options, window, _Usage, until=window)
        simulated = usage.log.changes
    reused = (c for c in run.log.changes if c[1] in kept and c[0] < window)
    changes = heapq.merge(simulated, reused, key=itemgetter(0))
    merged = _Usage.of_changes([s.name for s in queue.shares], changes, window)
    merged.closed_at = window
    merged.integrate()
    return _utilisation(queue, merged.used_in_window, window)


def runs_as_baseline(org: Organisation) -> frozenset[str]:
    """The shares of ``org`` that its own run runs exactly as its all-RESERVE baseline does:
    RESERVE without in-share preemption (the baseline's own share spec) and without a calendar
    of their own, in an organisation without training plans (a plan's window limits every
    share's capacity together). Other shares' calendars change only their strategies, borrow
    limits and in-share preemption, never a capacity: such a share still neither lends nor
    borrows, and the service environment (the sum of the shares' capacities) never holds back
    its own capacity."""
    if org.training_plans:
        return frozenset()
    baseline = baseline_queue(org.queue).shares
    return frozenset(
        s.name
        for s, b in zip(org.queue.shares, baseline, strict=True)
        if s == b and s.name not in org.calendars
    )


def compare(
    orgs: Sequence[Organisation],
    jobs: Sequence[WorkloadJob],
    *,
    options: SimulationOptions | None = None,
    progress: Progress | None = None,
) -> list[SimulationResult]:
    """Simulate each organisation on the same workload; organisations with the same shares and
    capacities share one baseline figure, computed once, by the first of them to run (from
    its own run where it can: :func:`baseline_utilisation`'s ``run``)."""
    options = options or SimulationOptions()
    for org in orgs:
        check_workload(org, jobs)
    jobs = _sorted(jobs)  # requests made once for every run
    cache: list[tuple[JobQueueSpec, float]] = []
    results = []
    for org in orgs:
        reserve = baseline_queue(org.queue)
        known = [value for queue, value in cache if queue == reserve]
        if known:
            results.append(
                simulate(org, jobs, options=options, baseline=known[0], progress=progress)
            )
            continue
        result = simulate(org, jobs, options=options, progress=progress)
        cache.append((reserve, result.baseline_utilisation))
        results.append(result)
    return results


def alternatives(org: Organisation) -> dict[str, Organisation]:
    """What ``quota recommend --simulate`` compares a recommendation with.

    ``all-RESERVE``: no sharing; ``all-LEND_AND_BORROW``: every share lends and borrows without
    limit (in-share preemption unchanged).
    """
    unlimited = JobQueueSpec(
        shares=tuple(
            replace(s, strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit=None)
            for s in org.queue.shares
        ),
        priority=org.queue.priority,
        runnable_timeout_minutes=org.queue.runnable_timeout_minutes,
    )
    return {
        "recommended": org,
        "all-RESERVE": replace(org, queue=all_reserve(org.queue), calendars={}),
        "all-LEND_AND_BORROW": replace(org, queue=unlimited, calendars={}),
    }


# --- streamed runs ----------------------------------------------------------------------------

STREAM_CHUNK_JOBS = 16_384
"""Jobs read from a streamed workload at a time; between two chunks every run forgets the jobs
that ended and integrates its usage so far."""


@dataclass
class _StreamRun:
    """One run of a streamed comparison: an organisation's, or an all-RESERVE baseline."""

    feeder: _Feeder
    usage: _Usage
    tallies: dict[str, _ShareTally] | None
    """Per share (a measured run); ``None`` for a baseline (only its usage counts)."""

    def between_chunks(self) -> None:
        """Measure and forget the jobs that ended; integrate the usage so far."""
        self.feeder.forget_finished(self.tallies or _Discard())
        self.usage.flush()
        del self.usage.log.preemptions[:]  # only the plot reads them (a kept run's timeline)

    def finish(self) -> None:
        self.feeder.forget_finished(self.tallies or _Discard())
        if self.feeder.until != math.inf:
            self.usage.closed_at = self.feeder.until
        self.usage.steps += self.feeder.steps
        self.usage.flush()
        self.usage.end_time = self.feeder.sched.now
        sched = self.feeder.sched
        if self.tallies is not None:
            for job in sched.jobs:  # the jobs that never ended
                self.tallies[job.share_name].add(sched, job)


class _Discard(dict[str, _ShareTally]):
    """Tallies that count nothing (a baseline's jobs)."""

    def __missing__(self, key: str) -> _ShareTally:
        return _NO_TALLY


class _NoTally(_ShareTally):
    def add(self, sched: Scheduler, job: Job) -> None:
        return None


_NO_TALLY = _NoTally()


def _stream_run(
    queue: JobQueueSpec,
    org: Organisation,
    options: SimulationOptions,
    window_s: float,
    *,
    baseline: bool,
    progress: Progress | None = None,
) -> _StreamRun:
    """A run of ``queue`` (``org``'s, or its all-RESERVE ``baseline`` up to the window)."""
    sched = Scheduler.for_queue(
        queue, queue_name=f"{org.name}-queue", options=options.scheduler_options(queue)
    )
    follow_timetable(sched, {} if baseline else org.calendars, org.training_plans, options)
    usage = _Usage(sched, window_s)
    usage.start()
    until = window_s if baseline else math.inf
    feeder = _Feeder(sched, usage, org.name, None if baseline else progress, until)
    tallies = None if baseline else {s.name: _ShareTally() for s in queue.shares}
    return _StreamRun(feeder, usage, tallies)


def _chunks(
    jobs: Iterator[WorkloadJob],
) -> Iterator[tuple[list[JobRequest], list[float], list[WorkloadJob]]]:
    """``jobs`` (in submit-time order) :data:`STREAM_CHUNK_JOBS` at a time, with their
    requests (numbered from 0 across chunks) and submit times."""
    index = 0
    while True:
        chunk = list(itertools.islice(jobs, STREAM_CHUNK_JOBS))
        if not chunk:
            return
        requests = [_request(i, job) for i, job in enumerate(chunk, start=index)]
        yield requests, [job.submit_time_s for job in chunk], chunk
        index += len(chunk)


def simulate_stream(
    orgs: Sequence[Organisation],
    jobs: Iterator[WorkloadJob],
    *,
    window_s: float,
    options: SimulationOptions | None = None,
    progress: Progress | None = None,
    read: Callable[[int], None] | None = None,
) -> list[SimulationResult]:
    """:func:`compare` for a workload read once, as a stream: ``jobs`` in submit-time order
    (their shares checked, e.g. by :func:`check_share_names`), ``window_s`` the window
    (:func:`default_window` of the jobs, unless ``options`` sets one).

    Every organisation's run and each all-RESERVE baseline it needs run side by side, a chunk
    of :data:`STREAM_CHUNK_JOBS` jobs at a time; between chunks each run measures the jobs that
    ended and forgets them, and integrates its usage, so memory holds the jobs that have not
    ended, the chunk and 16 bytes per job (each wait and completion time, for exact
    percentiles), besides the core's per-job counters. The figures are :func:`compare`'s to
    the last bit; the results have no per-job data (``jobs`` empty, the timeline without
    series): plots and bills need the workload in memory. ``read``: called after each chunk
    with the jobs read so far.
    """
    options = options or SimulationOptions()
    window = options.window_s or window_s
    runs = [
        _stream_run(org.queue, org, options, window, baseline=False, progress=progress)
        for org in orgs
    ]
    sources: list[tuple[JobQueueSpec, _StreamRun | _DerivedBaseline]] = []
    """Each all-RESERVE queue and the run whose usage gives its figure (the first
    organisation needing it decides, as in :func:`compare`)."""
    measured_by: list[_StreamRun | _DerivedBaseline] = []
    baselines: list[_StreamRun] = []
    derived: list[_DerivedBaseline] = []
    for org, run in zip(orgs, runs, strict=True):
        reserve = baseline_queue(org.queue)
        known = [source for queue, source in sources if queue == reserve]
        if known:
            measured_by.append(known[0])
            continue
        source: _StreamRun | _DerivedBaseline = run  # it is its own baseline
        if org.queue != reserve or org.calendars:
            if runs_as_baseline(org):
                source = _DerivedBaseline(org, run, options, window)
                derived.append(source)
                baselines += [] if source.rest is None else [source.rest]
            else:
                source = _stream_run(reserve, org, options, window, baseline=True)
                baselines.append(source)
        sources.append((reserve, source))
        measured_by.append(source)
    _stream_chunks([*runs, *baselines], derived, jobs, read)
    results = []
    for org, run, source in zip(orgs, runs, measured_by, strict=True):
        reserve = baseline_queue(org.queue)
        baseline = _utilisation(reserve, source.usage.used_in_window, window)
        timeline = Timeline(capacity=org.queue.service_environment_capacity())
        assert run.tallies is not None
        results.append(_result(org, run.tallies, run.usage, baseline, timeline, ()))
    return results


class _DerivedBaseline:
    """An all-RESERVE baseline read partly from an organisation's own streamed run, as
    :func:`baseline_utilisation` reads it from a run in memory: the shares the run runs as the
    baseline does (:func:`runs_as_baseline`) from its usage log, chunk by chunk, the others
    from a run of their own (``rest``) up to the window; their logs merged in time order."""

    def __init__(
        self, org: Organisation, run: _StreamRun, options: SimulationOptions, window_s: float
    ) -> None:
        queue = baseline_queue(org.queue)
        self.kept = runs_as_baseline(org)
        self.run = run
        self.window_s = window_s
        rest = replace(queue, shares=tuple(s for s in queue.shares if s.name not in self.kept))
        self.rest = (
            _stream_run(rest, org, options, window_s, baseline=True) if rest.shares else None
        )
        self.usage = _Usage.of_changes([s.name for s in queue.shares], [], window_s)

    def collect(self) -> None:
        """Merge the changes both runs logged since the last call (before they flush)."""
        kept, window = self.kept, self.window_s
        simulated = [] if self.rest is None else self.rest.usage.log.changes
        reused = (c for c in self.run.usage.log.changes if c[1] in kept and c[0] < window)
        self.usage.log.changes.extend(heapq.merge(simulated, reused, key=itemgetter(0)))
        self.usage.flush()

    def finish(self) -> None:
        self.usage.closed_at = self.window_s
        self.usage.flush()


def _stream_chunks(
    runs: Sequence[_StreamRun],
    derived: Sequence[_DerivedBaseline],
    jobs: Iterator[WorkloadJob],
    read: Callable[[int], None] | None,
) -> None:
    """Feed ``runs`` side by side, chunk by chunk, the ``derived`` baselines collecting their
    logs before they flush; finish them."""
    chunks = _chunks(jobs)
    chunk = next(chunks, None)
    done = 0
    with collector_paused():
        while chunk is not None:
            following = next(chunks, None)
            next_time = following[1][0] if following is not None else math.inf
            for run in runs:
                run.feeder.feed(*chunk, next_time)
            for baseline in derived:
                baseline.collect()
            for run in runs:
                run.between_chunks()
            done += len(chunk[0])
            if read is not None:
                read(done)
            chunk = following
        for run in runs:
            run.finish()
        for baseline in derived:
            baseline.finish()
