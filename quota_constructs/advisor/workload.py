"""Workloads for the what-if simulator: CSV files and a seeded generator from team profiles.

CSV columns: ``submit_time_s, share, instance_type, instance_count, duration_s, priority`` and
optionally ``checkpoint_interval_s``. Every bad row is reported with its line number (nothing
is skipped). Simulated time 0 is a Monday, 00:00.
"""

from __future__ import annotations

import csv
import io
import math
import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from quota_constructs.advisor.limits import (
    MAX_DAYS,
    MAX_INTENSITY,
    job_problems,
    workload_size_problems,
)
from quota_constructs.advisor.profiles import Day, TeamProfile, TeamsFile, WorkloadKind
from quota_constructs.config import pydantic_problems
from quota_constructs.model import (
    Problem,
    QuotaConfigError,
    check_instance_type,
    check_name,
    check_scheduling_priority,
)
from quota_constructs.safe_load import WORKLOAD_FILE_MAX_BYTES, read_text

if TYPE_CHECKING:
    from _csv import Reader

DAY_S = 86400.0
DEFAULT_STARTUP_S = 300.0
"""SageMaker start-up per job when nothing else is said: 5 minutes to provision an instance and
pull a training image (``--startup-s``, a profile's ``startup_minutes``)."""
REQUIRED_COLUMNS = (
    "submit_time_s",
    "share",
    "instance_type",
    "instance_count",
    "duration_s",
    "priority",
)
OPTIONAL_COLUMNS = ("checkpoint_interval_s",)


class WorkloadError(QuotaConfigError):
    """A workload file or generated workload is unusable; problems name lines and columns."""


@dataclass(frozen=True)
class WorkloadJob:
    """One job to submit: when, to which share, what it needs, how long it runs."""

    submit_time_s: float
    share: str
    instance_type: str
    instance_count: int
    duration_s: float
    priority: int
    checkpoint_interval_s: float | None = None
    line: int | None = None
    """Line of the CSV file the job came from (``None`` for generated jobs)."""

    @property
    def instance_seconds(self) -> float:
        return self.instance_count * self.duration_s


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")

    submit_time_s: float = Field(ge=0, allow_inf_nan=False)
    share: str
    instance_type: str
    instance_count: int = Field(ge=1)
    duration_s: float = Field(gt=0, allow_inf_nan=False)
    priority: int
    checkpoint_interval_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)


_DECIMAL_TEXT = r"[0-9]{1,15}(?:\.[0-9]{1,15})?"
"""A plain decimal number: parsed alike by ``float`` and pydantic (both correctly rounded)."""
_COUNT_TEXT = r"[1-9][0-9]{0,8}"
_PLAIN_VALUE = {
    "submit_time_s": f"({_DECIMAL_TEXT})",
    "share": r'([^,"\s]+)',
    "instance_type": r'([^,"\s]+)',
    "instance_count": f"({_COUNT_TEXT})",
    "duration_s": f"({_DECIMAL_TEXT})",
    "priority": f"({_COUNT_TEXT})",
    "checkpoint_interval_s": f"({_DECIMAL_TEXT})?",
}
"""Each column's plain values, as a group of a line pattern (names are checked apart)."""


_Values = tuple[str, str, str, str, str, str, str | None]
"""A row's values in :data:`REQUIRED_COLUMNS` order, then ``checkpoint_interval_s``."""


JobFields = tuple[float, str, str, int, float, int, float | None]
"""A job's fields in :class:`WorkloadJob` order (``line`` apart)."""


def _valid_plain_fields(values: _Values, valid: set[tuple[str, str, int]]) -> JobFields | None:
    """The fields of a row whose values are plain (``_PLAIN_VALUE``), when its names (checked
    once for each ``valid`` combination) and bounds are valid; ``None`` otherwise."""
    submit, share, itype, instances, duration, priority, checkpoint = values
    names = (share, itype, int(priority))
    if names not in valid:
        if _name_problems(names, ""):
            return None
        valid.add(names)
    interval = float(checkpoint) if checkpoint else None
    submit_s, count, duration_s = float(submit), int(instances), float(duration)
    if not duration_s > 0 or (interval is not None and not interval > 0):
        return None
    if job_problems(submit_s, count, duration_s, interval, ""):
        return None
    return (submit_s, share, itype, count, duration_s, names[2], interval)


def _name_problems(names: tuple[str, str, int], where: str) -> list[Problem]:
    """The problems of a row's share, instance type and priority (the model's rules)."""
    share, instance_type, priority = names
    problems = check_name(share, f"{where}.share", what="quota share name")
    problems += check_instance_type(instance_type, f"{where}.instance_type")
    problems += check_scheduling_priority(priority, f"{where}.priority")
    return problems


PlainReader = Callable[[str, set[tuple[str, str, int]]], "JobFields | None"]
"""Reads one line (without its ``\\n``): its job's fields when the line is a plain row of a
valid job, else ``None``."""


def plain_reader(header: list[str]) -> PlainReader | None:
    """The reader of plain rows under ``header`` (one line pattern, :data:`_PLAIN_VALUE` per
    column); ``None`` when the header repeats a column (only the full reader reads it)."""
    if len(set(header)) != len(header):
        return None
    fullmatch = re.compile(", *".join(_PLAIN_VALUE[c] for c in header) + "\r?").fullmatch
    required = itemgetter(*(header.index(c) for c in REQUIRED_COLUMNS))
    optional = OPTIONAL_COLUMNS[0]
    checkpoint = header.index(optional) if optional in header else None

    def read(text: str, valid: set[tuple[str, str, int]]) -> JobFields | None:
        match = fullmatch(text)
        if match is None:
            return None
        values = match.groups()
        found = None if checkpoint is None else values[checkpoint]
        return _valid_plain_fields((*required(values), found), valid)

    return read


def _read_plain(text: str, header: list[str]) -> list[WorkloadJob] | None:
    """Every job of ``text`` (its header on line 1 alone) when each of its lines is blank or a
    plain row (:func:`plain_reader`) of a valid job, as the full reader would read them;
    ``None`` when a line is anything else: the full reader then reads the whole text and
    reports every problem."""
    read = plain_reader(header)
    if read is None:
        return None
    jobs: list[WorkloadJob] = []
    valid: set[tuple[str, str, int]] = set()
    for line, text_line in enumerate(text.split("\n")[1:], start=2):
        fields = read(text_line, valid)
        if fields is None:
            if text_line in ("", "\r"):
                continue  # a blank line, skipped as csv skips it
            return None
        jobs.append(WorkloadJob(*fields, line=line))
    return jobs


def _row_problems(
    row: dict[str, Any], line: int, valid: set[tuple[str, str, int]]
) -> tuple[WorkloadJob | None, list[Problem]]:
    """The row's job, or its problems, checked in full (pydantic, then the model's rules).
    ``valid``: (share, type, priority) already checked."""
    where = f"line {line}"
    data = {k: v for k, v in row.items() if not (k in OPTIONAL_COLUMNS and v in ("", None))}
    try:
        parsed = _Row.model_validate(data)
    except ValidationError as exc:
        return None, pydantic_problems(exc, prefix=where)
    names = (parsed.share, parsed.instance_type, parsed.priority)
    problems: list[Problem] = []
    if names not in valid:
        problems = _name_problems(names, where)
        if not problems:
            valid.add(names)
    problems += job_problems(
        parsed.submit_time_s,
        parsed.instance_count,
        parsed.duration_s,
        parsed.checkpoint_interval_s,
        where,
    )
    if problems:
        return None, problems
    return WorkloadJob(**vars(parsed), line=line), []


def parse_workload_csv(text: str, *, source: str = "<csv>") -> list[WorkloadJob]:
    """Parse workload CSV text; :class:`WorkloadError` lists every bad row by line number.

    One reader: a file whose every line is blank or plain (:func:`_read_plain`, one line
    pattern) is read by it; any other file is read row by row as :class:`csv.DictReader` reads
    it and each row checked in full (pydantic, then the model's rules), which also reports
    every problem. The two agree on every file the first reads (tests/advisor/test_workload.py).
    """
    reader = csv.reader(io.StringIO(text), skipinitialspace=True)
    header = [h.strip() for h in next(reader, [])]
    problems = header_problems(header)
    if problems:
        raise WorkloadError(problems, context=source)
    if reader.line_num == 1:
        every = _read_plain(text, header)
        if every is not None:
            return _checked_size(every, source, [])
    jobs: list[WorkloadJob] = []
    valid: set[tuple[str, str, int]] = set()
    for line, values in _csv_rows(reader, problems):
        job = row_job(values, header, line, valid, problems)
        if job is not None:
            jobs.append(job)
    return _checked_size(jobs, source, problems)


def row_job(
    values: list[str],
    header: list[str],
    line: int,
    valid: set[tuple[str, str, int]],
    problems: list[Problem],
) -> WorkloadJob | None:
    """The job of one CSV row (``values`` under ``header``, its last line ``line``), checked in
    full; ``None`` for a blank row or a bad one (its problems appended to ``problems``)."""
    row = _as_dict(values, header)
    if row.get(None):
        problems.append(
            Problem(
                f"line {line}",
                row[None],
                f"more values than the {len(header)} columns of the header",
                "remove the extra values or quote values containing commas",
            )
        )
        return None
    if all(v in ("", None) for v in row.values()):
        return None  # blank line
    if any(row.get(c) is None for c in REQUIRED_COLUMNS):
        given = [v for v in row.values() if v is not None]
        problems.append(
            Problem(
                f"line {line}",
                ",".join(given),
                f"{len(given)} values for the {len(header)} columns of the header",
                "give every required column a value",
            )
        )
        return None
    job, row_problems = _row_problems(row, line, valid)
    problems += row_problems
    return job


def _checked_size(
    jobs: list[WorkloadJob], source: str, problems: list[Problem]
) -> list[WorkloadJob]:
    """``jobs`` sorted by submit time; :class:`WorkloadError` listing ``problems`` (the rows')
    and whether there are no jobs or too many."""
    if not jobs and not problems:
        problems.append(Problem("<file>", source, "the workload has no jobs", "add rows"))
    problems += workload_size_problems(len(jobs), "<file>")
    if problems:
        raise WorkloadError(problems, context=source)
    return sorted(jobs, key=attrgetter("submit_time_s"))


def _as_dict(values: list[str], header: list[str]) -> dict[Any, Any]:
    """The row as :class:`csv.DictReader` gives it: missing values ``None``, extra ones a list
    under the key ``None``."""
    row: dict[Any, Any] = dict(zip(header, values, strict=False))
    if len(values) > len(header):
        row[None] = values[len(header) :]
    for column in header[len(values) :]:
        row[column] = None
    return row


def _csv_rows(reader: Reader, problems: list[Problem]) -> Iterator[tuple[int, list[str]]]:
    """``reader``'s rows with their (last) line numbers, empty lines skipped (as
    :class:`csv.DictReader` skips them); a row the csv module cannot read (a bare carriage
    return in a value) ends them, its problem appended to ``problems``."""
    line = reader.line_num
    try:
        for values in reader:
            line = reader.line_num
            if values:
                yield line, values
    except csv.Error as error:
        problems.append(
            Problem(
                f"line {line + 1}",  # the line it could not read
                str(error),
                "not valid CSV",
                "quote values that hold a line break or a carriage return",
            )
        )


def header_problems(header: Sequence[str]) -> list[Problem]:
    expected = ", ".join(REQUIRED_COLUMNS) + f" [, {OPTIONAL_COLUMNS[0]}]"
    given = ", ".join(header)
    problems = [
        Problem("line 1", given, f"missing column {c!r}", f"the header is: {expected}")
        for c in REQUIRED_COLUMNS
        if c not in header
    ]
    problems += [
        Problem("line 1", c, f"unknown column {c!r}", f"remove it; the header is: {expected}")
        for c in header
        if c not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS
    ]
    return problems


def load_workload_csv(path: str | Path) -> list[WorkloadJob]:
    """Read a workload CSV file (see :func:`parse_workload_csv`)."""
    text = read_text(path, max_bytes=WORKLOAD_FILE_MAX_BYTES, error=WorkloadError)
    return parse_workload_csv(text, source=str(path))


def workload_csv(jobs: Iterable[WorkloadJob]) -> str:
    """The CSV text of ``jobs`` (readable by :func:`parse_workload_csv`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow((*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS))
    for j in jobs:
        ckpt = "" if j.checkpoint_interval_s is None else f"{j.checkpoint_interval_s:g}"
        writer.writerow(
            (
                f"{j.submit_time_s:.3f}",
                j.share,
                j.instance_type,
                j.instance_count,
                f"{j.duration_s:.3f}",
                j.priority,
                ckpt,
            )
        )
    return out.getvalue()


# --- generator --------------------------------------------------------------------------------


@dataclass(frozen=True)
class GeneratorOptions:
    """Parameters of the synthetic workload; every default is documented in docs/advisor.md.

    Job durations and sizes come from the team profiles (``job_minutes``, ``instances_per_job``
    and their defaults per workload kind); these options shape arrivals and spreads.
    ``intensity`` multiplies every arrival rate and divides every duration by the same factor:
    the offered load stays the same while the number of jobs grows (used by the benchmark).
    """

    intensity: float = 1.0
    startup_s: float = DEFAULT_STARTUP_S
    """SageMaker start-up of every job (provisioning and image pull) unless its team's profile
    sets ``startup_minutes``; the simulator runs the shortest of them as the service's
    start-up phase of every attempt (:func:`startup_phase_s`) and adds a team's excess over it
    to the team's job durations."""
    scheduled_jitter: float = 0.2
    """Half the scheduled runs last uniform(``p50`` x (1 - jitter), ``p50``), the other half
    uniform(``p50``, ``max``): the median is ``p50`` and the longest runs reach ``max``."""
    scheduled_priority: int = 500
    experiment_bursts_per_day: float = 3.0
    experiment_burst_size: float = 6.0
    """Mean jobs per burst (1 + Poisson)."""
    experiment_sigma: float = 0.8
    """Log-normal spread of experiment durations around ``p50`` (cut at ``max``)."""
    experiment_priorities: tuple[int, int] = (100, 300)
    working_hours: tuple[int, int] = (8, 20)
    ad_hoc_jobs_per_day: float = 3.0
    ad_hoc_sigma: float = 0.4
    """Log-normal spread of ad-hoc durations around ``p50`` (cut at ``max``)."""
    ad_hoc_priority: int = 200
    checkpoint_interval_s: float = 900.0
    """Checkpoint interval of jobs of teams that checkpoint."""

    def __post_init__(self) -> None:
        if not 0 < self.intensity <= MAX_INTENSITY:
            raise WorkloadError(
                [
                    Problem(
                        "intensity",
                        self.intensity,
                        f"must be positive and at most {MAX_INTENSITY:g}",
                        "use e.g. 1 or 40",
                    )
                ]
            )

    def sigma(self, kind: WorkloadKind) -> float:
        """Log-normal spread of a kind's durations (scheduled runs use the jitter instead)."""
        return self.experiment_sigma if kind is WorkloadKind.EXPERIMENTAL else self.ad_hoc_sigma


def _active(team: TeamProfile, day: int) -> bool:
    return list(Day)[day % 7] in team.active_days


def _poisson(rng: random.Random, mean: float) -> int:
    """Poisson sample by counting exponential gaps (means here are small)."""
    count, total = 0, rng.expovariate(1.0)
    while total < mean:
        count += 1
        total += rng.expovariate(1.0)
    return count


def _pick_type(rng: random.Random, team: TeamProfile) -> str:
    types = sorted(team.capacity)
    return rng.choices(types, weights=[team.capacity[t] for t in types])[0]


def _checkpoint(team: TeamProfile, options: GeneratorOptions) -> float | None:
    if not team.checkpoints:
        return None
    return options.checkpoint_interval_s / options.intensity


def _duration(team: TeamProfile, rng: random.Random, o: GeneratorOptions, extra_s: float) -> float:
    """One job's duration in seconds from the profile's ``job_minutes`` (cut at ``max``), plus
    the team's start-up beyond the simulated start-up phase (``extra_s``)."""
    minutes = team.durations
    if team.workload is WorkloadKind.SCHEDULED:
        low, high = minutes.p50 * (1 - o.scheduled_jitter), minutes.max
        drawn = (
            rng.uniform(low, minutes.p50) if rng.random() < 0.5 else rng.uniform(minutes.p50, high)
        )
    else:
        drawn = rng.lognormvariate(math.log(minutes.p50), o.sigma(team.workload))
    return 60.0 * min(drawn, minutes.max) / o.intensity + extra_s


def team_startup_s(team: TeamProfile, default_s: float) -> float:
    """The team's start-up per job: its ``startup_minutes``, else ``default_s``."""
    return default_s if team.startup_minutes is None else 60.0 * team.startup_minutes


def startup_phase_s(teams: TeamsFile, default_s: float = DEFAULT_STARTUP_S) -> float:
    """The start-up every job pays on each attempt in the simulator (the shortest team's);
    a team with a longer one runs the excess as part of its jobs."""
    return min(team_startup_s(t, default_s) for t in teams.teams)


def _job(
    team: TeamProfile, at: float, itype: str, priority: int, rng: random.Random, o: _Context
) -> WorkloadJob:
    return WorkloadJob(  # keywords are evaluated in order: the same draws from rng
        submit_time_s=at,
        share=team.name,
        instance_type=itype,
        instance_count=rng.randint(*team.instance_range(itype)),
        duration_s=_duration(team, rng, o.options, o.extra_s),
        priority=priority,
        checkpoint_interval_s=_checkpoint(team, o.options),
    )


@dataclass(frozen=True)
class _Context:
    """The generator's options and one team's start-up beyond the simulated phase."""

    options: GeneratorOptions
    extra_s: float


def _scheduled(team: TeamProfile, days: int, rng: random.Random, c: _Context) -> list:
    """One job per schedule slot and instance type on active days (``split`` with intensity)."""
    o = c.options
    schedule = team.parsed_schedule
    split = max(1, round(o.intensity))  # each slot split into `split` runs (intensity rounded)
    period = schedule.period_s / split
    jobs = []
    for day in range(days):
        if not _active(team, day):
            continue
        for run in schedule.times_of_day():
            for k in range(split):
                for itype in sorted(team.capacity):
                    at = day * DAY_S + run + k * period
                    jobs.append(_job(team, at, itype, o.scheduled_priority, rng, c))
    return jobs


def runs_per_day(team: TeamProfile, options: GeneratorOptions) -> float:
    """Jobs an experimental or ad-hoc team submits per active day on average, at intensity 1:
    its profile's ``runs_per_day``/``runs_per_week``, else the generator's rate for its kind."""
    rate = team.runs_per_active_day
    if rate is not None:
        return rate
    if team.workload is WorkloadKind.EXPERIMENTAL:
        return options.experiment_bursts_per_day * options.experiment_burst_size
    return options.ad_hoc_jobs_per_day


def _experimental(team: TeamProfile, days: int, rng: random.Random, c: _Context) -> list:
    o = c.options
    begin, end = (h * 3600.0 for h in o.working_hours)
    bursts = runs_per_day(team, o) / o.experiment_burst_size
    rate = bursts * o.intensity / (end - begin)
    low, high = o.experiment_priorities
    jobs = []
    for day in range(days):
        if not _active(team, day):
            continue
        t = begin + rng.expovariate(rate)
        while t < end:
            submit = day * DAY_S + t
            for _ in range(1 + _poisson(rng, o.experiment_burst_size - 1)):
                itype = _pick_type(rng, team)
                jobs.append(_job(team, submit, itype, rng.randint(low, high), rng, c))
                submit += rng.expovariate(1 / 60.0) / o.intensity
            t += rng.expovariate(rate)
    return jobs


def _ad_hoc(team: TeamProfile, days: int, rng: random.Random, c: _Context) -> list:
    o = c.options
    begin, end = (h * 3600.0 for h in o.working_hours)
    jobs = []
    for day in range(days):
        if not _active(team, day):
            continue
        for _ in range(_poisson(rng, runs_per_day(team, o) * o.intensity)):
            itype = _pick_type(rng, team)
            at = day * DAY_S + rng.uniform(begin, end)
            jobs.append(_job(team, at, itype, o.ad_hoc_priority, rng, c))
    return jobs


_GENERATORS = {
    WorkloadKind.SCHEDULED: _scheduled,
    WorkloadKind.EXPERIMENTAL: _experimental,
    WorkloadKind.AD_HOC: _ad_hoc,
}


def generate_workload(
    teams: TeamsFile, *, days: int = 7, seed: int = 0, options: GeneratorOptions | None = None
) -> list[WorkloadJob]:
    """A deterministic synthetic workload for ``days`` days (day 0 is a Monday).

    Scheduled teams submit one job per schedule slot and instance type (a daily schedule is
    one job a day); experimental teams submit bursts of jobs in working hours; ad-hoc teams a
    few jobs per active day. Durations follow ``job_minutes`` and sizes ``instances_per_job``
    (defaults per workload kind in :data:`~quota_constructs.advisor.profiles.DEFAULT_JOB_MINUTES`
    and :meth:`TeamProfile.instance_range`). Same ``seed`` -> same jobs.
    """
    if days < 1:
        raise WorkloadError([Problem("days", days, "must be at least 1", "use e.g. --days 7")])
    if days > MAX_DAYS:
        raise WorkloadError(
            [Problem("days", days, f"must be at most {MAX_DAYS}", "use e.g. --days 7")]
        )
    options = options or GeneratorOptions()
    expected = expected_job_count(teams, days, options)
    problems = workload_size_problems(expected, "days", expected=True)
    if problems:
        raise WorkloadError(problems)
    jobs: list[WorkloadJob] = []
    phase = startup_phase_s(teams, options.startup_s)
    for team in teams.teams:
        rng = random.Random(f"{seed}:{team.name}")
        context = _Context(options, team_startup_s(team, options.startup_s) - phase)
        jobs += _GENERATORS[team.workload](team, days, rng, context)
    return sorted(jobs, key=attrgetter("submit_time_s", "share"))


def expected_job_count(teams: TeamsFile, days: int, options: GeneratorOptions) -> float:
    """The mean number of jobs :func:`generate_workload` makes (scheduled teams: exactly)."""
    total = 0.0
    for team in teams.teams:
        active = sum(_active(team, day) for day in range(days))
        if team.workload is WorkloadKind.SCHEDULED:
            split = max(1, round(options.intensity))
            per_day = float(team.parsed_schedule.runs_per_day * split * len(team.capacity))
        else:
            per_day = runs_per_day(team, options) * options.intensity
        total += active * per_day
    return total


def mean_job_s(team: TeamProfile, options: GeneratorOptions | None = None) -> float:
    """Expected duration of one of the team's jobs (seconds, at intensity 1)."""
    o = options or GeneratorOptions()
    p50, top = team.durations.p50 * 60.0, team.durations.max * 60.0
    if team.workload is WorkloadKind.SCHEDULED:
        low = p50 * (1 - o.scheduled_jitter)
        return (low + p50) / 4 + (p50 + top) / 4
    # E[min(X, top)] for X log-normal with median p50 and spread sigma
    mu, sigma = math.log(p50), o.sigma(team.workload)
    normal = NormalDist()
    below = math.exp(mu + sigma**2 / 2) * normal.cdf((math.log(top) - mu - sigma**2) / sigma)
    return below + top * (1 - normal.cdf((math.log(top) - mu) / sigma))


def expected_busy_fraction(team: TeamProfile, options: GeneratorOptions | None = None) -> float:
    """Expected share of the team's own capacity its workload keeps busy over a week (0..1+).

    The analytic mean of the generator's model (independent of ``intensity``), used by the
    advisor to estimate how long reserved capacity sits idle.
    """
    o = options or GeneratorOptions()
    total = sum(team.capacity.values())
    days = len(team.active_days)
    sizes = {t: sum(team.instance_range(t)) / 2 for t in team.capacity}
    if team.workload is WorkloadKind.SCHEDULED:
        instances_per_run = sum(sizes.values())
        runs = float(team.parsed_schedule.runs_per_day)
    else:
        instances_per_run = sum(team.capacity[t] / total * n for t, n in sizes.items())
        runs = runs_per_day(team, o)
    busy = runs * days * instances_per_run * mean_job_s(team, o)
    return busy / (total * 7 * DAY_S)
