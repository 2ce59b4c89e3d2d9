"""Where the scheduler core's time goes on a benchmark trace: a per-event cost breakdown.

Run: ``.venv/bin/python benchmarks/profile_core.py [--jobs 100000] [--family overloaded]
[--shares 20] [--types 1]``.

Runs one ``bench_overload.py`` trace as that benchmark does (collector paused, CPU time) while
a statistical profiler samples the call stack every 0.5 ms of CPU time (``SIGPROF``; about 1 %
overhead, unlike cProfile's 3x). Each sample goes to the innermost function on the stack that
names a part of the work (submit checks, a timed event, a step of a dispatch pass, the event
loop), so the parts add up to the whole. A second, instrumented run of the same trace counts
the events of each kind, to give the cost per event next to the cost per job. POSIX only.
"""

from __future__ import annotations

import argparse
import collections
import random
import signal
import sys
import time
from pathlib import Path
from types import FrameType

from rich.console import Console
from rich.table import Table

from quota_constructs.scheduling import Scheduler, collector_paused

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_overload

PARTS: dict[str, str] = {
    "request": "building the JobRequest (the caller's part)",
    "request_problems": "submit: checking the request",
    "submit": "submit: the job, its first event",
    "_to_runnable": "timed: RUNNABLE (queueing, feasibility)",
    "_to_starting": "timed: STARTING and RUNNING",
    "_start_running": "timed: STARTING and RUNNING",
    "_finish_run": "timed: end of a run (attempt record, release)",
    "_time_out": "timed: end of a run (attempt record, release)",
    "complete_preemption": "timed: end of a preemption (record, release, requeue)",
    "_dispatch_own_capacity": "pass: own capacity (dispatches included)",
    "_reclaim_once": "pass: cross-share reclaim (victims, preemption start)",
    "_borrow_in_submit_order": "pass: borrowing (dispatches included)",
    "_preempt_in_share": "pass: in-share preemption",
    "_wake": "pass: waking and indexing blocked shares",
    "_wait": "pass: waking and indexing blocked shares",
    "_wake_lenders": "pass: waking and indexing blocked shares",
    "_wake_after_preemption": "pass: waking and indexing blocked shares",
    "_pass": "pass: the rest (bookkeeping of a pass)",
    "run_passes": "pass: the rest (bookkeeping of a pass)",
}
"""Function name -> the part of the work it stands for (the innermost one on the stack wins)."""
LOOP = "event loop (advance, the heap and FIFO, handler calls)"


def sample(case: bench_overload.Case, jobs: int, seed: int) -> tuple[float, dict[str, int]]:
    """CPU seconds of the run and samples per part."""
    rng = random.Random(seed)
    specs = bench_overload.organisation(rng, case.shares, case.types)
    arrivals = bench_overload.trace(rng, specs, bench_overload.LOADS[case.family], jobs)
    sched = Scheduler(queue_name="bench", shares=specs, options=bench_overload.OPTIONS)
    counts: collections.Counter[str] = collections.Counter()

    def on_sample(_signal: int, frame: FrameType | None) -> None:
        while frame is not None:
            part = PARTS.get(frame.f_code.co_name)
            if part is not None:
                counts[part] += 1
                return
            frame = frame.f_back
        counts[LOOP] += 1

    previous = signal.signal(signal.SIGPROF, on_sample)
    signal.setitimer(signal.ITIMER_PROF, 0.0005, 0.0005)
    start = time.process_time()
    try:
        with collector_paused():
            bench_overload.drive(sched, arrivals)
            sched.run_until_idle()
    finally:
        cpu = time.process_time() - start
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, previous)
    return cpu, dict(counts)


def count_events(case: bench_overload.Case, jobs: int, seed: int) -> dict[str, int]:
    """Events of each kind on the same trace (an instrumented run, not timed)."""
    rng = random.Random(seed)
    specs = bench_overload.organisation(rng, case.shares, case.types)
    arrivals = bench_overload.trace(rng, specs, bench_overload.LOADS[case.family], jobs)
    sched = Scheduler(queue_name="bench", shares=specs, options=bench_overload.OPTIONS)
    counts: collections.Counter[str] = collections.Counter()
    sched.subscribe(lambda e: counts.update([f"{e.kind}:{e.status}"]))
    dispatcher = sched._dispatcher
    one_pass = dispatcher._pass

    def counted_pass() -> None:
        counts["dispatch passes"] += 1
        one_pass()

    dispatcher._pass = counted_pass  # type: ignore[method-assign]
    original_advance = sched.advance

    def counted_advance(now: float) -> None:
        counts["advance calls"] += 1
        original_advance(now)

    sched.advance = counted_advance  # type: ignore[method-assign]
    bench_overload.drive(sched, arrivals)
    sched.run_until_idle()
    return dict(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--family", default="overloaded", choices=list(bench_overload.LOADS))
    parser.add_argument("--shares", type=int, default=20)
    parser.add_argument("--types", type=int, default=1)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    case = bench_overload.Case(args.family, args.shares, args.types)
    cpu, samples = sample(case, args.jobs, args.seed)
    total = sum(samples.values()) or 1
    per_job_us = cpu / args.jobs * 1e6
    console = Console(width=120)
    table = Table(title=f"{case.label}, {args.jobs:,} jobs: {args.jobs / cpu:,.0f} jobs per CPU s")
    for column in ("part of the work", "share", "us per job"):
        table.add_column(column, justify="right" if column != "part of the work" else "left")
    for part, n in sorted(samples.items(), key=lambda item: -item[1]):
        table.add_row(part, f"{100 * n / total:.1f} %", f"{per_job_us * n / total:.1f}")
    table.add_row("total", "100 %", f"{per_job_us:.1f}")
    console.print(table)
    events = count_events(case, args.jobs, args.seed)
    console.print(
        "Per job: " + ", ".join(f"{k} {v / args.jobs:.2f}" for k, v in sorted(events.items())),
        highlight=False,
    )


if __name__ == "__main__":
    main()
