"""Sizing advice: the smallest capacity per instance type that meets a team's targets.

Found by simulation on the same workloads that showed the miss, with every other share
unchanged: the team's capacity of every type grows by the same number of instances, doubling
until its targets are met (at most :data:`MAX_SIZING_FACTOR` times its capacity, within the
model's per-type maximum), then the smallest such step is found by bisection and each type is
lowered on its own as far as the targets stay met. Targets are assumed to improve with
capacity (more instances never make a wait longer in the scheduler core's rules).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from quota_constructs.advisor.profiles import TeamsFile
from quota_constructs.advisor.simulate import SimulationOptions, simulate
from quota_constructs.advisor.targets import (
    FINISH_WITHIN_DEADLINE,
    START_WITHIN_PERIOD,
    TargetCheck,
    check_targets,
    figure_text,
    pool_figures,
    requirement_text,
)
from quota_constructs.advisor.workload import WorkloadJob
from quota_constructs.model import MAX_INSTANCES_PER_TYPE, Organisation

SIZED = frozenset(
    {START_WITHIN_PERIOD, FINISH_WITHIN_DEADLINE, *(f"p{q}_wait_minutes" for q in (50, 90, 99))}
)
"""Targets capacity is sized on: waits and the schedule (a missed preemption target is a matter
of preemption settings, which ``--optimize`` searches)."""
MAX_SIZING_FACTOR = 8
"""The largest capacity tried: this many times the team's own, per type."""


@dataclass(frozen=True)
class Sizing:
    """How much capacity a team needs to meet the targets it misses."""

    team: str
    capacity: Mapping[str, int]
    """The team's capacity now."""
    missed: tuple[TargetCheck, ...]
    """Its targets missed with that capacity."""
    needed: Mapping[str, int] | None
    """The smallest capacity found that meets every target of the team; ``None``: none up to
    :data:`MAX_SIZING_FACTOR` times its capacity."""
    largest_tried: Mapping[str, int]
    still_missed: tuple[TargetCheck, ...] = ()
    """With ``needed`` None: what the largest capacity tried still misses."""

    def text(self) -> str:
        """``generative: 6 x ml.g5.xlarge meets p90 wait <= 24.0 h; 4 gives 3.1 days``."""
        now = _counts(self.capacity)
        gives = "; ".join(figure_text(c) for c in self.missed)
        if self.needed is None:
            left = "; ".join(f"{requirement_text(c)}: {figure_text(c)}" for c in self.still_missed)
            return (
                f"{self.team}: no capacity up to {_counts(self.largest_tried)} meets its targets "
                f"(with it: {left}); capacity alone cannot fix it, change the workload or the "
                f"targets ({now} gives {gives})"
            )
        meets = ", ".join(requirement_text(c) for c in self.missed)
        return f"{self.team}: {_counts(self.needed)} meets {meets}; {now} gives {gives}"


def _counts(capacity: Mapping[str, int]) -> str:
    return ", ".join(f"{n} x {t}" for t, n in capacity.items())


def _with_capacity(org: Organisation, team: str, capacity: Mapping[str, int]) -> Organisation:
    shares = tuple(
        replace(s, capacity=dict(capacity)) if s.name == team else s for s in org.queue.shares
    )
    return replace(org, queue=replace(org.queue, shares=shares))


class _Trial:
    """Simulates the organisation with one team's capacity changed; caches each capacity."""

    def __init__(
        self,
        org: Organisation,
        teams: TeamsFile,
        team: str,
        workloads: Sequence[Sequence[WorkloadJob]],
        options: SimulationOptions,
        days: int,
    ) -> None:
        self.org, self.teams, self.team = org, teams, team
        self.workloads, self.options, self.days = workloads, options, days
        self.cache: dict[tuple[tuple[str, int], ...], tuple[TargetCheck, ...]] = {}

    def missed(self, capacity: Mapping[str, int]) -> tuple[TargetCheck, ...]:
        key = tuple(sorted(capacity.items()))
        if key not in self.cache:
            org = _with_capacity(self.org, self.team, capacity)
            results = [
                simulate(org, jobs, options=self.options, baseline=math.nan)
                for jobs in self.workloads
            ]
            checks = check_targets(self.teams, pool_figures(results), days=self.days)
            self.cache[key] = tuple(
                c for c in checks if c.team == self.team and c.missed and c.target in SIZED
            )
        return self.cache[key]


def capacity_needed(
    org: Organisation,
    teams: TeamsFile,
    team: str,
    workloads: Sequence[Sequence[WorkloadJob]],
    *,
    options: SimulationOptions,
    days: int,
    missed: Sequence[TargetCheck],
) -> Sizing | None:
    """The smallest capacity of ``team`` meeting its wait and schedule targets on
    ``workloads`` (see module); ``None`` when ``missed`` has none of those."""
    missed = [c for c in missed if c.target in SIZED]
    if not missed:
        return None
    own = dict(org.queue.share(team).capacity)
    trial = _Trial(org, teams, team, workloads, options, days)
    top = min(MAX_INSTANCES_PER_TYPE - n for n in own.values())
    top = min(top, (MAX_SIZING_FACTOR - 1) * max(own.values()))

    def grown(step: int) -> dict[str, int]:
        return {t: n + step for t, n in own.items()}

    low, high = 0, 1
    while high < top and trial.missed(grown(high)):
        low, high = high, min(2 * high, top)
    if high < 1 or trial.missed(grown(high)):
        largest = grown(max(high, 0))
        return Sizing(team, own, tuple(missed), None, largest, trial.missed(largest))
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if not trial.missed(grown(mid)) else (mid, high)
    needed = _lowered(trial, own, grown(high))
    return Sizing(team, own, tuple(missed), needed, needed)


def _lowered(trial: _Trial, own: Mapping[str, int], found: dict[str, int]) -> dict[str, int]:
    """``found`` with each type lowered on its own (bisection) while the targets stay met."""
    needed = dict(found)
    for itype in needed:
        low, high = own[itype] - 1, needed[itype]
        while high - low > 1:
            mid = (low + high) // 2
            if trial.missed({**needed, itype: mid}):
                low = mid
            else:
                high = mid
        needed[itype] = high
    return needed
