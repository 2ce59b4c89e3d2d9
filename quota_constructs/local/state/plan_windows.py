"""Owns the training plans' windows in the emulator: plan-backed capacity exists only inside a
plan's window, applied at each edge on the emulator's clock through the scheduler's public
``set_service_environment(capacity, now=edge)`` (as share calendars apply ``upsert_share``).

A type that a named plan of the organisation file reserves has, at each moment, the
instances of its plans then usable (:func:`~quota_constructs.model.plan_capacity_at`); other
types keep their capacity. UpdateServiceEnvironment changes the other types; a plan type keeps
what its plans allow, up to the capacity the update sets. AWS: SageMaker begins terminating the
instances running on a plan 30 minutes before its end (docs/cost.md), so by default the
capacity goes at ``end - 30 min`` and the jobs running on it then are stopped (FAILED, a
``TrainingPlanEnded`` reason); ``stop_before_end_s=0`` lets them run to the plan's end instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from quota_constructs.local.state.clock import EmulatorClock
from quota_constructs.model import (
    PLAN_STOP_BEFORE_END_S,
    TrainingPlanSpec,
    apply_plan_capacity,
    plan_capacity_at,
    plan_capacity_edges,
)
from quota_constructs.scheduling import Scheduler


@dataclass
class _Entry:
    scheduler: Scheduler
    plans: tuple[TrainingPlanSpec, ...]
    edges: list[tuple[float, str]]
    """Edges still to apply: (emulator seconds, instance type), in order."""
    limits: dict[str, int] = field(default_factory=dict)
    """The service environment's capacity per type once UpdateServiceEnvironment set it: the
    plans' instances are usable up to it."""


class PlanWindows:
    """The plan windows of every provisioned organisation with named plans."""

    def __init__(
        self, clock: EmulatorClock, *, stop_before_end_s: float = PLAN_STOP_BEFORE_END_S
    ) -> None:
        if not (math.isfinite(stop_before_end_s) and stop_before_end_s >= 0):
            raise ValueError(
                "plan stop before end must be a finite number of seconds >= 0 (got "
                f"{stop_before_end_s}); use 1800 (AWS's 30 minutes) or 0 to run to the end"
            )
        self.clock = clock
        self.stop_before_end_s = stop_before_end_s
        self._entries: list[_Entry] = []
        self.stopped: list[tuple[float, str]] = []
        """Every job stopped at a plan's end so far: (emulator seconds, job id)."""

    def add(self, scheduler: Scheduler, plans: Sequence[TrainingPlanSpec]) -> None:
        """Follow ``plans``' windows on ``scheduler`` from now; the capacity now applies at once."""
        named = tuple(p for p in plans if not p.by_arn)
        if not named:
            return
        now = self.clock.now()
        offset = self.clock.epoch(0.0)
        edges = plan_capacity_edges(named, stop_before_end_s=self.stop_before_end_s)
        entry = _Entry(scheduler, named, [(e - offset, t) for e, t in edges if e - offset > now])
        self._entries.append(entry)
        for itype in sorted({p.instance_type for p in named}):
            self._apply(entry, itype, now)

    def advance(self, now: float, step: Callable[[float], None]) -> None:
        """Apply every edge due up to ``now`` at its own time; ``step(t)`` advances the
        schedulers to ``t``. Ends with the schedulers at ``now``."""
        while (due := self._next_due(now)) is not None:
            entry = due
            t, itype = entry.edges.pop(0)
            step(t)
            self._apply(entry, itype, t)
        step(now)

    def capacity_for(self, scheduler: Scheduler, capacity: Mapping[str, int]) -> dict[str, int]:
        """What UpdateServiceEnvironment's ``capacity`` makes usable on ``scheduler`` now: each
        plan type what its plans allow, up to ``capacity`` (kept for the later edges too)."""
        usable = dict(capacity)
        epoch = self.clock.epoch(self.clock.now())
        for entry in self._entries:
            if entry.scheduler is scheduler:
                entry.limits = dict(capacity)
                for itype in {p.instance_type for p in entry.plans}:
                    allowed = plan_capacity_at(
                        entry.plans, itype, epoch, stop_before_end_s=self.stop_before_end_s
                    )
                    usable[itype] = min(capacity.get(itype, 0), allowed)
        return usable

    def _next_due(self, now: float) -> _Entry | None:
        due = [e for e in self._entries if e.edges and e.edges[0][0] <= now]
        return min(due, key=lambda e: e.edges[0][0], default=None)

    def _apply(self, entry: _Entry, itype: str, t: float) -> None:
        at = max(t, entry.scheduler.now)  # a wall clock's tick may have moved it past the edge
        stopped = apply_plan_capacity(
            entry.scheduler,
            entry.plans,
            itype,
            self.clock.epoch(t),
            now=at,
            stop_before_end_s=self.stop_before_end_s,
            limit=entry.limits.get(itype, 0) if entry.limits else None,
        )
        self.stopped += [(at, job_id) for job_id in stopped]
