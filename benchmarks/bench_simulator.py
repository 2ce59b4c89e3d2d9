"""What-if simulator benchmark: the research teams, one generated week, 10k to 100k jobs.

Run: ``.venv/bin/python benchmarks/bench_simulator.py [--seed 0] [--overload]``.

1. One week of the research teams (``stacks/teams/research.yaml``) at an intensity giving at
   least 20k jobs, simulated on the recommended organisation (``stacks/orgs/research.yaml``):
   simulated time per CPU second.
2. Growth: the same week at about 10k and about 100k jobs (the generator's ``intensity`` gives
   more, shorter jobs at the same offered load); goal: 100k costs at most 12x of 10k.
3. ``--overload``: what ``quota simulate --workload`` does (the organisation and its all-RESERVE
   baseline, metrics) on the overload benchmark's trace (``bench_overload.py``: 20 shares of 4
   instances, a job every 30 s, 5-120 min, 1-4 instances) at 10k and 100k jobs, in jobs per
   CPU-second. ``--write-overload DIR`` writes that organisation and a 100k-job workload CSV,
   to time the command itself: ``quota simulate DIR/overload.yaml --workload DIR/overload.csv``.

Workloads are deterministic (seeded); only timings vary between runs. Times are CPU time of this
process (``time.process_time``), so other work on a shared machine skews them less. One
simulation = one scheduler run (the all-RESERVE baseline, a second run, is timed separately).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.simulate import (
    SimulationOptions,
    baseline_utilisation,
    compare,
    simulate,
)
from quota_constructs.advisor.workload import (
    DAY_S,
    GeneratorOptions,
    WorkloadJob,
    generate_workload,
    workload_csv,
)
from quota_constructs.config import OrganisationFile, load_organisation
from quota_constructs.model import JobQueueSpec, Organisation

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_overload

ROOT = Path(__file__).resolve().parent.parent
TEAMS = ROOT / "stacks" / "teams" / "research.yaml"
ORG = ROOT / "stacks" / "orgs" / "research.yaml"
WEEK_INTENSITY = 80.0  # ~21k jobs
GROWTH_INTENSITIES = (40.0, 400.0)  # ~10k and ~100k jobs


@dataclass(frozen=True)
class Run:
    label: str
    jobs: int
    generate_s: float
    simulate_s: float
    baseline_s: float
    simulated_s: float
    events: int

    @property
    def speed(self) -> float:
        """Simulated seconds per CPU second (one simulation)."""
        return self.simulated_s / self.simulate_s


def measure(label: str, intensity: float, seed: int) -> Run:
    teams, org = load_teams(TEAMS), load_organisation(ORG)
    start = time.process_time()
    jobs = generate_workload(teams, days=7, seed=seed, options=GeneratorOptions(intensity))
    generated = time.process_time()
    options = SimulationOptions(window_s=7 * DAY_S)
    baseline = baseline_utilisation(org, jobs, options=options)
    based = time.process_time()
    result = simulate(org, jobs, options=options, baseline=baseline)
    done = time.process_time()
    return Run(
        label,
        len(jobs),
        generated - start,
        done - based,
        based - generated,
        result.end_s,
        result.events,
    )


def overload(jobs: int, seed: int = 7) -> tuple[Organisation, list[WorkloadJob]]:
    """The overload benchmark's organisation and trace as a what-if simulation's input."""
    rng = random.Random(seed)
    specs = bench_overload.organisation(rng, 20, 1)
    arrivals = bench_overload.trace(rng, specs, bench_overload.LOADS["overloaded"], jobs)
    org = Organisation(name="overload", queue=JobQueueSpec(shares=tuple(specs)))
    workload = [
        WorkloadJob(
            submit_time_s=a.at,
            share=a.share,
            instance_type=a.itype,
            instance_count=a.instances,
            duration_s=a.duration,
            priority=a.priority,
        )
        for a in arrivals
    ]
    return org, workload


def measure_overload(jobs: int) -> float:
    """Jobs per CPU-second of ``compare`` (what ``quota simulate --workload`` runs)."""
    org, workload = overload(jobs)
    start = time.process_time()
    compare([org], workload)
    return jobs / (time.process_time() - start)


def write_overload(folder: Path, jobs: int = 100_000) -> None:
    org, workload = overload(jobs)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "overload.yaml").write_text(OrganisationFile.from_organisation(org).to_yaml())
    (folder / "overload.csv").write_text(workload_csv(workload))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--overload", action="store_true")
    parser.add_argument("--write-overload", type=Path)
    args = parser.parse_args()
    if args.write_overload is not None:
        write_overload(args.write_overload)
        return
    if args.overload:
        measure_overload(2_000)  # warm-up, not measured
        rate_small, rate_large = measure_overload(10_000), measure_overload(100_000)
        Console().print(
            f"quota simulate's work on the overloaded trace: {rate_small:,.0f} jobs per "
            f"CPU-second at 10k jobs, {rate_large:,.0f} at 100k "
            f"(growth {10 * rate_small / rate_large:.1f}x)"
        )
        return
    measure("warm-up", 4.0, args.seed)  # ~1k jobs, not shown
    runs = [measure("research week", WEEK_INTENSITY, args.seed)]
    runs += [measure(f"growth x{i:g}", i, args.seed) for i in GROWTH_INTENSITIES]
    table = Table(title="What-if simulator (research teams, 7 simulated days)")
    columns = ("run", "jobs", "steps", "generate s", "simulate s", "baseline s", "sim-s/CPU-s")
    for column in columns:
        table.add_column(column, justify="right")
    for run in runs:
        table.add_row(
            run.label,
            f"{run.jobs:,}",
            f"{run.events:,}",
            f"{run.generate_s:.2f}",
            f"{run.simulate_s:.2f}",
            f"{run.baseline_s:.2f}",
            f"{run.speed:,.0f}",
        )
    console = Console()
    console.print(table)
    small, large = runs[1], runs[2]
    growth = large.simulate_s / small.simulate_s
    verdict = "meets" if growth <= 12 else "MISSES"
    console.print(
        f"growth {small.jobs:,} -> {large.jobs:,} jobs ({large.jobs / small.jobs:.1f}x): "
        f"{growth:.1f}x CPU time ({verdict} the <= 12x goal)"
    )


if __name__ == "__main__":
    main()
