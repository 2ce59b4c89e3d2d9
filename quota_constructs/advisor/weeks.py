"""The weeks a verdict rests on: independently seeded workloads, and their simulations.

``quota recommend --simulate/--optimize/--reserve`` and ``quota simulate --generate`` all judge
on the same weeks for the same ``--seed``, ``--weeks`` and ``--days``: week ``i`` is the
workload generated with seed ``SEED + i``, so the same settings give the same verdict in every
command (docs/advisor.md, "Verdicts over weeks").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from quota_constructs.advisor.limits import MAX_SEARCH_WORKLOADS
from quota_constructs.advisor.profiles import TeamsFile
from quota_constructs.advisor.simulate import SimulationOptions, SimulationResult, simulate
from quota_constructs.advisor.targets import DEFAULT_WEEKS
from quota_constructs.advisor.workload import GeneratorOptions, WorkloadJob, generate_workload
from quota_constructs.model import Organisation, Problem

MAX_WEEKS = MAX_SEARCH_WORKLOADS
"""Most weeks one command simulates (``--weeks``)."""


def default_weeks(days: int) -> int:
    """Seeded periods of ``days`` days when ``--weeks`` is not given: :data:`DEFAULT_WEEKS`, or
    for periods longer than a week as many as cover that many weeks (``--days 28``: 5, ``--days
    364``: 1), so a long window is not simulated twenty times over."""
    if days <= 7:
        return DEFAULT_WEEKS
    return max(1, math.ceil(DEFAULT_WEEKS * 7 / days))


def weeks_problems(weeks: int, flag: str = "--weeks") -> list[Problem]:
    """``--weeks``: from 1 to :data:`MAX_WEEKS`."""
    if 1 <= weeks <= MAX_WEEKS:
        return []
    return [Problem(flag, weeks, f"must be from 1 to {MAX_WEEKS}", "e.g. 10 (the default)")]


def week_workloads(
    teams: TeamsFile, *, days: int, seeds: Iterable[int], options: GeneratorOptions
) -> list[list[WorkloadJob]]:
    """One generated workload of ``days`` days per seed, in seed order."""
    return [generate_workload(teams, days=days, seed=seed, options=options) for seed in seeds]


def simulate_weeks(
    org: Organisation, workloads: Sequence[Sequence[WorkloadJob]], options: SimulationOptions
) -> list[SimulationResult]:
    """``org`` run on each week, without the all-RESERVE baseline (verdicts do not use it)."""
    return [simulate(org, jobs, options=options, baseline=math.nan) for jobs in workloads]
