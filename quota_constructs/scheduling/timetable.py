"""Scheduled changes as the scheduler's own timed events: share calendars and plan windows.

The model describes them (:class:`~quota_constructs.model.ShareCalendar`, a training plan's
:func:`~quota_constructs.model.plan_capacity_at`); the :class:`Timetable` each
:class:`~quota_constructs.scheduling.Scheduler` owns applies them at their instants, in time
order with the jobs' events (:meth:`Scheduler.advance`), through the scheduler's own
operations. The emulator and the simulator both register theirs here, so they flip shares and
plan capacity at the same instants, grace included.

**Calendars** change only a share's calendar fields (``SETTING_KEYS``, the schema's ``calendar``
flag: strategy, borrow limit, in-share preemption); capacity and state stay as the share has
them. Borrowers running on a share's capacity when a window stops it lending: AWS is silent
(UNCONFIRMED, docs/emulator-semantics.md "Share calendars"). ``grace_s`` 0 (default) applies the
flip at the edge, preempting them (``LIMIT_LOWERED``, as an UpdateQuotaShare to RESERVE does);
above 0 the flip waits, checked after every event, until no other share borrows the share's
capacity, at most ``grace_s`` seconds (the share still lends meanwhile). A new edge replaces a
flip still waiting. At one instant, plan edges apply first, then calendar flips in the order the
calendars were followed.

**Plan windows**: a type that named plans reserve has, at each moment, the instances of its
plans then usable, up to the capacity the service environment was given
(:meth:`Timetable.usable_capacity`); the jobs that no longer fit stop (the latest started
first, :func:`~quota_constructs.model.jobs_to_stop`) with a ``TrainingPlanEnded`` reason.
``on_demand``: types whose capacity is on demand but for the plans' instances inside their
windows (:func:`~quota_constructs.model.mixed_capacity_at`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Protocol

from quota_constructs.model import (
    PLAN_STOP_BEFORE_END_S,
    QuotaShareSpec,
    ShareCalendar,
    TrainingPlanSpec,
    jobs_to_stop,
    mixed_capacity_at,
    plan_capacity_at,
    plan_capacity_edges,
    plan_stop_reason,
)
from quota_constructs.model.calendar import SETTING_KEYS
from quota_constructs.scheduling.event_queue import EventQueue
from quota_constructs.scheduling.job import Job


def check_calendar_grace(grace_s: float) -> None:
    """``ValueError`` unless ``grace_s`` is a calendar grace (finite seconds >= 0)."""
    if not (math.isfinite(grace_s) and grace_s >= 0):
        raise ValueError(
            f"calendar grace must be a finite number of seconds >= 0 (got {grace_s}); "
            "use 0 to preempt borrowers at the window edge"
        )


def check_plan_stop(stop_before_end_s: float) -> None:
    """``ValueError`` unless ``stop_before_end_s`` is a plan stop (finite seconds >= 0)."""
    if not (math.isfinite(stop_before_end_s) and stop_before_end_s >= 0):
        raise ValueError(
            "plan stop before end must be a finite number of seconds >= 0 (got "
            f"{stop_before_end_s}); use 1800 (AWS's 30 minutes) or 0 to run to the end"
        )


class Target(Protocol):
    """What the timetable changes: the scheduler's public operations it applies them with."""

    @property
    def now(self) -> float: ...

    @property
    def jobs(self) -> Sequence[Job]: ...

    @property
    def service_environment(self) -> dict[str, int]: ...

    def share_spec(self, name: str) -> QuotaShareSpec: ...

    def lent_out(self, name: str) -> int: ...

    def upsert_share(self, spec: QuotaShareSpec, *, now: float | None = None) -> None: ...

    def set_service_environment(
        self, capacity: Mapping[str, int] | None, *, now: float | None = None
    ) -> None: ...

    def terminate(self, job_id: str, reason: str, *, now: float) -> Job: ...


@dataclass(frozen=True)
class CalendarFlip:
    """A calendar change applied: when (scheduler seconds), which share, the share after it."""

    time: float
    share: str
    spec: QuotaShareSpec


@dataclass
class _Calendar:
    base: QuotaShareSpec
    calendar: ShareCalendar
    epoch_s: float
    """Unix epoch seconds at scheduler time 0."""
    grace_s: float
    next_edge: float = math.inf
    next_settings: QuotaShareSpec | None = None
    waiting: tuple[float, QuotaShareSpec] | None = None
    """A flip waiting for borrowers to finish: (deadline, settings)."""

    def when(self, t: float) -> datetime:
        return datetime.fromtimestamp(self.epoch_s + t, UTC)

    def schedule_after(self, t: float) -> None:
        change = self.calendar.next_change(self.base, self.when(t))
        if change is None:
            self.next_edge, self.next_settings = math.inf, None
        else:
            self.next_edge = change.time.timestamp() - self.epoch_s
            self.next_settings = change.settings


@dataclass
class _Plans:
    plans: tuple[TrainingPlanSpec, ...]
    epoch_s: float
    stop_before_end_s: float
    on_demand: dict[str, int]
    edges: list[tuple[float, str]]
    """Edges still to apply: (scheduler seconds, instance type), in order."""
    types: tuple[str, ...]
    """The plans' instance types, sorted."""
    limits: dict[str, int] | None = None
    """The service environment's capacity once it was set explicitly: plans' instances are
    usable up to it."""

    def capacity_at(self, itype: str, t: float) -> int:
        epoch = self.epoch_s + t
        stop = self.stop_before_end_s
        if itype in self.on_demand:
            capacity = mixed_capacity_at(
                self.plans, itype, epoch, self.on_demand[itype], stop_before_end_s=stop
            )
        else:
            capacity = plan_capacity_at(self.plans, itype, epoch, stop_before_end_s=stop)
        return min(capacity, self.limits.get(itype, 0)) if self.limits else capacity


class Timetable:
    """The calendars and plan windows one scheduler follows; see the module docstring."""

    def __init__(self, events: EventQueue) -> None:
        self._events = events
        self._calendars: dict[str, _Calendar] = {}
        self._plans: list[_Plans] = []
        self._next_edge = math.inf
        self.flips: list[CalendarFlip] = []
        """Every calendar change applied so far, in order."""
        self.listeners: list[Callable[[CalendarFlip], None]] = []
        """Told each calendar change once the scheduler has it."""

    # --- registration -------------------------------------------------------------------------

    def follow_calendar(
        self,
        target: Target,
        base: QuotaShareSpec,
        calendar: ShareCalendar,
        *,
        epoch_s: float,
        grace_s: float = 0.0,
    ) -> None:
        """Flip share ``base.name`` on ``calendar`` from now on (until the share is removed);
        the settings in force now apply at once. ``epoch_s``: Unix epoch seconds at scheduler
        time 0; ``grace_s``: see the module docstring."""
        check_calendar_grace(grace_s)
        now = target.now
        entry = _Calendar(base, calendar, epoch_s, grace_s)
        self._calendars[base.name] = entry
        self._apply_calendar(target, entry, calendar.in_force(base, entry.when(now)), now)
        entry.schedule_after(now)
        self._refresh()

    def follow_plans(
        self,
        target: Target,
        plans: Sequence[TrainingPlanSpec],
        *,
        epoch_s: float,
        stop_before_end_s: float = PLAN_STOP_BEFORE_END_S,
        on_demand: Mapping[str, int] | None = None,
    ) -> None:
        """Give the named ``plans``' types their plan-backed capacity from now on, changing at
        the windows' edges; the capacity now applies at once."""
        check_plan_stop(stop_before_end_s)
        named = tuple(p for p in plans if not p.by_arn)
        if not named:
            return
        on_demand = dict(on_demand or {})
        edges = set(plan_capacity_edges(named, stop_before_end_s=stop_before_end_s))
        edges |= {(p.end_s, p.instance_type) for p in named if p.instance_type in on_demand}
        now = target.now
        later = sorted((e - epoch_s, t) for e, t in edges if e - epoch_s > now)
        types = tuple(sorted({p.instance_type for p in named}))
        entry = _Plans(named, epoch_s, stop_before_end_s, on_demand, later, types)
        self._plans.append(entry)
        for itype in entry.types:
            self._apply_plan(target, entry, itype, now)
        self._refresh()

    def forget_share(self, name: str) -> None:
        """Stop following share ``name``'s calendar (the share was removed)."""
        if self._calendars.pop(name, None) is not None:
            self._refresh()

    def usable_capacity(self, capacity: Mapping[str, int], now: float) -> dict[str, int]:
        """What setting the service environment to ``capacity`` makes usable now: each plan
        type what its plans allow, up to ``capacity`` (kept as the limit of later edges)."""
        usable = dict(capacity)
        for entry in self._plans:
            entry.limits = dict(capacity)
            for itype in entry.types:
                usable[itype] = entry.capacity_at(itype, now)
        return usable

    # --- time ---------------------------------------------------------------------------------

    def next_time(self) -> float:
        """When something is next due (``inf``: nothing): an edge, or a waiting flip's check
        (the next job event, at the latest its deadline)."""
        t = self._next_edge
        for entry in self._calendars.values():
            if entry.waiting is not None:
                check = self._events.next_time()
                deadline = entry.waiting[0]
                t = min(t, deadline if check is None else min(deadline, check))
        return t

    def next_plan_edge(self) -> float:
        """When plan-backed capacity next changes (``inf``: never)."""
        return min((p.edges[0][0] for p in self._plans if p.edges), default=math.inf)

    def apply_due(self, target: Target, t: float) -> None:
        """Apply what is due at ``t`` (``target`` is at ``t``): plan edges, then flips."""
        for entry in self._plans:
            while entry.edges and entry.edges[0][0] <= t:
                _, itype = entry.edges.pop(0)
                self._apply_plan(target, entry, itype, t)
        for calendar in list(self._calendars.values()):
            self._calendar_due(target, calendar, t)
        self._refresh()

    def _refresh(self) -> None:
        edges = [e.next_edge for e in self._calendars.values()]
        edges += [p.edges[0][0] for p in self._plans if p.edges]
        self._next_edge = min(edges, default=math.inf)

    # --- applying -----------------------------------------------------------------------------

    def _calendar_due(self, target: Target, entry: _Calendar, t: float) -> None:
        if entry.next_edge <= t and entry.next_settings is not None:
            settings, entry.waiting = entry.next_settings, None
            entry.schedule_after(t)
            self._flip_or_wait(target, entry, settings, t, deadline=t + entry.grace_s)
        elif entry.waiting is not None:
            deadline, settings = entry.waiting
            self._flip_or_wait(target, entry, settings, t, deadline=deadline)

    def _flip_or_wait(
        self,
        target: Target,
        entry: _Calendar,
        settings: QuotaShareSpec,
        t: float,
        *,
        deadline: float,
    ) -> None:
        """Apply ``settings``, or wait while the share lends and the grace lasts."""
        current = target.share_spec(entry.base.name)
        stops_lending = current.strategy.lends and not settings.strategy.lends
        if stops_lending and t < deadline and target.lent_out(current.name):
            entry.waiting = (deadline, settings)
            return
        entry.waiting = None
        self._apply_calendar(target, entry, settings, t)

    def _apply_calendar(
        self, target: Target, entry: _Calendar, in_force: QuotaShareSpec, t: float
    ) -> None:
        current = target.share_spec(entry.base.name)
        spec = replace(current, **{name: getattr(in_force, name) for name in SETTING_KEYS})
        if spec == current:
            return
        target.upsert_share(spec, now=t)
        flip = CalendarFlip(t, spec.name, spec)
        self.flips.append(flip)
        for listener in self.listeners:
            listener(flip)

    @staticmethod
    def _apply_plan(scheduler: Target, entry: _Plans, itype: str, t: float) -> None:
        """Set ``itype``'s capacity to what the plans allow at ``t``; stop the jobs that no
        longer fit."""
        capacity = entry.capacity_at(itype, t)
        running = [
            (job.job_id, job.demand[itype], job.started_at or t)
            for job in scheduler.jobs
            if job.status.is_dispatched and job.demand.get(itype)
        ]
        if scheduler.service_environment.get(itype) != capacity:  # first: none dispatch
            scheduler.set_service_environment(
                {**scheduler.service_environment, itype: capacity}, now=t
            )
        reason = plan_stop_reason(itype, entry.stop_before_end_s)
        for job_id in jobs_to_stop(running, capacity):
            scheduler.terminate(job_id, reason, now=t)
