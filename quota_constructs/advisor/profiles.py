"""Team profiles: what each team runs and tolerates; the advisor's input file.

A team-profile file names an organisation and its teams (one quota share each). Pydantic checks
the shape (unknown keys rejected); the quota rules (names, instance types, counts, at most 20
teams) come from :mod:`quota_constructs.model`, reported with ``teams[i]`` paths. Every error
names the file, field, value and fix, like organisation files.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import Field, StrictBool, StrictInt, ValidationError

from quota_constructs.advisor.limits import (
    MAX_JOB_MINUTES,
    MAX_PROFILE_DESCRIPTION_CHARS,
    MAX_SCHEDULE_CHARS,
    MAX_STARTUP_MINUTES,
    MAX_WAIT_TARGET_MINUTES,
)
from quota_constructs.config import (
    AccessConfig,
    FileKind,
    ShareConfig,
    StrictModel,
    parsable,
    pydantic_problems,
    root_problem,
    under,
)
from quota_constructs.model import (
    MAX_SHARES_PER_QUEUE,
    JobQueueSpec,
    Organisation,
    Problem,
    QuotaConfigError,
    QuotaShareSpec,
    SharePaths,
    SharingStrategy,
)
from quota_constructs.safe_load import TEAM_PROFILE_FILE_MAX_BYTES, load_file

MAX_RUNS_PER_DAY = 10_000.0
"""Most ``runs_per_day`` of a team (``runs_per_week``: seven times it)."""


class TeamsFileError(QuotaConfigError):
    """A team-profile file cannot be read or breaks rules; the message names the file."""


class WorkloadKind(StrEnum):
    """What a team's jobs look like; drives the advice and the workload generator."""

    SCHEDULED = "scheduled"
    """Training on a fixed schedule (``schedule``), using the team's capacity each run."""
    EXPERIMENTAL = "experimental"
    """Bursts of experiments of varied size during working hours."""
    AD_HOC = "ad_hoc"
    """Occasional jobs on the active days."""


class Day(StrEnum):
    """Days of the week, Monday first (``datetime.weekday()`` order)."""

    MON = "mon"
    TUE = "tue"
    WED = "wed"
    THU = "thu"
    FRI = "fri"
    SAT = "sat"
    SUN = "sun"


ALL_DAYS = tuple(Day)


@dataclass(frozen=True)
class Schedule:
    """A parsed ``schedule``: run at ``minutes`` past each hour in ``hours`` (of active days)."""

    text: str
    hours: tuple[int, ...]
    minutes: tuple[int, ...]

    @property
    def runs_per_day(self) -> int:
        return len(self.hours) * len(self.minutes)

    @property
    def period_s(self) -> float:
        """Mean time between runs on an active day."""
        return 86400.0 / self.runs_per_day

    def times_of_day(self) -> list[float]:
        """Seconds after midnight of each run, sorted."""
        return sorted(h * 3600.0 + m * 60.0 for h in self.hours for m in self.minutes)


_EVERY = re.compile(r"^every\s+(\d+)\s*(m|min|minutes?|h|hours?)$")
_SCHEDULE_FIX = (
    "write 'hourly', 'daily', 'every 30m', 'every 2h' or a cron line 'MIN HOUR * * *' "
    "(days come from active_days)"
)


def parse_schedule(text: str) -> Schedule:
    """Parse ``hourly``, ``daily``, ``every N m|h`` or a 5-field cron line.

    Cron fields: minute and hour accept ``*``, ``*/N``, numbers and comma lists; day-of-month
    and month must be ``*`` and day-of-week ``*`` (use ``active_days`` for days).
    Raises ``ValueError`` with the fix.
    """
    norm = text.strip().lower()
    aliases = {"hourly": "0 * * * *", "@hourly": "0 * * * *", "daily": "0 0 * * *"}
    aliases["@daily"] = aliases["daily"]
    match = _EVERY.match(norm)
    if match:
        step, unit = int(match.group(1)), match.group(2)[0]
        if unit == "m" and step > 0 and 60 % step == 0:
            norm = f"*/{step} * * * *"
        elif unit == "h" and step > 0 and 24 % step == 0:
            norm = f"0 */{step} * * *"
        else:
            raise ValueError(f"'{text}': the interval must divide an hour (minutes) or a day")
    norm = aliases.get(norm, norm)
    fields = norm.split()
    if len(fields) != 5 or any(f != "*" for f in fields[2:]):
        raise ValueError(f"'{text}' is not a supported schedule")
    return Schedule(text, _cron_field(fields[1], 24), _cron_field(fields[0], 60))


def _cron_field(field: str, size: int) -> tuple[int, ...]:
    if field == "*":
        return tuple(range(size))
    if field.startswith("*/") and field[2:].isdigit() and int(field[2:]) > 0:
        return tuple(range(0, size, int(field[2:])))
    parts = field.split(",")
    if all(p.isdigit() and int(p) < size for p in parts):
        return tuple(sorted({int(p) for p in parts}))
    raise ValueError(f"cron field '{field}' must be *, */N or numbers below {size}")


_MINUTES: dict[str, Any] = {"exclusiveMinimum": 0, "maximum": MAX_JOB_MINUTES}
"""JSON Schema bounds of a duration in minutes (the rule is :meth:`JobMinutes.problems`)."""
_WAIT: dict[str, Any] = {"minimum": 0, "maximum": MAX_WAIT_TARGET_MINUTES}


class JobMinutes(StrictModel):
    """How long a team's jobs run: median and longest, in minutes."""

    p50: float = Field(description="Median job duration (minutes).", json_schema_extra=_MINUTES)
    max: float = Field(
        description="Longest job (minutes); draws above it are cut to it.",
        json_schema_extra=_MINUTES,
    )

    def problems(self, path: str) -> list[Problem]:
        problems = [
            Problem(
                f"{path}.{name}",
                value,
                f"must be a positive number of minutes, at most {MAX_JOB_MINUTES:.0f} (28 days)",
                "e.g. 45",
            )
            for name, value in (("p50", self.p50), ("max", self.max))
            if not (math.isfinite(value) and 0 < value <= MAX_JOB_MINUTES)
        ]
        if not problems and self.max < self.p50:
            problems.append(
                Problem(
                    f"{path}.max",
                    self.max,
                    f"the longest job must be at least the median (p50 {self.p50:g})",
                    f"raise max to {self.p50:g} or more, or lower p50",
                )
            )
        return problems


DEFAULT_JOB_MINUTES = {
    WorkloadKind.SCHEDULED: JobMinutes(p50=30, max=60),
    WorkloadKind.EXPERIMENTAL: JobMinutes(p50=90, max=480),
    WorkloadKind.AD_HOC: JobMinutes(p50=150, max=240),
}
"""``job_minutes`` when a profile omits it, per workload kind (docs/advisor.md)."""


class InstanceRange(StrictModel):
    """Instances per job drawn uniformly from ``min`` to ``max``."""

    min: StrictInt
    max: StrictInt


class Targets(StrictModel):
    """What a team needs from the sharing configuration; ``quota recommend --optimize`` checks.

    Waits are pooled over the simulated workloads; a job that never starts counts as an
    infinite wait. ``max_preempted_share``: the fraction of the team's jobs preempted at least
    once (a team that does not tolerate preemption has an implicit 0).
    """

    p50_wait_minutes: float | None = Field(
        default=None, description="Median wait to start.", json_schema_extra=_WAIT
    )
    p90_wait_minutes: float | None = Field(
        default=None, description="90th percentile wait.", json_schema_extra=_WAIT
    )
    p99_wait_minutes: float | None = Field(
        default=None, description="99th percentile wait.", json_schema_extra=_WAIT
    )
    max_preempted_share: float | None = Field(
        default=None,
        description="Most of the team's jobs (fraction 0..1) preempted at least once.",
        json_schema_extra={"minimum": 0, "maximum": 1},
    )

    def waits(self) -> dict[int, float]:
        """Wait targets in seconds by percentile (50, 90, 99), only those set."""
        values = {50: self.p50_wait_minutes, 90: self.p90_wait_minutes, 99: self.p99_wait_minutes}
        return {q: 60.0 * v for q, v in values.items() if v is not None}

    def problems(self, path: str, *, tolerant: bool) -> list[Problem]:
        problems = [
            Problem(
                f"{path}.p{q}_wait_minutes",
                v / 60,
                f"must be 0 or more minutes, at most {MAX_WAIT_TARGET_MINUTES:.0f} (366 days)",
                "e.g. 30",
            )
            for q, v in self.waits().items()
            if not (math.isfinite(v) and 0 <= v / 60 <= MAX_WAIT_TARGET_MINUTES)
        ]
        share = self.max_preempted_share
        if share is not None and not 0 <= share <= 1:
            problems.append(
                Problem(
                    f"{path}.max_preempted_share",
                    share,
                    "a share of jobs is between 0 and 1",
                    "e.g. 0.1 for at most one job in ten preempted",
                )
            )
        elif share and not tolerant:
            problems.append(
                Problem(
                    f"{path}.max_preempted_share",
                    share,
                    "contradicts preemption_tolerant: false (the team accepts no preemption)",
                    "remove max_preempted_share, or set preemption_tolerant: true",
                )
            )
        return problems


class TeamProfile(StrictModel):
    """One team: its guaranteed capacity, its workload and what it tolerates."""

    name: str = Field(
        description="Team and quota share name, [A-Za-z0-9_-]{1,128}.",
        json_schema_extra=ShareConfig.model_fields["name"].json_schema_extra,
    )
    capacity: dict[str, StrictInt] = Field(
        description="Guaranteed instances per SageMaker training instance type (1 to 5 types).",
        json_schema_extra=ShareConfig.model_fields["capacity"].json_schema_extra,
    )
    workload: WorkloadKind = Field(description="scheduled | experimental | ad_hoc.")
    schedule: str | None = Field(
        default=None, description="For scheduled teams: hourly, daily, every 30m, or cron."
    )
    preemption_tolerant: StrictBool = Field(
        default=False, description="The team accepts that its jobs are preempted and re-run."
    )
    checkpointing: StrictBool | str = Field(
        default=False, description="false, true, or the S3 URI the jobs checkpoint to."
    )
    needs_burst: StrictBool = Field(
        default=False, description="The team wants to borrow idle capacity of other teams."
    )
    lends_when_idle: StrictBool = Field(
        default=False, description="The team accepts lending its idle capacity."
    )
    active_days: list[Day] = Field(
        default_factory=lambda: list(ALL_DAYS), description="Days the team submits jobs."
    )
    job_minutes: JobMinutes | None = Field(
        default=None, description="Median and longest job in minutes (default per workload)."
    )
    startup_minutes: float | None = Field(
        default=None,
        description="SageMaker start-up of each job (instance provisioning and image pull), "
        "minutes; default the simulation's (--startup-s, 5 minutes).",
        json_schema_extra={"minimum": 0, "maximum": MAX_STARTUP_MINUTES},
    )
    deadline_minutes: float | None = Field(
        default=None,
        description="Scheduled teams: each run must finish within this many minutes of its "
        "slot (default: before the next slot).",
        json_schema_extra=_MINUTES,
    )
    instances_per_job: StrictInt | InstanceRange | None = Field(
        default=None,
        description="Instances per job, or {min, max} (default per workload, see docs).",
    )
    runs_per_day: float | None = Field(
        default=None,
        description="Ad-hoc and experimental teams: jobs submitted per active day, on average "
        "(default: the generator's rate for the workload kind). Not with runs_per_week.",
        json_schema_extra={"exclusiveMinimum": 0, "maximum": MAX_RUNS_PER_DAY},
    )
    runs_per_week: float | None = Field(
        default=None,
        description="Ad-hoc and experimental teams: jobs submitted per week, spread over the "
        "active days. Not with runs_per_day.",
        json_schema_extra={"exclusiveMinimum": 0, "maximum": 7 * MAX_RUNS_PER_DAY},
    )
    targets: Targets = Field(
        default_factory=Targets, description="What the team needs (quota recommend --optimize)."
    )
    description: str = Field(
        default="", max_length=MAX_PROFILE_DESCRIPTION_CHARS, description="Free text."
    )
    access: AccessConfig | None = Field(
        default=None,
        description="Team access, copied unchanged to the team's share in the recommended "
        "organisation file (see the organisation file's access block).",
    )

    @property
    def checkpoints(self) -> bool:
        """True when the team's jobs checkpoint (``true`` or an S3 URI)."""
        return self.checkpointing is not False

    @property
    def durations(self) -> JobMinutes:
        """``job_minutes``, or the default of the team's workload kind."""
        return self.job_minutes or DEFAULT_JOB_MINUTES[self.workload]

    def instance_range(self, instance_type: str) -> tuple[int, int]:
        """Fewest and most instances of a job on ``instance_type``.

        Default: the type's whole capacity for scheduled and ad-hoc teams, 1 to all of it for
        experimental teams.
        """
        size = self.instances_per_job
        if isinstance(size, int):
            return size, size
        if size is not None:
            return size.min, size.max
        cap = self.capacity[instance_type]
        return (1, cap) if self.workload is WorkloadKind.EXPERIMENTAL else (cap, cap)

    @property
    def preemption_target(self) -> float | None:
        """Most of the team's jobs that may be preempted: 0 without tolerance."""
        return self.targets.max_preempted_share if self.preemption_tolerant else 0.0

    @property
    def parsed_schedule(self) -> Schedule:
        """The schedule of a scheduled team (default ``hourly``)."""
        return parse_schedule(self.schedule or "hourly")

    def problems(self, path: str) -> list[Problem]:
        """Profile rules beyond the shape: checkpoint URI, schedule, distinct active days."""
        problems: list[Problem] = []
        if isinstance(self.checkpointing, str) and not self.checkpointing.startswith("s3://"):
            problems.append(
                Problem(
                    f"{path}.checkpointing",
                    self.checkpointing,
                    "checkpointing is true, false or an S3 URI",
                    "write s3://bucket/prefix, true or false",
                )
            )
        if self.schedule is not None and len(self.schedule) > MAX_SCHEDULE_CHARS:
            problems.append(
                Problem(
                    f"{path}.schedule",
                    self.schedule,
                    f"a schedule is at most {MAX_SCHEDULE_CHARS} characters",
                    _SCHEDULE_FIX,
                )
            )
        elif self.schedule is not None:
            try:
                parse_schedule(self.schedule)
            except ValueError as exc:
                problems.append(Problem(f"{path}.schedule", self.schedule, str(exc), _SCHEDULE_FIX))
        if not self.active_days or len(set(self.active_days)) != len(self.active_days):
            problems.append(
                Problem(
                    f"{path}.active_days",
                    [d.value for d in self.active_days],
                    "active_days must list at least one day, each once",
                    "list days such as [mon, tue, wed, thu, fri]",
                )
            )
        if self.access is not None:
            problems += self.access.to_spec().problems(f"{path}.access")
        if self.job_minutes is not None:
            problems += self.job_minutes.problems(f"{path}.job_minutes")
        problems += self._timing_problems(path)
        problems += self._rate_problems(path)
        problems += self._size_problems(f"{path}.instances_per_job")
        problems += self.targets.problems(f"{path}.targets", tolerant=self.preemption_tolerant)
        return problems

    @property
    def runs_per_active_day(self) -> float | None:
        """The profile's arrival rate per active day (``runs_per_day``, or ``runs_per_week``
        spread over the active days); ``None``: the generator's default for the kind."""
        if self.runs_per_day is not None:
            return self.runs_per_day
        if self.runs_per_week is not None:
            return self.runs_per_week / max(len(self.active_days), 1)
        return None

    def _rate_problems(self, path: str) -> list[Problem]:
        """``runs_per_day`` or ``runs_per_week``: one of them, positive and bounded, and not
        for a scheduled team (its schedule is its rate)."""
        given = {
            key: value
            for key, value in (
                ("runs_per_day", self.runs_per_day),
                ("runs_per_week", self.runs_per_week),
            )
            if value is not None
        }
        if len(given) == 2:
            return [
                Problem(
                    f"{path}.runs_per_day",
                    given,
                    f"team {self.name!r} gives both runs_per_day and runs_per_week",
                    "keep one of runs_per_day and runs_per_week",
                )
            ]
        problems = []
        for key, value in given.items():
            top = MAX_RUNS_PER_DAY * (7 if key == "runs_per_week" else 1)
            if self.workload is WorkloadKind.SCHEDULED:
                problems.append(
                    Problem(
                        f"{path}.{key}",
                        value,
                        f"team {self.name!r} is scheduled: its schedule sets how often it runs",
                        f"drop {key}, or set schedule (e.g. 'every 2h')",
                    )
                )
            elif not (math.isfinite(value) and 0 < value <= top):
                problems.append(
                    Problem(
                        f"{path}.{key}",
                        value,
                        f"must be more than 0 and at most {top:g}",
                        f"e.g. {key}: 4",
                    )
                )
        return problems

    def _timing_problems(self, path: str) -> list[Problem]:
        """``startup_minutes`` within its bound; ``deadline_minutes`` positive, scheduled only."""
        problems = []
        startup = self.startup_minutes
        bounded = startup is None or (
            math.isfinite(startup) and 0 <= startup <= MAX_STARTUP_MINUTES
        )
        if not bounded:
            problems.append(
                Problem(
                    f"{path}.startup_minutes",
                    startup,
                    f"must be 0 or more minutes, at most {MAX_STARTUP_MINUTES:g}",
                    "e.g. 5",
                )
            )
        deadline = self.deadline_minutes
        if deadline is None:
            return problems
        if self.workload is not WorkloadKind.SCHEDULED:
            problems.append(
                Problem(
                    f"{path}.deadline_minutes",
                    deadline,
                    f"only scheduled teams have a deadline (this team is {self.workload.value})",
                    "remove deadline_minutes, or set workload: scheduled",
                )
            )
        elif not (math.isfinite(deadline) and 0 < deadline <= MAX_JOB_MINUTES):
            problems.append(
                Problem(
                    f"{path}.deadline_minutes",
                    deadline,
                    f"must be a positive number of minutes, at most {MAX_JOB_MINUTES:.0f}",
                    "e.g. 60",
                )
            )
        return problems

    def _size_problems(self, path: str) -> list[Problem]:
        """``instances_per_job``: 1 or more, min <= max, within every type's own capacity."""
        size = self.instances_per_job
        if size is None or not self.capacity:
            return []
        low, high = (size, size) if isinstance(size, int) else (size.min, size.max)
        room = min(self.capacity.values())
        value = size if isinstance(size, int) else size.model_dump()
        if low < 1 or high < low:
            return [
                Problem(
                    path, value, "needs 1 <= min <= max instances", "e.g. 1 or {min: 1, max: 4}"
                )
            ]
        if high > room:
            return [
                Problem(
                    path,
                    value,
                    f"a job of {high} instances does not fit the team's own capacity of "
                    f"{room} on every instance type",
                    f"lower it to {room} or raise the capacity",
                )
            ]
        return []


class TeamsFile(StrictModel):
    """A team-profile file: an organisation and its teams."""

    organisation: str = Field(description="Organisation name: letters, digits, '-'.")
    description: str = Field(
        default="", max_length=MAX_PROFILE_DESCRIPTION_CHARS, description="Free text."
    )
    teams: list[TeamProfile] = Field(
        description=f"1 to {MAX_SHARES_PER_QUEUE} teams, one quota share each.",
        json_schema_extra={"minItems": 1, "maxItems": MAX_SHARES_PER_QUEUE},
    )

    def team(self, name: str) -> TeamProfile:
        """The team called ``name``; ``KeyError`` naming the known teams otherwise."""
        for team in self.teams:
            if team.name == name:
                return team
        raise KeyError(f"no team {name!r} (teams: {', '.join(t.name for t in self.teams)})")


def _rule_problems(teams: TeamsFile) -> list[Problem]:
    """Quota rules from the model, on an organisation of RESERVE shares mirroring the teams."""
    listed = [(f"teams[{index}]", team) for index, team in enumerate(teams.teams)]
    return _team_rule_problems(teams.organisation, listed, count=len(listed))


def _team_rule_problems(
    organisation: str, teams: list[tuple[str, TeamProfile]], *, count: int
) -> list[Problem]:
    """The model's rules and each profile's own, for ``teams`` (path in the file, profile) of
    the ``count`` teams of the file."""
    shares = tuple(
        QuotaShareSpec(name=t.name, capacity=t.capacity, strategy=SharingStrategy.RESERVE)
        for _, t in teams
    )
    org = Organisation(name=organisation, queue=JobQueueSpec(shares=shares))
    problems = org.problems(where=SharePaths("teams", [path for path, _ in teams], count))
    for path, team in teams:
        problems += team.problems(path)
    return problems


def _problems_of_parsable_teams(data: dict[str, Any], reported: set[str]) -> list[Problem]:
    """Rule problems of a file with shape errors, each team checked on its fields that passed
    (:func:`~quota_constructs.config.parsable`); a path already reported, or under one, is
    skipped."""
    raw = data.get("teams")
    items = list(enumerate(raw)) if isinstance(raw, list) else []
    teams = [(f"teams[{i}]", parsable(TeamProfile, team)) for i, team in items]
    parsed = [(path, team) for path, team in teams if team is not None]
    name = data.get("organisation")
    name = name if isinstance(name, str) else ""  # a name that failed is reported already
    problems = _team_rule_problems(name, parsed, count=len(items))
    return [p for p in problems if not under(p.path, reported)]


def parse_teams(data: Any, *, source: str = "<data>") -> TeamsFile:
    """Validate parsed YAML as a team-profile file; :class:`TeamsFileError` lists every problem.

    All in one run, as for organisation files: shape errors (unknown keys with "did you mean",
    wrong types, missing fields) and the rules of every team that parsed.
    """
    root = root_problem(data, FileKind.TEAM_PROFILES, source)
    if root is not None:
        raise TeamsFileError([root], context=source)
    try:
        teams = TeamsFile.model_validate(data)
    except ValidationError as exc:
        problems = pydantic_problems(exc, model=TeamsFile)
        problems += _problems_of_parsable_teams(data, {p.path for p in problems})
        raise TeamsFileError(problems, context=source) from None
    problems = _rule_problems(teams)
    if problems:
        raise TeamsFileError(problems, context=source)
    return teams


def load_teams(path: str | Path) -> TeamsFile:
    """Read and validate a team-profile file; :class:`TeamsFileError` names file, line, field."""
    return load_file(
        path,
        lambda data, source: parse_teams(data, source=source),
        max_bytes=TEAM_PROFILE_FILE_MAX_BYTES,
        error=TeamsFileError,
    )


def teams_json_schema() -> str:
    """JSON Schema of team-profile files, for editors (``quota recommend schema``)."""
    schema = TeamsFile.model_json_schema()
    schema["title"] = "Team profiles (quota recommend)"
    return json.dumps(schema, indent=2)
