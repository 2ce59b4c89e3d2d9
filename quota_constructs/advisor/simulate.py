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

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import numpy as np

from quota_constructs.advisor.workload import WorkloadError, WorkloadJob
from quota_constructs.model import (
    DISPATCHED_STATUSES,
    PLAN_STOP_BEFORE_END_S,
    JobQueueSpec,
    Organisation,
    Problem,
    QuotaShareSpec,
    ShareCalendar,
    SharingStrategy,
    TrainingPlanSpec,
    apply_plan_capacity,
    plan_capacity_edges,
)
from quota_constructs.scheduling import (
    EventKind,
    Job,
    JobRequest,
    JobStatus,
    PreemptionRule,
    Scheduler,
    SchedulerEvent,
    SchedulerOptions,
    SubmitRejected,
    collector_paused,
)

HOUR_S = 3600.0
SIMULATION_START = datetime(2024, 1, 1, tzinfo=UTC)
"""What simulated time 0 is to share calendars: a Monday, 00:00 UTC (as for workloads)."""
_STATE_CHANGE = EventKind.STATE_CHANGE
_PREEMPTION_STARTED = EventKind.PREEMPTION_STARTED
_DISPATCHED = frozenset(DISPATCHED_STATUSES)
"""The states that hold capacity (``JobStatus.is_dispatched``), for a quick test per event."""
PROGRESS_EVERY = 1024
"""Virtual-time instants between two progress calls."""
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
    preemption_s: float = 20.0
    """From 'preemption started' to the capacity being free."""
    window_s: float | None = None
    """End of the measurement window; ``None``: the latest submit + duration of the workload."""
    plan_epoch_s: float | None = None
    """UTC epoch of simulated time 0 for training plan windows; ``None``: the first plan's start."""
    plan_stop_before_end_s: float = PLAN_STOP_BEFORE_END_S
    """When, before a plan's end, its capacity goes and its running jobs stop (AWS: 30 min)."""
    on_demand_with_plans: tuple[tuple[str, int], ...] = ()
    """``(type, capacity)``: a plan's type whose capacity is on demand but for its plans'
    instances inside their windows (the reservation sizing's candidates; the model's
    ``mixed_capacity_at``); by default a plan's type has only its plans' instances."""

    def scheduler_options(self, queue: JobQueueSpec) -> SchedulerOptions:
        return SchedulerOptions(
            scheduled_to_starting_s=self.startup_s,
            starting_to_running_s=0.0,
            preemption_duration_s=self.preemption_s,
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
    jobs: tuple[Job, ...] = field(default=(), compare=False, repr=False)
    """Every job after the run, attempts included (what the cost model bills)."""

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
    problems = [
        Problem(
            f"{', '.join(where[:5])}{', ...' if len(where) > 5 else ''} ({len(where)} jobs).share",
            share,
            f"not a quota share of organisation {org.name!r} (shares: {', '.join(sorted(names))})",
            "use one of the organisation's share names",
        )
        for share, where in unknown.items()
    ]
    if problems:
        raise WorkloadError(problems, context=f"workload for {org.name}")


def default_window(jobs: Iterable[WorkloadJob]) -> float:
    """The earliest the workload could end on an empty system: max(submit + duration)."""
    return max((j.submit_time_s + j.duration_s for j in jobs), default=0.0)


class _Usage:
    """Instances each share holds, from the core's events; integrated over time at the end.

    A job's allocation (``Job.alloc``: lender share -> type -> instances) is added when it
    starts holding capacity (SCHEDULED) and removed when it stops (end or preemption), so an
    event costs O(lenders x types). A step that changed something logs its time and the new
    values of the shares it changed (constant work per event, none for a step that changed
    nothing); :meth:`integrate` sums the instance-seconds once, vectorised, in the same order
    and with the same float operations as a per-step loop over the shares would (a test
    checks the figures are identical). ``Scheduler.ledger()`` gives the same instance counts
    (a test checks). This is all the all-RESERVE baseline needs; :class:`_Recorder` adds the
    timeline.
    """

    def __init__(self, sched: Scheduler, window_s: float) -> None:
        self.window_s = window_s
        self.names = [s.name for s in sched.queue.shares]
        self.totals: dict[str, list[float]] = {n: [0.0, 0.0, 0.0, 0.0] for n in self.names}
        """Instance-seconds per share: own, borrowed, lent (whole run), own within the window
        (set by :meth:`integrate`)."""
        self.current: dict[str, list[int]] = {n: [0, 0, 0] for n in self.names}
        """Instances per share now: own, borrowed, lent."""
        self.held: dict[str, dict[str, dict[str, int]]] = {}
        self.used_in_window = 0.0
        self.times: list[float] = []
        """Time of each sample (a step that changed something)."""
        self.points: dict[str, list[tuple[int, int, int, int]]] = {
            n: [(0, 0, 0, 0)] for n in self.names
        }
        """Per share: (first sample, own, borrowed, lent) at each change."""
        self.changed: set[str] = set()
        """Shares whose ``current`` changed since the last record."""
        self.dirty = True
        self.steps = 0
        self.end_time = 0.0
        sched.subscribe(self.on_event)

    def on_event(self, event: SchedulerEvent) -> None:
        if event.kind is not _STATE_CHANGE:
            return
        was = event.previous_status in _DISPATCHED
        holds = event.status in _DISPATCHED
        if holds and not was:
            job = event.job
            alloc = {lender: dict(amounts) for lender, amounts in job.alloc.items()}
            self.held[job.job_id] = alloc
            self._apply(job.share_name, alloc, 1)
        elif was and not holds:
            job = event.job
            self._apply(job.share_name, self.held.pop(job.job_id), -1)

    def _apply(self, share: str, alloc: dict[str, dict[str, int]], sign: int) -> None:
        self.dirty = True
        changed = self.changed
        changed.add(share)
        current = self.current
        for lender, amounts in alloc.items():
            count = sign * sum(amounts.values())
            if lender == share:
                current[share][0] += count
            else:
                current[share][1] += count
                current[lender][2] += count
                changed.add(lender)

    def record(self, now: float) -> None:
        """Note a step; when something changed since the last sample, sample the new usage
        (the time and the changed shares' values). Nothing changed: nothing to do (the next
        sample accounts the whole span)."""
        self.steps += 1
        if not self.dirty:
            return
        self.dirty = False
        self._sample(now)

    def _sample(self, now: float) -> None:
        index = len(self.times)
        self.times.append(now)
        current, points = self.current, self.points
        for name in self.changed:
            own, borrowed, lent = current[name]
            points[name].append((index, own, borrowed, lent))
        self.changed.clear()

    def integrate(self) -> None:
        """Set :attr:`totals` and :attr:`used_in_window` from the samples: span i (sample i-1
        to i) at the values of sample i-1, summed span after span, shares in order."""
        times = np.array(self.times, dtype=np.float64)
        if len(times) < 2:
            return
        window = self.window_s
        span = times[1:] - times[:-1]
        in_window = np.maximum(0.0, np.minimum(times[1:], window) - np.minimum(times[:-1], window))
        used = np.empty((len(span), len(self.names)), dtype=np.float64)
        for column, name in enumerate(self.names):
            own, borrowed, lent = _series(self.points[name], len(times))
            self.totals[name] = [
                _running_sum(own * span),
                _running_sum(borrowed * span),
                _running_sum(lent * span),
                _running_sum(own * in_window),
            ]
            used[:, column] = (own + borrowed) * in_window
        self.used_in_window = _running_sum(used.ravel())


def _series(
    points: list[tuple[int, int, int, int]], samples: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Own, borrowed and lent instances during each span (the value of its first sample)."""
    starts = np.array([p[0] for p in points] + [samples - 1], dtype=np.int64)
    repeats = np.diff(starts)
    values = np.array([p[1:] for p in points], dtype=np.float64)
    expanded = np.repeat(values, repeats, axis=0)
    return expanded[:, 0], expanded[:, 1], expanded[:, 2]


def _running_sum(values: np.ndarray) -> float:
    """``0.0 + values[0] + values[1] + ...`` added left to right, as a loop would (not
    ``np.sum``'s pairwise order, whose last bits differ)."""
    return float(np.add.accumulate(values)[-1]) if len(values) else 0.0


class _Recorder(_Usage):
    """:class:`_Usage` plus the timeline: usage per share and instance type, preemptions.

    Each series keeps only its change points (sample index, own, borrowed), so a step costs
    what changed in it; :meth:`finish` expands them into the timeline's per-sample lists.
    """

    def __init__(self, sched: Scheduler, window_s: float) -> None:
        super().__init__(sched, window_s)
        queue = sched.queue
        self.types = list(queue.service_environment_capacity())
        self.timeline = Timeline(
            capacity=queue.service_environment_capacity(),
            max_usable={t: {n: queue.max_usable(n, t) for n in self.names} for t in self.types},
            borrowing=[s.name for s in queue.shares if s.strategy.borrows],
        )
        self.by_type: dict[tuple[str, str], list[int]] = {
            (t, n): [0, 0] for t in self.types for n in self.names
        }
        """Instances per (type, share) now: own, borrowed."""
        self.changes: dict[tuple[str, str], list[tuple[int, int, int]]] = {
            key: [(0, 0, 0)] for key in self.by_type
        }
        """Per (type, share): (first sample, own, borrowed) at each change."""
        self.changed_series: set[tuple[str, str]] = set()

    def on_event(self, event: SchedulerEvent) -> None:
        if event.kind is _PREEMPTION_STARTED and event.preemption is not None:
            self.timeline.preemptions.append(
                (event.time, event.job.share_name, event.preemption.rule.value)
            )
        super().on_event(event)

    def _apply(self, share: str, alloc: dict[str, dict[str, int]], sign: int) -> None:
        super()._apply(share, alloc, sign)
        by_type, changed = self.by_type, self.changed_series
        for lender, amounts in alloc.items():
            slot = 0 if lender == share else 1
            for itype, n in amounts.items():
                key = (itype, share)
                by_type[key][slot] += sign * n
                changed.add(key)

    def _sample(self, now: float) -> None:
        super()._sample(now)
        index = len(self.timeline.times)
        self.timeline.times.append(now)
        for key in self.changed_series:
            own, borrowed = self.by_type[key]
            points = self.changes[key]
            if points[-1][1:] != (own, borrowed):
                points.append((index, own, borrowed))
        self.changed_series.clear()

    def finish(self) -> Timeline:
        """The timeline with every series expanded to one value per sample."""
        length = len(self.timeline.times)
        for itype in self.types:
            own_by_share = self.timeline.own_by_type.setdefault(itype, {})
            borrowed_by_share = self.timeline.borrowed_by_type.setdefault(itype, {})
            for name in self.names:
                own_by_share[name], borrowed_by_share[name] = _expand(
                    self.changes[itype, name], length
                )
        return self.timeline


def _expand(points: list[tuple[int, int, int]], length: int) -> tuple[list[int], list[int]]:
    """Per-sample own and borrowed values from change points (first sample, own, borrowed)."""
    own: list[int] = []
    borrowed: list[int] = []
    ends = [start for start, _, _ in points[1:]] + [length]
    for (start, own_now, borrowed_now), end in zip(points, ends, strict=True):
        own += [own_now] * (end - start)
        borrowed += [borrowed_now] * (end - start)
    return own, borrowed


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


class _Calendars:
    """The shares' calendar changes in simulated seconds, applied through ``upsert_share`` as
    the emulator applies them (the same model function: ``ShareCalendar.next_change``)."""

    def __init__(
        self,
        queue: JobQueueSpec,
        calendars: Mapping[str, ShareCalendar],
        plans: _PlanWindows,
    ) -> None:
        self.plans = plans
        """The plans' windows, applied with the flips (at the same instants, in time order)."""
        self._shares = [(s, calendars[s.name]) for s in queue.shares if s.name in calendars]
        self._next: list[tuple[float, QuotaShareSpec]] = []
        for share, calendar in self._shares:
            self._queue_next(share, calendar, SIMULATION_START)

    def start(self, queue: JobQueueSpec) -> JobQueueSpec:
        """``queue`` with the settings in force at time 0."""
        calendars = dict((s.name, c) for s, c in self._shares)
        shares = tuple(
            calendars[s.name].in_force(s, SIMULATION_START) if s.name in calendars else s
            for s in queue.shares
        )
        return replace(queue, shares=shares)

    def _queue_next(self, share: QuotaShareSpec, calendar: ShareCalendar, after: datetime) -> None:
        change = calendar.next_change(share, after)
        if change is not None:
            seconds = (change.time - SIMULATION_START).total_seconds()
            self._next.append((seconds, change.settings))
            self._next.sort(key=lambda item: item[0])

    @property
    def next_time(self) -> float:
        return min(self._next[0][0] if self._next else math.inf, self.plans.next_time)

    def apply_due(self, sched: Scheduler, now: float) -> None:
        """Apply every change due by ``now``, each at its own time."""
        self.plans.apply_due(sched, now)
        while self._next and self._next[0][0] <= now:
            at, spec = self._next.pop(0)
            sched.upsert_share(spec, now=at)
            share, calendar = next((s, c) for s, c in self._shares if s.name == spec.name)
            self._queue_next(share, calendar, SIMULATION_START + timedelta(seconds=at))


class _PlanWindows:
    """Plan-backed capacity at the plans' edges in simulated seconds, applied through
    ``set_service_environment`` as the emulator applies it (the model's
    :func:`~quota_constructs.model.apply_plan_capacity`)."""

    def __init__(self, plans: Sequence[TrainingPlanSpec], options: SimulationOptions) -> None:
        self._plans = [p for p in plans if not p.by_arn]
        first = min((p.start_s for p in self._plans), default=0.0)
        self._epoch0 = first if options.plan_epoch_s is None else options.plan_epoch_s
        self._stop = options.plan_stop_before_end_s
        self._on_demand = dict(options.on_demand_with_plans)
        edges = plan_capacity_edges(self._plans, stop_before_end_s=self._stop)
        mixed = [p for p in self._plans if p.instance_type in self._on_demand]
        edges = sorted({*edges, *((p.end_s, p.instance_type) for p in mixed)})  # back at the end
        self._next = [(e - self._epoch0, t) for e, t in edges if e - self._epoch0 > 0]

    def start(self, sched: Scheduler) -> None:
        """The capacity at time 0."""
        for itype in sorted({p.instance_type for p in self._plans}):
            self._apply(sched, itype, 0.0)

    @property
    def next_time(self) -> float:
        return self._next[0][0] if self._next else math.inf

    def apply_due(self, sched: Scheduler, now: float) -> None:
        while self._next and self._next[0][0] <= now:
            at, itype = self._next.pop(0)
            self._apply(sched, itype, at)

    def _apply(self, sched: Scheduler, itype: str, at: float) -> None:
        apply_plan_capacity(
            sched,
            self._plans,
            itype,
            self._epoch0 + at,
            now=at,
            stop_before_end_s=self._stop,
            capacity=self._on_demand.get(itype),
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
) -> tuple[Scheduler, _U]:
    """Run ``jobs`` through a scheduler for ``queue``, measured by a ``recorder_type``; shares
    with a calendar flip at its edges, plan-backed capacity exists only in the plans' windows."""
    flips = _Calendars(queue, calendars or {}, _PlanWindows(plans, options))
    queue = flips.start(queue)
    sched = Scheduler.for_queue(
        queue, queue_name=f"{name}-queue", options=options.scheduler_options(queue)
    )
    flips.plans.start(sched)
    recorder = recorder_type(sched, window_s)
    recorder.record(0.0)
    with collector_paused():
        _feed(sched, recorder, jobs, name, progress, flips)
    recorder.integrate()
    recorder.end_time = sched.now
    return sched, recorder


def simulated_jobs(
    org: Organisation, jobs: Sequence[WorkloadJob], *, options: SimulationOptions | None = None
) -> list[Job]:
    """Every job of ``jobs`` after running them through ``org``'s queue (attempts included),
    with its share calendars and training plans, as :func:`simulate` runs them."""
    options = options or SimulationOptions()
    check_workload(org, jobs)
    ordered = sorted(jobs, key=lambda j: j.submit_time_s)
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
    return list(sched.jobs)


def _feed(
    sched: Scheduler,
    recorder: _Usage,
    jobs: Sequence[WorkloadJob],
    name: str,
    progress: Progress | None,
    flips: _Calendars,
) -> None:
    """Submit each job at its time and advance from instant to instant, recording usage;
    ``progress`` every :data:`PROGRESS_EVERY` instants. Calendar flips are applied at their
    times while jobs remain (they never prolong a run); a plan's edge does while jobs wait."""
    index, count, instants = 0, len(jobs), 0
    while True:
        next_submit = jobs[index].submit_time_s if index < count else math.inf
        next_event = sched.next_event_time()
        now = min(next_submit, math.inf if next_event is None else next_event)
        if now == math.inf and any(j.status.is_active for j in sched.jobs):
            now = flips.plans.next_time  # jobs wait for a plan's window
        if now == math.inf:
            break
        if flips.next_time <= now:
            now = flips.next_time
            flips.apply_due(sched, now)
            sched.advance(now)
            recorder.record(now)
            continue
        while index < count and jobs[index].submit_time_s <= now:
            _submit(sched, index, jobs[index], now, name)
            index += 1
        sched.advance(now)
        recorder.record(now)
        if progress is not None:
            instants += 1
            if instants % PROGRESS_EVERY == 0:
                progress(name, now)


def _submit(sched: Scheduler, index: int, job: WorkloadJob, now: float, org: str) -> None:
    """Submit one job; a refusal names the CSV line (or job index) and the core's reason."""
    try:
        sched.submit(_request(index, job), now=now)
    except SubmitRejected as exc:
        where = f"line {job.line}" if job.line is not None else f"job {index}"
        problems = [Problem(f"{where}: {p.path}", p.value, p.message, p.fix) for p in exc.problems]
        raise WorkloadError(problems, context=f"workload for {org}") from None


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


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


def _share_metrics(
    sched: Scheduler, spec: QuotaShareSpec, jobs: list[Job], totals: list[float], window_s: float
) -> tuple[ShareMetrics, float | None, list[float]]:
    waits, completions, stretch = [], [], []
    preemptions = {rule.value: 0 for rule in PreemptionRule}
    not_started: dict[str, int] = {}
    lost, failed, preempted = 0.0, 0, 0
    for job in jobs:
        first = job.attempts[0].scheduled_at if job.attempts else job.scheduled_at
        if first is not None:
            waits.append(first - job.created_at)
        else:
            reason = job.status_reason or _pending_message(sched, job)
            not_started[reason] = not_started.get(reason, 0) + 1
        if job.status is JobStatus.SUCCEEDED and job.stopped_at is not None:
            completion = job.stopped_at - job.created_at
            completions.append(completion)
            if job.request.duration_s and completion > 0:
                stretch.append(min(1.0, job.request.duration_s / completion))
        elif job.status is JobStatus.FAILED:
            failed += 1
        for record in job.preemptions:
            preemptions[record.rule.value] += 1
        preempted += bool(job.preemptions)
        lost += _lost_instance_hours(job)
    waits.sort()
    completions.sort()
    capacity_s = sum(spec.capacity.values()) * window_s
    metrics = ShareMetrics(
        share=spec.name,
        strategy=spec.strategy.value,
        jobs=len(jobs),
        completed=len(completions),
        failed=failed,
        never_started=len(jobs) - len(waits),
        not_started_reasons=not_started,
        wait_p50_s=_percentile(waits, 50),
        wait_p95_s=_percentile(waits, 95),
        wait_max_s=waits[-1] if waits else 0.0,
        completion_mean_s=statistics.fmean(completions) if completions else 0.0,
        completion_p95_s=_percentile(completions, 95),
        completion_max_s=completions[-1]
        if len(completions) == len(jobs) and jobs
        else (math.inf if jobs else 0.0),
        preemptions=preemptions,
        preempted_jobs=preempted,
        lost_instance_hours=lost,
        own_use=totals[3] / capacity_s if capacity_s else 0.0,
        borrowed_instance_hours=totals[1] / HOUR_S,
        lent_instance_hours=totals[2] / HOUR_S,
    )
    return metrics, (statistics.fmean(stretch) if stretch else None), waits


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
    jobs = sorted(jobs, key=lambda j: j.submit_time_s)
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
        baseline = baseline_utilisation(org, jobs, options=options, window_s=window)
    by_share: dict[str, list[Job]] = {n: [] for n in recorder.names}
    for job in sched.jobs:
        by_share[job.share_name].append(job)
    metrics, stretches = [], []
    for spec in org.queue.shares:
        m, stretch, waits = _share_metrics(
            sched, spec, by_share[spec.name], recorder.totals[spec.name], window
        )
        metrics.append(m)
        recorder.timeline.waits[spec.name] = waits
        if stretch is not None:
            stretches.append(stretch)
    return SimulationResult(
        organisation=org.name,
        window_s=window,
        end_s=recorder.end_time,
        utilisation=_utilisation(org.queue, recorder.used_in_window, window),
        baseline_utilisation=baseline,
        fairness=jain(stretches),
        shares=tuple(metrics),
        timeline=recorder.finish(),
        events=recorder.steps,
        jobs=tuple(sched.jobs),
    )


def baseline_utilisation(
    org: Organisation,
    jobs: Sequence[WorkloadJob],
    *,
    options: SimulationOptions | None = None,
    window_s: float | None = None,
) -> float:
    """Utilisation of the all-RESERVE version of ``org`` on ``jobs`` over the same window."""
    options = options or SimulationOptions()
    jobs = sorted(jobs, key=lambda j: j.submit_time_s)
    window = window_s or options.window_s or default_window(jobs)
    queue = baseline_queue(org.queue)
    _, usage = _run(queue, org.name, jobs, options, window, _Usage, plans=org.training_plans)
    return _utilisation(queue, usage.used_in_window, window)


def compare(
    orgs: Sequence[Organisation],
    jobs: Sequence[WorkloadJob],
    *,
    options: SimulationOptions | None = None,
    progress: Progress | None = None,
) -> list[SimulationResult]:
    """Simulate each organisation on the same workload; organisations with the same shares and
    capacities share one baseline figure, computed once (by the run of an organisation that
    is the baseline itself, when there is one)."""
    options = options or SimulationOptions()
    for org in orgs:
        check_workload(org, jobs)
    cache: list[tuple[JobQueueSpec, float]] = []
    results = []
    for org in orgs:
        reserve = baseline_queue(org.queue)
        known = [value for queue, value in cache if queue == reserve]
        if known:
            baseline = known[0]
        elif org.queue == reserve and not org.calendars:
            result = simulate(org, jobs, options=options, progress=progress)
            cache.append((reserve, result.baseline_utilisation))
            results.append(result)
            continue
        else:
            baseline = baseline_utilisation(org, jobs, options=options)  # same default window
            cache.append((reserve, baseline))
        results.append(simulate(org, jobs, options=options, baseline=baseline, progress=progress))
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
