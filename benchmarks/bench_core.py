"""Scheduler-core benchmark: 10k and 100k-job traces over 20 shares, in virtual time.

Run: ``.venv/bin/python benchmarks/bench_core.py [--sizes 10000 100000] [--seed 7]``.
After an unmeasured warm-up, prints jobs/s per trace and the growth ratio: CPU time of the
largest trace over the smallest (run before and after the largest, averaged; goal: 100k costs
at most 12x of 10k). CPU time of this process, not wall time, so that other
work on a shared machine does not skew the ratio; wall time is shown too. Deterministic traces
(seeded); only the timings vary between runs.
"""

from __future__ import annotations

import argparse
import gc
import random
import time
from dataclasses import dataclass
from typing import NamedTuple

from rich.console import Console
from rich.table import Table

from quota_constructs.model import QuotaShareSpec, SharingStrategy
from quota_constructs.scheduling import JobRequest, JobStatus, Scheduler, collector_paused

TYPES = ("ml.g5.xlarge", "ml.g5.12xlarge", "ml.p4d.24xlarge")
STRATEGIES = (SharingStrategy.LEND_AND_BORROW, SharingStrategy.LEND, SharingStrategy.RESERVE)


@dataclass(frozen=True)
class Result:
    jobs: int
    seconds: float
    """CPU seconds of this process."""
    wall: float
    virtual_end: float
    succeeded: int
    preemptions: int

    @property
    def jobs_per_s(self) -> float:
        return self.jobs / self.seconds


def organisation(rng: random.Random, shares: int = 20) -> list[QuotaShareSpec]:
    """``shares`` shares, one of 3 instance types each, with mixed strategies, borrow limits
    and in-share preemption. (One type per share: with strict priority order a share's head
    waiting for one type also holds back its jobs of the other type, so a two-type share
    saturates long before its limits do; see the UNCONFIRMED table.)"""
    specs = []
    for index in range(shares):
        types = [TYPES[index % len(TYPES)]]
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


SIZES = (1, 1, 1, 2, 2, 4)
LOAD = 0.8
PRIORITIES = (1, 1, 1, 1, 1, 1, 1, 1, 5, 9)


class Arrival(NamedTuple):
    """One job of a trace, compact (the request is built when it is submitted)."""

    at: float
    share: str
    itype: str
    instances: int
    duration: float
    priority: int
    retries: int | None
    checkpoint: float | None

    def request(self, index: int) -> JobRequest:
        return JobRequest(
            job_name=f"job-{index}",
            share_name=self.share,
            demand={self.itype: self.instances},
            duration_s=self.duration,
            priority=self.priority,
            preemption_retries=self.retries,
            checkpoint_interval_s=self.checkpoint,
        )


def trace(rng: random.Random, specs: list[QuotaShareSpec], jobs: int) -> list[Arrival]:
    """Poisson arrivals at 80% of capacity, each (share, instance type) getting work in
    proportion to its limit, so that queues stay stationary and a 10x longer trace is 10x the
    work; exponential run times (mean 1 h); 1, 2 or 4 instances; priority 1 for most jobs,
    5 or 9 for a fifth of them (in-share preemption); some preemption retries and checkpoints."""
    slots = [(spec, itype, n) for spec in specs for itype, n in spec.capacity.items()]
    weights = [n for _, _, n in slots]
    capacity = sum(weights)
    mean_duration = 3600.0
    mean_instances = (
        sum(sum(min(size, n) for size in SIZES) / len(SIZES) * n for _, _, n in slots) / capacity
    )
    rate = LOAD * capacity / (mean_duration * mean_instances)
    now = 0.0
    out = []
    for _ in range(jobs):
        now += rng.expovariate(rate)
        spec, itype, limit = rng.choices(slots, weights)[0]
        out.append(
            Arrival(
                at=now,
                share=spec.name,
                itype=itype,
                instances=min(rng.choice(SIZES), limit),
                duration=rng.expovariate(1 / mean_duration),
                priority=rng.choice(PRIORITIES),
                retries=rng.choice([None, None, 3]),
                checkpoint=rng.choice([None, 600.0]),
            )
        )
    return out


def run(jobs: int, seed: int) -> Result:
    rng = random.Random(seed)
    specs = organisation(rng)
    workload = trace(rng, specs, jobs)
    sched = Scheduler(queue_name="bench", shares=specs)
    gc.collect()
    start, wall_start = time.process_time(), time.perf_counter()
    with collector_paused():  # as quota simulate runs the core
        for index, arrival in enumerate(workload):
            sched.submit(arrival.request(index), now=arrival.at)
        end = sched.run_until_idle()
    seconds = time.process_time() - start
    wall = time.perf_counter() - wall_start
    done = sum(1 for j in sched.jobs if j.status is JobStatus.SUCCEEDED)
    preemptions = sum(len(j.preemptions) for j in sched.jobs)
    return Result(jobs, seconds, wall, end, done, preemptions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    run(2_000, args.seed + 1)  # warm-up, not measured
    results = [run(n, args.seed) for n in args.sizes]
    # The smallest trace again after the largest: the ratio uses the mean of both runs, so a
    # change of load on a shared machine during the long run does not skew it.
    again = run(args.sizes[0], args.seed)
    table = Table(title="Scheduler core, 20 shares, virtual time")
    for column in ("jobs", "CPU s", "wall s", "jobs/CPU s", "virtual h", "succeeded", "preempted"):
        table.add_column(column, justify="right")
    for r in results:
        table.add_row(
            f"{r.jobs:,}",
            f"{r.seconds:.2f}",
            f"{r.wall:.2f}",
            f"{r.jobs_per_s:,.0f}",
            f"{r.virtual_end / 3600:,.1f}",
            f"{r.succeeded:,}",
            f"{r.preemptions:,}",
        )
    console = Console()
    console.print(table)
    small, large = results[0], results[-1]
    small_seconds = (small.seconds + again.seconds) / 2
    ratio = large.seconds / small_seconds
    console.print(
        f"growth ratio (CPU time) {large.jobs:,} / {small.jobs:,} jobs: {ratio:.1f}x "
        f"(size ratio {large.jobs / small.jobs:.0f}x; goal <= 12x; {small.jobs:,} jobs ran "
        f"twice: {small.seconds:.2f} s and {again.seconds:.2f} s)"
    )


if __name__ == "__main__":
    main()
