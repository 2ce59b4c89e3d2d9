"""Sizing advice: the smallest capacities per instance type that meet the teams' targets,
found jointly for the organisation over the same weeks as the verdicts.

Every team that misses a wait or schedule target (:data:`SIZED`) is grown, all of them in the
same simulations: each team's capacity of every type grows by the same number of instances,
doubling until its missed targets are met over the weeks (at most :data:`MAX_SIZING_FACTOR`
times its capacity, within the model's per-type maximum), then its smallest such step is found
by bisection, each team on its own outcome while the others try theirs. The organisation with
every team grown is checked again as a whole: a team the others' growth left short is grown
again, up to :data:`MAX_ROUNDS` rounds. Last, each type of a team of several types is lowered
on its own as far as every sized target the organisation met before and every one sized stays
met. So the sizes add up: the organisation with all of them is the one that was simulated.
Targets are assumed to improve with capacity (more instances never make a wait longer in the
scheduler core's rules).

A trial stops at the week that decides it: a target missed in more weeks than
:data:`~quota_constructs.advisor.targets.MET_SHARE` allows fails the capacity without running
the remaining weeks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from quota_constructs.advisor.profiles import TeamsFile
from quota_constructs.advisor.simulate import SimulationOptions, simulate
from quota_constructs.advisor.targets import (
    FINISH_WITHIN_DEADLINE,
    START_WITHIN_PERIOD,
    TargetCheck,
    TeamFigures,
    check_targets,
    figure_text,
    requirement_text,
    target_figure,
    team_figures,
    team_targets,
    weeks_needed,
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
MAX_ROUNDS = 3
"""Rounds of growing every team that misses a sized target in the organisation as a whole."""

Capacities = dict[str, dict[str, int]]
"""Per team, its instances per type."""
Pair = tuple[str, str]
"""(team, target)."""


@dataclass(frozen=True)
class Sizing:
    """How much capacity a team needs to meet the targets it misses (sized jointly)."""

    team: str
    capacity: Mapping[str, int]
    """The team's capacity now."""
    missed: tuple[TargetCheck, ...]
    """Its targets missed with that capacity."""
    needed: Mapping[str, int] | None
    """The smallest capacity found that meets every sized target of the team, with the other
    teams at their ``needed`` capacities; ``None``: none up to :data:`MAX_SIZING_FACTOR` times
    its capacity."""
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


def with_capacities(org: Organisation, capacities: Mapping[str, Mapping[str, int]]) -> Organisation:
    """``org`` with the named teams' capacities replaced."""
    shares = tuple(
        replace(s, capacity=dict(capacities[s.name])) if s.name in capacities else s
        for s in org.queue.shares
    )
    return replace(org, queue=replace(org.queue, shares=shares))


def _key(capacities: Mapping[str, Mapping[str, int]]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((f"{team}/{t}", n) for team, c in capacities.items() for t, n in c.items()))


class _Trial:
    """Simulates the organisation with changed capacities, week by week; caches each week's
    figures per capacities."""

    def __init__(
        self,
        org: Organisation,
        teams: TeamsFile,
        workloads: Sequence[Sequence[WorkloadJob]],
        options: SimulationOptions,
        days: int,
    ) -> None:
        self.org, self.teams, self.workloads = org, teams, workloads
        self.options, self.days = options, days
        self.figures: dict[tuple[tuple[tuple[str, int], ...], int], tuple[TeamFigures, ...]] = {}
        self.limits = {
            (t.name, target): limit for t in teams.teams for target, limit in team_targets(t)
        }
        present = [{job.share for job in jobs} for jobs in workloads]
        judged = {t.name: sum(t.name in shares for shares in present) for t in teams.teams}
        self.allowed = {name: n - weeks_needed(n) for name, n in judged.items()}
        """Weeks a team's target may be missed in and still be met."""

    def week(self, capacities: Capacities, index: int) -> tuple[TeamFigures, ...]:
        key = (_key(capacities), index)
        if key not in self.figures:
            org = with_capacities(self.org, capacities)
            jobs = self.workloads[index]
            result = simulate(org, jobs, options=self.options, baseline=math.nan)
            self.figures[key] = team_figures(result)
        return self.figures[key]

    def seed(self, capacities: Capacities, weeks: Sequence[tuple[TeamFigures, ...]]) -> None:
        """Figures already simulated for ``capacities`` (the configuration being sized)."""
        for index, figures in enumerate(weeks):
            self.figures[(_key(capacities), index)] = tuple(figures)

    def meets(self, capacities: Capacities, pairs: Iterable[Pair]) -> bool:
        """Whether every target of ``pairs`` is met over the weeks (stops at the week that
        decides a miss)."""
        pairs = list(pairs)
        return not self.failing(capacities, {"all": pairs})

    def failing(self, capacities: Capacities, groups: Mapping[str, Sequence[Pair]]) -> set[str]:
        """The groups of ``groups`` with a target missed over the weeks (a target missed in
        more weeks than :data:`MET_SHARE` allows); the weeks stop once every group failed."""
        failures: dict[Pair, int] = {}
        failed: set[str] = set()
        for index in range(len(self.workloads)):
            by_team = {f.team: f for f in self.week(capacities, index)}
            for group, pairs in groups.items():
                if group in failed:
                    continue
                for team, target in pairs:
                    mine = by_team[team]
                    if mine.jobs and target_figure(target, mine) > self.limits[team, target] + 1e-9:
                        failures[team, target] = failures.get((team, target), 0) + 1
                        if failures[team, target] > self.allowed[team]:
                            failed.add(group)
                            break
            if len(failed) == len(groups):
                break
        return failed

    def checks(self, capacities: Capacities) -> tuple[TargetCheck, ...]:
        weeks = [self.week(capacities, i) for i in range(len(self.workloads))]
        return check_targets(self.teams, weeks, days=self.days)


def capacities_needed(
    org: Organisation,
    teams: TeamsFile,
    workloads: Sequence[Sequence[WorkloadJob]],
    *,
    options: SimulationOptions,
    days: int,
    checks: Sequence[TargetCheck],
    weeks: Sequence[tuple[TeamFigures, ...]] = (),
) -> tuple[Sizing, ...]:
    """Each team's smallest capacity meeting its missed wait and schedule targets over
    ``workloads``, sized jointly (see module); ``checks`` are ``org``'s verdicts on them and
    ``weeks`` its figures when already simulated. Empty when no sized target is missed."""
    missed: dict[str, list[TargetCheck]] = {}
    for check in checks:
        if check.missed and check.target in SIZED:
            missed.setdefault(check.team, []).append(check)
    if not missed:
        return ()
    own: Capacities = {s.name: dict(s.capacity) for s in org.queue.shares}
    trial = _Trial(org, teams, workloads, options, days)
    if weeks:
        trial.seed(own, weeks)
    guarded = [(c.team, c.target) for c in checks if c.target in SIZED and (c.met or c.missed)]
    current = {name: dict(c) for name, c in own.items()}
    failed = _grow_together(trial, current, {n: _of(guarded, n) for n in missed})
    for _ in range(MAX_ROUNDS - 1):  # a team the others' growth left short is grown again
        short = trial.failing(current, {n: _of(guarded, n) for n in missed if n not in failed})
        if not short:
            break
        failed |= _grow_together(trial, current, {n: _of(guarded, n) for n in short})
    kept = [p for p in guarded if p[0] not in failed]
    for name in missed:
        if name not in failed and len(current[name]) > 1:  # one type: the step is its size
            _lower(trial, current, own, name, kept)
    final = trial.checks(current)
    return tuple(
        _sizing(name, own, current, missed[name], name in failed, final) for name in missed
    )


def _of(pairs: Sequence[Pair], team: str) -> list[Pair]:
    return [p for p in pairs if p[0] == team]


def _top(own: Mapping[str, int]) -> int:
    top = min(MAX_INSTANCES_PER_TYPE - n for n in own.values())
    return min(top, (MAX_SIZING_FACTOR - 1) * max(own.values()))


def _grow_together(
    trial: _Trial, current: Capacities, pairs: Mapping[str, Sequence[Pair]]
) -> set[str]:
    """Grow every team of ``pairs`` in ``current`` by its smallest uniform step meeting its
    targets, all in the same simulations (each team doubling, then bisecting, on its own
    outcome while the others try theirs); the teams no step up to the bound serves (grown to
    the largest tried)."""
    base = {name: dict(current[name]) for name in pairs}
    top = {name: _top(caps) for name, caps in base.items()}
    low = dict.fromkeys(pairs, 0)
    high: dict[str, int] = {}
    step = {name: min(1, top[name]) for name in pairs}
    failed: set[str] = set()

    def trying(steps: Mapping[str, int]) -> Capacities:
        grown = {n: {t: c + steps[n] for t, c in base[n].items()} for n in steps}
        return {**current, **grown}

    short = trial.failing(current, pairs)
    high.update({name: 0 for name in pairs if name not in short})  # met as they are
    while open_ := [n for n in pairs if n not in high and n not in failed]:
        steps = {**high, **{n: step[n] for n in open_}}
        short = trial.failing(trying(steps), {n: pairs[n] for n in open_})
        for name in open_:
            if name not in short:
                high[name] = step[name]
            elif step[name] >= top[name]:
                failed.add(name)
            else:
                low[name], step[name] = step[name], min(2 * step[name], top[name])
    while narrow := [n for n in high if high[n] - low[n] > 1]:
        mids = {n: (low[n] + high[n]) // 2 for n in narrow}
        short = trial.failing(trying({**high, **mids}), {n: pairs[n] for n in narrow})
        for name, mid in mids.items():
            low[name], high[name] = (mid, high[name]) if name in short else (low[name], mid)
    for name, capacity in trying({**high, **{n: step[n] for n in failed}}).items():
        current[name] = capacity
    return failed


def _lower(
    trial: _Trial, current: Capacities, own: Capacities, name: str, pairs: Sequence[Pair]
) -> None:
    """Each type of ``name`` lowered on its own (bisection, not below its own capacity) while
    every target of ``pairs`` stays met."""
    for itype in current[name]:
        low, high = own[name][itype] - 1, current[name][itype]
        while high - low > 1:
            mid = (low + high) // 2
            trying = {**current, name: {**current[name], itype: mid}}
            low, high = (low, mid) if trial.meets(trying, pairs) else (mid, high)
        current[name][itype] = high


def _sizing(
    name: str,
    own: Capacities,
    current: Capacities,
    missed: Sequence[TargetCheck],
    failed: bool,
    final: Sequence[TargetCheck],
) -> Sizing:
    if failed:
        left = tuple(c for c in final if c.team == name and c.missed and c.target in SIZED)
        return Sizing(name, own[name], tuple(missed), None, current[name], left)
    return Sizing(name, own[name], tuple(missed), current[name], current[name])


def total_needed(sizings: Sequence[Sizing], org: Organisation) -> dict[str, int]:
    """Instances per type of the organisation with every sizing applied (the service
    environment it needs): the sizes add up."""
    total: dict[str, int] = {}
    needed = {s.team: s.needed for s in sizings if s.needed is not None}
    for share in org.queue.shares:
        for itype, n in (needed.get(share.name) or share.capacity).items():
            total[itype] = total.get(itype, 0) + n
    return total
