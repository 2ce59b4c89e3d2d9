"""Scheduler-core benchmark: 10k and 100k-job traces over 20 shares, in virtual time.

Run: ``.venv/bin/python benchmarks/bench_core.py [--sizes 10000 100000] [--seed 7]``.
Prints jobs/s per trace and the growth ratio (wall time of the largest over the smallest
trace; goal: 100k costs at most 12x of 10k). Deterministic traces (seeded); only the wall time
varies between runs.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from quota_constructs.local.core import JobRequest, JobStatus, Scheduler
from quota_constructs.model import QuotaShareSpec, SharingStrategy

TYPES = ("ml.g5.xlarge", "ml.g5.12xlarge", "ml.p4d.24xlarge")
STRATEGIES = (SharingStrategy.LEND_AND_BORROW, SharingStrategy.LEND, SharingStrategy.RESERVE)


@dataclass(frozen=True)
class Result:
    jobs: int
    seconds: float
    virtual_end: float
    succeeded: int
    preemptions: int

    @property
    def jobs_per_s(self) -> float:
        return self.jobs / self.seconds


def organisation(rng: random.Random, shares: int = 20) -> list[QuotaShareSpec]:
    """``shares`` shares, each with 1-2 instance types, mixed strategies and preemption."""
    specs = []
    for index in range(shares):
        types = rng.sample(TYPES, rng.randint(1, 2))
        strategy = STRATEGIES[index % 3]
        specs.append(
            QuotaShareSpec(
                name=f"team-{index:02d}",
                capacity={t: rng.randint(2, 8) for t in types},
                strategy=strategy,
                borrow_limit=rng.choice([None, 50, 100, 200])
                if strategy is SharingStrategy.LEND_AND_BORROW
                else None,
                in_share_preemption=index % 2 == 0,
            )
        )
    return specs


def trace(
    rng: random.Random, specs: list[QuotaShareSpec], jobs: int
) -> list[tuple[float, JobRequest]]:
    """Poisson arrivals at about 90% of capacity; exponential durations; 1-4 instances."""
    capacity = sum(sum(s.capacity.values()) for s in specs)
    mean_duration = 3600.0
    mean_instances = 1.6
    rate = 0.9 * capacity / (mean_duration * mean_instances)
    now = 0.0
    out = []
    for index in range(jobs):
        now += rng.expovariate(rate)
        spec = rng.choice(specs)
        itype = rng.choice(list(spec.capacity))
        count = min(rng.choice([1, 1, 1, 2, 2, 4]), spec.capacity[itype])
        request = JobRequest(
            job_name=f"job-{index}",
            share_name=spec.name,
            demand={itype: count},
            duration_s=rng.expovariate(1 / mean_duration),
            priority=rng.randint(0, 9),
            preemption_retries=rng.choice([None, None, 3]),
            checkpoint_interval_s=rng.choice([None, 600.0]),
        )
        out.append((now, request))
    return out


def run(jobs: int, seed: int) -> Result:
    rng = random.Random(seed)
    specs = organisation(rng)
    workload = trace(rng, specs, jobs)
    sched = Scheduler(queue_name="bench", shares=specs)
    start = time.perf_counter()
    for at, request in workload:
        sched.submit(request, now=at)
    end = sched.run_until_idle()
    seconds = time.perf_counter() - start
    done = sum(1 for j in sched.jobs if j.status is JobStatus.SUCCEEDED)
    preemptions = sum(len(j.preemptions) for j in sched.jobs)
    return Result(jobs, seconds, end, done, preemptions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    results = [run(n, args.seed) for n in args.sizes]
    table = Table(title="Scheduler core, 20 shares, virtual time")
    for column in ("jobs", "wall s", "jobs/s", "virtual h", "succeeded", "preemptions"):
        table.add_column(column, justify="right")
    for r in results:
        table.add_row(
            f"{r.jobs:,}",
            f"{r.seconds:.2f}",
            f"{r.jobs_per_s:,.0f}",
            f"{r.virtual_end / 3600:,.1f}",
            f"{r.succeeded:,}",
            f"{r.preemptions:,}",
        )
    console = Console()
    console.print(table)
    small, large = results[0], results[-1]
    ratio = large.seconds / small.seconds
    console.print(
        f"growth ratio {large.jobs:,} / {small.jobs:,} jobs: {ratio:.1f}x "
        f"(size ratio {large.jobs / small.jobs:.0f}x; goal <= 12x)"
    )


if __name__ == "__main__":
    main()
