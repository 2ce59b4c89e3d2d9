"""Scheduler-core benchmark under overload: jobs per CPU-second and 10k -> 100k growth.

Run: ``.venv/bin/python benchmarks/bench_overload.py`` (options: ``--families``, ``--shares``,
``--types``, ``--sizes``, ``--seed``; ``--quick`` runs only the issue's case).

Trace families, each on ``shares`` shares with a limit of 4 instances on each of ``types``
instance types (shares in turn LEND_AND_BORROW / LEND / RESERVE, random borrow limits,
in-share preemption on every other share):

* ``overloaded``: the issue's trace. With 20 shares of 4 instances, a job every 30 s on
  average (Poisson), lasting 5-120 minutes (uniform), needing 1-4 instances (uniform): offered
  work is 3.9x the capacity, so the backlog grows with the trace (about 80 % of a 100k trace
  is still queued when its last job arrives). Other sizes keep the load per instance.
* ``stationary``: the same jobs at 80 % of capacity (queues come and go).
* ``underloaded``: at 30 % of capacity (queues stay short).

Every job names a share and an instance type at random; priority 1 for most, 5 or 9 for a fifth
(in-share preemption); the scheduler runs with the simulator's options (dispatch to RUNNING at
once, 20 s preemptions), fed as ``quota simulate`` feeds it (submit, advance to the next
submit or event), with the cyclic garbage collector paused as ``quota simulate`` pauses it
(``collector_paused``). Time is CPU time of this process (``time.process_time``), not wall time.
Each case runs its 10k trace before and after its 100k trace; growth is the 100k CPU time over
the mean of the two (goal: at least 20,000 jobs per CPU-second at 100k jobs overloaded, growth
at most 12x in every case). Traces are deterministic (seeded); only the timings vary.
"""

from __future__ import annotations

import argparse
import gc
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from rich.console import Console
from rich.table import Table

from quota_constructs.model import QuotaShareSpec, SharingStrategy
from quota_constructs.scheduling import (
    COMPILED,
    JobRequest,
    JobStatus,
    Scheduler,
    SchedulerOptions,
    collector_paused,
)

TYPES = ("ml.g5.xlarge", "ml.g5.12xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g6.xlarge")
STRATEGIES = (SharingStrategy.LEND_AND_BORROW, SharingStrategy.LEND, SharingStrategy.RESERVE)
INSTANCES_PER_TYPE = 4
PRIORITIES = (1, 1, 1, 1, 1, 1, 1, 1, 5, 9)
MIN_DURATION_S, MAX_DURATION_S = 5 * 60.0, 120 * 60.0
MAX_INSTANCES = 4
OVERLOAD_INTERVAL_S = 30.0
"""The issue's mean time between jobs for 20 shares of 4 instances (80 instances)."""
ISSUE_CAPACITY = 80
LOADS = {
    "overloaded": (MIN_DURATION_S + MAX_DURATION_S)
    / 2
    * (1 + MAX_INSTANCES)
    / 2
    / (OVERLOAD_INTERVAL_S * ISSUE_CAPACITY),
    "stationary": 0.8,
    "underloaded": 0.3,
}
"""Offered work over capacity per family (overloaded: 3.9)."""
OPTIONS = SchedulerOptions(
    scheduled_to_starting_s=0.0, starting_to_running_s=0.0, preemption_duration_s=20.0
)
"""As ``quota simulate`` runs the core (``SimulationOptions`` defaults)."""


class Arrival(NamedTuple):
    """One job of a trace."""

    at: float
    share: str
    itype: str
    instances: int
    duration: float
    priority: int


@dataclass(frozen=True)
class Case:
    family: str
    shares: int
    types: int

    @property
    def label(self) -> str:
        return f"{self.family}, {self.shares} share(s) x {self.types} type(s)"


@dataclass(frozen=True)
class Result:
    jobs: int
    cpu_s: float
    virtual_end: float
    succeeded: int
    preemptions: int
    queued_at_last_submit: int

    @property
    def jobs_per_cpu_s(self) -> float:
        return self.jobs / self.cpu_s


def organisation(rng: random.Random, shares: int, types: int) -> list[QuotaShareSpec]:
    """``shares`` shares with 4 instances of each of the first ``types`` instance types."""
    specs = []
    for index in range(shares):
        strategy = STRATEGIES[index % len(STRATEGIES)]
        borrows = strategy is SharingStrategy.LEND_AND_BORROW
        specs.append(
            QuotaShareSpec(
                name=f"team-{index:02d}",
                capacity={t: INSTANCES_PER_TYPE for t in TYPES[:types]},
                strategy=strategy,
                borrow_limit=rng.choice([None, 50, 100, 200]) if borrows else None,
                in_share_preemption=index % 2 == 0,
            )
        )
    return specs


def trace(rng: random.Random, specs: Sequence[QuotaShareSpec], load: float, jobs: int) -> list:
    """Poisson arrivals offering ``load`` times the capacity; share and type at random."""
    capacity = sum(sum(s.capacity.values()) for s in specs)
    mean_work = (MIN_DURATION_S + MAX_DURATION_S) / 2 * (1 + MAX_INSTANCES) / 2
    rate = load * capacity / mean_work
    now = 0.0
    out = []
    for _ in range(jobs):
        now += rng.expovariate(rate)
        spec = rng.choice(specs)
        out.append(
            Arrival(
                at=now,
                share=spec.name,
                itype=rng.choice(list(spec.capacity)),
                instances=rng.randint(1, MAX_INSTANCES),
                duration=rng.uniform(MIN_DURATION_S, MAX_DURATION_S),
                priority=rng.choice(PRIORITIES),
            )
        )
    return out


def request(index: int, a: Arrival) -> JobRequest:
    return JobRequest(
        job_name=f"job-{index}",
        share_name=a.share,
        demand={a.itype: a.instances},
        duration_s=a.duration,
        priority=a.priority,
        job_id=f"job-{index:07d}",
    )


def run(case: Case, jobs: int, seed: int) -> Result:
    """Build the trace (not timed), then time the scheduler on it in CPU seconds."""
    rng = random.Random(seed)
    specs = organisation(rng, case.shares, case.types)
    arrivals = trace(rng, specs, LOADS[case.family], jobs)
    sched = Scheduler(queue_name="bench", shares=specs, options=OPTIONS)
    gc.collect()
    start = time.process_time()
    with collector_paused():  # as quota simulate runs the core
        queued = drive(sched, arrivals)
        end = sched.run_until_idle()
    cpu = time.process_time() - start
    done = sum(1 for j in sched.jobs if j.status is JobStatus.SUCCEEDED)
    preemptions = sum(len(j.preemptions) for j in sched.jobs)
    return Result(jobs, cpu, end, done, preemptions, queued)


def drive(sched: Scheduler, arrivals: Sequence[Arrival]) -> int:
    """Submit each job (its request built then) at its time, advancing from event to event as
    ``quota simulate`` does; return the jobs RUNNABLE when the last one is submitted."""
    index, count = 0, len(arrivals)
    while index < count:
        nxt = sched.next_event_time()
        at = arrivals[index].at
        if nxt is not None and nxt < at:
            sched.advance(nxt)
            continue
        sched.submit(request(index, arrivals[index]), now=at)
        index += 1
    sched.advance(sched.now)
    return sum(1 for j in sched.jobs if j.status is JobStatus.RUNNABLE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", default=list(LOADS), choices=list(LOADS))
    parser.add_argument("--shares", type=int, nargs="+", default=[1, 5, 20])
    parser.add_argument("--types", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--sizes", type=int, nargs=2, default=[10_000, 100_000])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="Only overloaded, 20 x 1.")
    args = parser.parse_args()
    cases = [
        Case(family, shares, types)
        for family in args.families
        for shares in args.shares
        for types in args.types
    ]
    if args.quick:
        cases = [Case("overloaded", 20, 1)]
    run(cases[0], 2_000, args.seed + 1)  # warm-up, not measured
    console = Console(width=120)
    core = "compiled" if COMPILED else "pure Python"
    table = Table(title=f"Scheduler core ({core}): jobs per CPU-second (simulator options)")
    for column in ("family", "shares", "types", "load", "10k", "100k", "growth", "queued", "goal"):
        table.add_column(column, justify="right")
    small_n, large_n = args.sizes
    for case in cases:
        small = run(case, small_n, args.seed)
        large = run(case, large_n, args.seed)
        again = run(case, small_n, args.seed)
        growth = large.cpu_s / ((small.cpu_s + again.cpu_s) / 2)
        fast = case.family != "overloaded" or large.jobs_per_cpu_s >= 20_000
        met = fast and growth <= 12
        table.add_row(
            case.family,
            str(case.shares),
            str(case.types),
            f"{LOADS[case.family]:.2f}",
            f"{small.jobs_per_cpu_s:,.0f} / {again.jobs_per_cpu_s:,.0f}",
            f"{large.jobs_per_cpu_s:,.0f}",
            f"{growth:.1f}x",
            f"{large.queued_at_last_submit:,}",
            "met" if met else "NOT MET",
        )
        console.print(
            f"{case.label}: {small.jobs_per_cpu_s:,.0f} / {again.jobs_per_cpu_s:,.0f} and "
            f"{large.jobs_per_cpu_s:,.0f} jobs per CPU s, growth {growth:.1f}x",
            highlight=False,
        )
    console.print(table)


if __name__ == "__main__":
    main()
