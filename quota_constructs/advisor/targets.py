"""Each team's targets, the implicit ones included, judged on simulated figures.

Explicit targets come from the profile (``p50/p90/p99_wait_minutes``, ``max_preempted_share``).
Implicit ones: a team that does not tolerate preemption has ``max_preempted_share`` 0; a
scheduled team must start every run within its period (``start_within_period``: the longest
wait at most the shortest gap between two slots) and finish it within ``deadline_minutes`` of
its slot, by default before the next slot (``finish_within_deadline``). A team without jobs in
the simulated window is *not checked*, never met; the note says on which days its jobs come.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from quota_constructs.advisor.profiles import ALL_DAYS, TeamProfile, TeamsFile, WorkloadKind
from quota_constructs.advisor.simulate import SimulationResult

MET, MISSED, NOT_CHECKED = "met", "missed", "not_checked"
PREEMPTED = "max_preempted_share"
START_WITHIN_PERIOD = "start_within_period"
FINISH_WITHIN_DEADLINE = "finish_within_deadline"
MINUTE_S = 60.0


@dataclass(frozen=True)
class TeamFigures:
    """What one team experienced under one configuration, pooled over the workloads."""

    team: str
    waits_s: tuple[float, ...]
    """Sorted first-start waits of every job; ``inf`` for jobs that never started."""
    preempted_jobs: int
    lost_instance_hours: float
    borrowed_instance_hours: float
    lent_instance_hours: float
    finish_max_s: float = 0.0
    """Longest submit-to-end time of a job; ``inf`` when a job did not succeed."""

    @property
    def jobs(self) -> int:
        return len(self.waits_s)

    def wait(self, percentile: int) -> float:
        """Nearest-rank percentile of the waits (0 without jobs)."""
        if not self.waits_s:
            return 0.0
        rank = max(1, math.ceil(percentile / 100 * len(self.waits_s)))
        return self.waits_s[rank - 1]

    @property
    def preempted_share(self) -> float:
        return self.preempted_jobs / self.jobs if self.jobs else 0.0


def team_figures(result: SimulationResult) -> tuple[TeamFigures, ...]:
    """Each share's figures of one simulation (from the metrics the run already produced)."""
    return pool_figures([result])


def pool_figures(results: Iterable[SimulationResult]) -> tuple[TeamFigures, ...]:
    """Each share's figures pooled over several simulations of the same shares."""
    waits: dict[str, list[float]] = {}
    sums: dict[str, list[float]] = {}
    for result in results:
        for m in result.shares:
            waits.setdefault(m.share, []).extend(
                result.timeline.waits[m.share] + [math.inf] * m.never_started
            )
            acc = sums.setdefault(m.share, [0.0, 0.0, 0.0, 0.0, 0.0])
            acc[0] += m.preempted_jobs
            acc[1] += m.lost_instance_hours
            acc[2] += m.borrowed_instance_hours
            acc[3] += m.lent_instance_hours
            acc[4] = max(acc[4], m.completion_max_s)
    return tuple(
        TeamFigures(name, tuple(sorted(waits[name])), int(a[0]), a[1], a[2], a[3], a[4])
        for name, a in sums.items()
    )


@dataclass(frozen=True)
class TargetCheck:
    """One team target against the figure a configuration achieved (``None``: not checked)."""

    team: str
    target: str
    """``p90_wait_minutes``, ``max_preempted_share``, ``start_within_period``, ..."""
    limit: float
    value: float | None
    """Minutes for waits and deadlines, a fraction for the preempted share; ``None`` when the
    team had no jobs to judge."""
    note: str = ""
    """Why a target was not checked (the days the team's jobs come on)."""

    @property
    def status(self) -> str:
        if self.value is None:
            return NOT_CHECKED
        return MET if self.value <= self.limit + 1e-9 else MISSED

    @property
    def met(self) -> bool:
        return self.status == MET

    @property
    def missed(self) -> bool:
        return self.status == MISSED

    @property
    def excess(self) -> float:
        """How far over the target, relative to it (a floor of 1 minute or 1 % of jobs)."""
        if self.value is None:
            return 0.0
        floor = 0.01 if self.target == PREEMPTED else 1.0
        return max(0.0, self.value - self.limit) / max(self.limit, floor)


def period_minutes(team: TeamProfile) -> float:
    """The shortest gap between two slots of a scheduled team's schedule (minutes)."""
    times = team.parsed_schedule.times_of_day()
    gaps = [b - a for a, b in zip(times, [*times[1:], times[0] + 86400.0], strict=True)]
    return min(gaps) / MINUTE_S


def deadline_minutes(team: TeamProfile) -> float:
    """How long after its slot a scheduled run must have finished (minutes)."""
    return team.deadline_minutes or period_minutes(team)


def simulated_days(days: int) -> list[str]:
    """The weekday names of ``days`` simulated days from Monday (each once)."""
    return [d.value for d in ALL_DAYS][: min(days, 7)]


def _not_checked_note(team: TeamProfile, days: int) -> str:
    window = ", ".join(simulated_days(days))
    active = ", ".join(d.value for d in team.active_days)
    return (
        f"no jobs of {team.name} in the {days} simulated day(s) ({window}); its jobs come on "
        f"{active}: simulate at least 7 days (--days 7)"
    )


def team_targets(team: TeamProfile) -> list[tuple[str, float]]:
    """(target, required) of a team: its explicit targets and the implicit ones."""
    waits = team.targets.waits().items()
    out = [(f"p{q}_wait_minutes", limit_s / MINUTE_S) for q, limit_s in waits]
    if team.preemption_target is not None:
        out.append((PREEMPTED, team.preemption_target))
    if team.workload is WorkloadKind.SCHEDULED:
        out.append((START_WITHIN_PERIOD, period_minutes(team)))
        out.append((FINISH_WITHIN_DEADLINE, deadline_minutes(team)))
    return out


def _figure(target: str, mine: TeamFigures) -> float:
    if target == PREEMPTED:
        return mine.preempted_share
    if target == START_WITHIN_PERIOD:
        return mine.wait(100) / MINUTE_S
    if target == FINISH_WITHIN_DEADLINE:
        return mine.finish_max_s / MINUTE_S
    return mine.wait(int(target[1:3])) / MINUTE_S


def check_targets(
    teams: TeamsFile, figures: Iterable[TeamFigures], *, days: int
) -> tuple[TargetCheck, ...]:
    """Every team's targets, implicit ones included, checked on ``figures`` of ``days``-day
    workloads; a team without jobs has each target not checked."""
    by_name = {f.team: f for f in figures}
    checks = []
    for team in teams.teams:
        mine = by_name[team.name]
        note = "" if mine.jobs else _not_checked_note(team, days)
        for target, limit in team_targets(team):
            value = _figure(target, mine) if mine.jobs else None
            checks.append(TargetCheck(team.name, target, limit, value, note))
    return tuple(checks)


def missed(checks: Sequence[TargetCheck]) -> tuple[TargetCheck, ...]:
    return tuple(c for c in checks if c.missed)


def _minutes(value: float) -> str:
    if not math.isfinite(value):
        return "never (a job did not run to the end)"
    if value >= 2 * 1440:
        return f"{value / 1440:.1f} days"
    if value >= 120:
        return f"{value / 60:.1f} h"
    return f"{value:.1f} min"


def requirement_text(check: TargetCheck) -> str:
    """``p90 wait <= 30 min``, ``preempted <= 0% of jobs``, ``every run starts within 60 min``."""
    if check.target == PREEMPTED:
        return f"preempted <= {check.limit:.0%} of jobs"
    if check.target == START_WITHIN_PERIOD:
        return f"every run starts within {_minutes(check.limit)} (its period)"
    if check.target == FINISH_WITHIN_DEADLINE:
        return f"every run finishes within {_minutes(check.limit)} of its slot"
    return f"{check.target.removesuffix('_wait_minutes')} wait <= {_minutes(check.limit)}"


def figure_text(check: TargetCheck) -> str:
    """The achieved figure in words: ``12.5 min``, ``3%``, ``longest wait 1.4 h``."""
    if check.value is None:
        return "-"
    if check.target == PREEMPTED:
        return f"{check.value:.0%} preempted"
    if check.target == START_WITHIN_PERIOD:
        return f"longest wait {_minutes(check.value)}"
    if check.target == FINISH_WITHIN_DEADLINE:
        return f"longest run to the end {_minutes(check.value)}"
    return _minutes(check.value)


def check_line(check: TargetCheck) -> str:
    """One line a user reads after the status: the target and the figure, or why it was not
    checked."""
    if check.status == NOT_CHECKED:
        return f"{check.team}: {requirement_text(check)}: {check.note}"
    return f"{check.team}: {requirement_text(check)} ({figure_text(check)})"


def check_json(check: TargetCheck) -> dict[str, object]:
    """The contract's form: target, required, figure (``null`` when not checked or infinite),
    status."""
    figure = check.value if check.value is not None and math.isfinite(check.value) else None
    out: dict[str, object] = {
        "target": check.target,
        "required": check.limit,
        "figure": figure,
        "status": check.status,
    }
    if check.note:
        out["note"] = check.note
    return out
