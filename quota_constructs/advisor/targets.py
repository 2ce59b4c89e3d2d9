"""Each team's targets, the implicit ones included, judged week by week on simulated figures.

Explicit targets come from the profile (``p50/p90/p99_wait_minutes``, ``max_preempted_share``).
Implicit ones: a team that does not tolerate preemption has ``max_preempted_share`` 0; a
scheduled team must start every run within its period (``start_within_period``: the longest
wait at most the shortest gap between two slots) and finish it within ``deadline_minutes`` of
its slot, by default before the next slot (``finish_within_deadline``).

A verdict rests on several independently seeded weeks: each week with jobs of the team gives
one figure; the target is *met* when the figure meets it in at least :data:`MET_SHARE` of those
weeks, else *missed*; with fewer than :func:`min_jobs` jobs over all the weeks it is
*too_few_jobs* (neither met nor missed), and a team without jobs in any week is *not checked*
(the note says on which days its jobs come). The reported figure is the median week's, next to
the worst week's.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from quota_constructs.advisor.profiles import ALL_DAYS, TeamProfile, TeamsFile, WorkloadKind
from quota_constructs.advisor.simulate import SimulationResult

MET, MISSED, NOT_CHECKED, TOO_FEW_JOBS = "met", "missed", "not_checked", "too_few_jobs"
MET_SHARE = 0.9
"""A target is met when it is met in at least this share of the weeks with jobs of the team."""
DEFAULT_WEEKS = 20
"""Independently seeded weeks a verdict rests on by default (``--weeks``; docs/advisor.md says
how the number was chosen)."""
MIN_JOBS = 30
"""Fewest jobs, over all the weeks, a verdict rests on (a ``pNN`` wait target needs more when
its nearest-rank percentile would otherwise be the largest wait: :func:`min_jobs`)."""
MIN_JOBS_PER_WEEK = 3.0
"""Fewest jobs a simulated week on average a verdict rests on: with fewer, each week's figure
is its one or two jobs' and more weeks do not make it a measurement."""
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


def weekly_figures(results: Iterable[SimulationResult]) -> list[tuple[TeamFigures, ...]]:
    """Each simulation's figures: one entry per week, what :func:`check_targets` judges."""
    return [team_figures(result) for result in results]


def mean_figures(weeks: Sequence[Sequence[TeamFigures]]) -> tuple[TeamFigures, ...]:
    """Each team's figures over ``weeks``: waits and preempted jobs pooled, instance-hours the
    mean per week, the longest run to the end of any week."""
    count = max(len(weeks), 1)
    teams: dict[str, list[TeamFigures]] = {}
    for week in weeks:
        for figures in week:
            teams.setdefault(figures.team, []).append(figures)
    return tuple(
        TeamFigures(
            name,
            tuple(sorted(w for f in every for w in f.waits_s)),
            sum(f.preempted_jobs for f in every),
            math.fsum(f.lost_instance_hours for f in every) / count,
            math.fsum(f.borrowed_instance_hours for f in every) / count,
            math.fsum(f.lent_instance_hours for f in every) / count,
            max(f.finish_max_s for f in every),
        )
        for name, every in teams.items()
    )


@dataclass(frozen=True)
class TargetCheck:
    """One team target judged over several weeks (see the module)."""

    team: str
    target: str
    """``p90_wait_minutes``, ``max_preempted_share``, ``start_within_period``, ..."""
    limit: float
    weekly: tuple[float, ...] = ()
    """The figure of each week with jobs of the team, in week order: minutes for waits and
    deadlines, a fraction for the preempted share (``inf``: a job never started or ended)."""
    jobs: int = 0
    """The team's jobs over all the weeks (what the verdict rests on)."""
    weeks_run: int = 1
    """Weeks simulated, with or without jobs of the team."""
    note: str = ""
    """Why a target was not checked (the days the team's jobs come on), or too few jobs."""

    @property
    def weeks(self) -> int:
        """Weeks the target was judged in (those with jobs of the team)."""
        return len(self.weekly)

    @property
    def weeks_met(self) -> int:
        return sum(value <= self.limit + 1e-9 for value in self.weekly)

    @property
    def value(self) -> float | None:
        """The median week's figure (the higher of the two middle ones); ``None`` without a
        week with jobs."""
        return statistics.median_high(self.weekly) if self.weekly else None

    @property
    def worst(self) -> float | None:
        """The worst week's figure; ``None`` without a week with jobs."""
        return max(self.weekly) if self.weekly else None

    @property
    def min_jobs(self) -> int:
        return min_jobs(self.target)

    @property
    def jobs_per_week(self) -> float:
        """The team's jobs per simulated week (weeks without its jobs included)."""
        return self.jobs / max(self.weeks_run, 1)

    @property
    def status(self) -> str:
        if not self.weekly:
            return NOT_CHECKED
        if self.jobs < self.min_jobs or self.jobs_per_week < MIN_JOBS_PER_WEEK:
            return TOO_FEW_JOBS
        return MET if self.weeks_met >= weeks_needed(self.weeks) else MISSED

    @property
    def met(self) -> bool:
        return self.status == MET

    @property
    def missed(self) -> bool:
        return self.status == MISSED

    @property
    def shortfall(self) -> int:
        """Weeks the target was not met in (0 when it is not judged)."""
        return self.weeks - self.weeks_met if self.status in (MET, MISSED) else 0

    @property
    def excess(self) -> float:
        """How far the median week is over the target, relative to it (a floor of 1 minute or
        1 % of jobs)."""
        value = self.value
        if value is None:
            return 0.0
        floor = 0.01 if self.target == PREEMPTED else 1.0
        return max(0.0, value - self.limit) / max(self.limit, floor)


def weeks_needed(weeks: int) -> int:
    """Weeks a target must be met in, of ``weeks`` judged: at least :data:`MET_SHARE`."""
    return math.ceil(MET_SHARE * weeks - 1e-9)


def min_jobs(target: str) -> int:
    """Fewest jobs a verdict on ``target`` rests on: :data:`MIN_JOBS`, and for a ``pNN`` wait
    enough that its nearest rank is not the largest wait (``100 / (100 - NN)``: 100 for p99)."""
    if target.startswith("p") and target.endswith("_wait_minutes"):
        percentile = int(target[1:3])
        return max(MIN_JOBS, math.ceil(100 / (100 - percentile)))
    return MIN_JOBS


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


def target_figure(target: str, mine: TeamFigures) -> float:
    """One week's figure of ``target`` for a team (minutes, or a fraction preempted)."""
    if target == PREEMPTED:
        return mine.preempted_share
    if target == START_WITHIN_PERIOD:
        return mine.wait(100) / MINUTE_S
    if target == FINISH_WITHIN_DEADLINE:
        return mine.finish_max_s / MINUTE_S
    return mine.wait(int(target[1:3])) / MINUTE_S


def check_targets(
    teams: TeamsFile, weeks: Sequence[Iterable[TeamFigures]], *, days: int
) -> tuple[TargetCheck, ...]:
    """Every team's targets, implicit ones included, judged on the figures of each of
    ``weeks`` (one simulated workload of ``days`` days each; see the module)."""
    by_week = [{f.team: f for f in week} for week in weeks]
    checks = []
    for team in teams.teams:
        mine = [week[team.name] for week in by_week if week[team.name].jobs]
        jobs = sum(f.jobs for f in mine)
        for target, limit in team_targets(team):
            weekly = tuple(target_figure(target, f) for f in mine)
            check = TargetCheck(team.name, target, limit, weekly, jobs, len(by_week))
            note = _note(check, team, days)
            checks.append(replace(check, note=note) if note else check)
    return tuple(checks)


def _note(check: TargetCheck, team: TeamProfile, days: int) -> str:
    if check.status == NOT_CHECKED:
        return _not_checked_note(team, days)
    if check.status != TOO_FEW_JOBS:
        return ""
    seen = (
        f"too few jobs: {check.jobs} job(s) of {team.name} in {check.weeks_run} simulated week(s)"
    )
    if check.jobs_per_week < MIN_JOBS_PER_WEEK:
        return (
            f"{seen}, {check.jobs_per_week:.1f} a week; a verdict needs at least "
            f"{MIN_JOBS_PER_WEEK:g} a week on average (a week's figure would be its one or two "
            "jobs', not a measurement), so more weeks do not help"
        )
    return (
        f"{seen}; a verdict needs at least {check.min_jobs}: simulate more weeks "
        f"(--weeks {_weeks_for(check)})"
    )


def _weeks_for(check: TargetCheck) -> int:
    """Weeks that would give ``check`` its minimum of jobs at the rate seen."""
    per_week = check.jobs / max(check.weeks_run, 1)
    return math.ceil(check.min_jobs / per_week) if per_week else check.weeks_run


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


def value_text(target: str, value: float) -> str:
    """One week's figure of ``target`` in words: ``12.5 min``, ``3% preempted``, ...."""
    if target == PREEMPTED:
        return f"{value:.0%} preempted"
    if target == START_WITHIN_PERIOD:
        return f"longest wait {_minutes(value)}"
    if target == FINISH_WITHIN_DEADLINE:
        return f"longest run to the end {_minutes(value)}"
    return _minutes(value)


def figure_text(check: TargetCheck) -> str:
    """The median week's figure in words: ``12.5 min``, ``3% preempted``,
    ``longest wait 1.4 h``; ``-`` without a week with jobs."""
    return "-" if check.value is None else value_text(check.target, check.value)


_LABELS = {
    PREEMPTED: "preempted",
    START_WITHIN_PERIOD: "longest wait",
    FINISH_WITHIN_DEADLINE: "longest run to the end",
}


def _number(target: str, value: float) -> str:
    return f"{value:.0%}" if target == PREEMPTED else _minutes(value)


def evidence_text(check: TargetCheck) -> str:
    """``median 12.5 min, worst week 40.0 min; met in 9 of 10 weeks, 812 jobs`` (``longest
    wait: median ...`` for the schedule's targets)."""
    if check.value is None or check.worst is None:
        return "-"
    weeks = f"{_met_in(check)}, {check.jobs} jobs"
    if check.worst == check.value:
        every = " in every week" if check.weeks > 1 else ""
        return f"{figure_text(check)}{every}; {weeks}"
    label = _LABELS.get(check.target)
    spread = (
        f"median {_number(check.target, check.value)}, "
        f"worst week {_number(check.target, check.worst)}"
    )
    return f"{label}: {spread}; {weeks}" if label else f"{spread}; {weeks}"


def _met_in(check: TargetCheck) -> str:
    return f"met in {check.weeks_met} of {check.weeks} week{'s' if check.weeks > 1 else ''}"


def check_line(check: TargetCheck) -> str:
    """One line a user reads after the status: the target and its evidence, or why it was not
    judged."""
    if check.status == NOT_CHECKED:
        return f"{check.team}: {requirement_text(check)}: {check.note}"
    if check.status == TOO_FEW_JOBS:
        return f"{check.team}: {requirement_text(check)} ({evidence_text(check)}): {check.note}"
    return f"{check.team}: {requirement_text(check)} ({evidence_text(check)})"


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def check_json(check: TargetCheck) -> dict[str, object]:
    """The contract's form: target, required, figure (the median week's), status, weeksMet,
    weeks, jobs, worstFigure (figures ``null`` when not judged or infinite)."""
    out: dict[str, object] = {
        "target": check.target,
        "required": check.limit,
        "figure": _finite(check.value),
        "status": check.status,
        "weeksMet": check.weeks_met,
        "weeks": check.weeks,
        "jobs": check.jobs,
        "worstFigure": _finite(check.worst),
    }
    if check.note:
        out["note"] = check.note
    return out
