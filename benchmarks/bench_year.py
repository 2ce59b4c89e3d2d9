"""A year of a 20-team organisation generated from profiles (about a million jobs), simulated.

Run: ``.venv/bin/python benchmarks/bench_year.py [--jobs 1000000] [--core compiled|pure]``.

The 20 teams are the research profiles (``stacks/teams/research.yaml``: hourly, experimental,
weekend ad-hoc) repeated under new names; the organisation is ``quota recommend``'s for them.
The year is 13 generated periods of 28 days (so day 0 of each is a Monday), one seed each, at
the intensity that gives about ``--jobs`` jobs: one generator call stays within the 100,000
jobs a workload may hold (``advisor/limits.py``), which is also why ``quota simulate`` cannot
take this workload and the year is run in-process. Measured in one child process, by its CPU
time (user + system): generating, the simulation, its all-RESERVE baseline and the metrics
(``advisor.simulate.compare``, what ``quota simulate`` runs). Goal (issue 22): under 60
CPU-seconds compiled.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from quota_constructs.advisor.profiles import TeamsFile
    from quota_constructs.advisor.workload import GeneratorOptions, WorkloadJob
    from quota_constructs.model import Organisation

ROOT = Path(__file__).resolve().parent.parent
PERIOD_DAYS, PERIODS, TEAMS = 28, 13, 20


def year_teams() -> TeamsFile:
    """The 20 teams: the research profiles repeated under new names."""
    from quota_constructs.advisor.profiles import load_teams

    research = load_teams(ROOT / "stacks" / "teams" / "research.yaml")
    profiles = [research.teams[i % len(research.teams)] for i in range(TEAMS)]
    return research.model_copy(
        update={
            "organisation": "year",
            "teams": [
                t.model_copy(update={"name": f"{t.name}-{i}"}) for i, t in enumerate(profiles)
            ],
        }
    )


def year_periods(
    teams: TeamsFile, options: GeneratorOptions, period_days: int, periods: int
) -> Iterator[list[WorkloadJob]]:
    """Each period's jobs (seed = the period's index), shifted to the period's start."""
    from quota_constructs.advisor.workload import generate_workload

    for period in range(periods):
        offset = period * period_days * 86400.0
        yield [
            dataclasses.replace(job, submit_time_s=job.submit_time_s + offset)
            for job in generate_workload(teams, days=period_days, seed=period, options=options)
        ]


def year_workload(jobs: int) -> tuple[Organisation, list[WorkloadJob]]:
    """The 20-team organisation and about ``jobs`` jobs over 364 days."""
    from quota_constructs.advisor.recommend import recommend
    from quota_constructs.advisor.workload import GeneratorOptions, generate_workload

    teams = year_teams()
    per_unit = len(generate_workload(teams, days=PERIOD_DAYS, seed=0))
    options = GeneratorOptions(intensity=jobs / (per_unit * PERIODS))
    workload = [
        job for period in year_periods(teams, options, PERIOD_DAYS, PERIODS) for job in period
    ]
    org = recommend(teams, options=options, days=PERIOD_DAYS).organisation
    return org, workload


def child() -> None:
    """Generate and simulate the year; print jobs, intervals and the process's CPU seconds.
    The cyclic collector is paused throughout, as ``quota simulate`` pauses it."""
    from quota_constructs.advisor.simulate import SimulationOptions, compare
    from quota_constructs.scheduling import collector_paused

    with collector_paused():
        started = time.process_time()
        org, jobs = year_workload(int(os.environ["YEAR_JOBS"]))
        generated = time.process_time()
        options = SimulationOptions(window_s=PERIOD_DAYS * PERIODS * 86400.0)
        [result] = compare([org], jobs, options=options)
        done = time.process_time()
    print(
        f"{len(jobs)} {generated - started:.2f} {done - generated:.2f} "
        f"{result.utilisation:.4f} {result.baseline_utilisation:.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--core", choices=("compiled", "pure"), default="compiled")
    args = parser.parse_args()
    env = {
        **os.environ,
        "YEAR_JOBS": str(args.jobs),
        "QUOTA_COMPILE": "1" if args.core == "compiled" else "0",
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1"),  # as the command
    }
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    jobs, generate_s, simulate_s, used, baseline = out
    print(
        f"year of 20 teams, {args.core} core: {int(jobs):,} jobs, {cpu:.1f} CPU s whole process "
        f"(generate {generate_s} s, simulate + baseline + metrics {simulate_s} s), "
        f"{int(jobs) / cpu:,.0f} jobs per CPU s; utilisation {used}, all-RESERVE {baseline}"
    )


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
    else:
        main()
