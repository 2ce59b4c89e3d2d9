"""Issue 42's core changes, measured: preemptions per reclaim scope, and what tracking queue
positions costs.

1. Preemptions started (cross-share and in-share) on the overload benchmark's traces (3,000 jobs
   each, seed 7, simulator options) with ``ReclaimScope.SHARE`` (the default: a borrowing
   share's borrowed instances count on its least protected jobs) and ``ReclaimScope.JOB`` (only
   jobs placed on the lender's instances). The two are not equal workloads after the first
   difference, so the figure is a comparison of totals, not a proof.
2. CPU time of a polling client's view with and without ``track_queue_positions`` (what the
   emulator turns on for ``earliestTimeAtPosition``): one 4-instance share, 2,000 one-instance
   jobs of 60 s, a snapshot read after each of 600 one-second advances; best of 3, as a ratio.

    .venv/bin/python benchmarks/bench_reclaim.py
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from quota_constructs.model import QuotaShareSpec, SharingStrategy
from quota_constructs.scheduling import (
    COMPILED,
    EventKind,
    JobRequest,
    ReclaimScope,
    Scheduler,
    SchedulerEvent,
    SchedulerOptions,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_overload
import core_fingerprint


def preemptions(case: bench_overload.Case, scope: ReclaimScope, jobs: int = 3_000) -> Counter[str]:
    """Preemptions started per rule on the case's trace under ``scope``."""
    rng = random.Random(7)
    specs = bench_overload.organisation(rng, case.shares, case.types)
    arrivals = bench_overload.trace(rng, specs, bench_overload.LOADS[case.family], jobs)
    options = replace(bench_overload.OPTIONS, reclaim_scope=scope)
    sched = Scheduler(queue_name="bench", shares=specs, options=options)
    rules: Counter[str] = Counter()

    def count(event: SchedulerEvent) -> None:
        if event.kind is EventKind.PREEMPTION_STARTED and event.preemption is not None:
            rules[event.preemption.rule.value] += 1

    sched.subscribe(count)
    bench_overload.drive(sched, arrivals)
    sched.run_until_idle()
    return rules


def polling_cpu_s(track: bool) -> float:
    """CPU seconds of 600 advances, each followed by a snapshot."""
    options = SchedulerOptions(track_queue_positions=track, dispatch_delay_s=1.0)
    share = QuotaShareSpec("A", {"ml.g5.xlarge": 4}, SharingStrategy.RESERVE)
    sched = Scheduler(queue_name="bench", shares=[share], options=options)
    for i in range(2_000):
        request = JobRequest(f"j{i}", "A", {"ml.g5.xlarge": 1}, 60.0, priority=i % 7)
        sched.submit(request, now=0)
    start = time.process_time()
    for t in range(1, 601):
        sched.advance(float(t))
        sched.snapshot()
    return time.process_time() - start


def main() -> None:
    print(f"scheduler core: {'compiled' if COMPILED else 'pure Python'}")
    for case in core_fingerprint.TRACES:
        cells = []
        for scope in ReclaimScope:
            rules = preemptions(case, scope)
            cells.append(
                f"{scope.value}: {rules['CROSS_SHARE']} cross-share, "
                f"{rules['IN_SHARE']} in-share, {sum(rules.values())} in all"
            )
        print(f"{case.label:42} {' | '.join(cells)}")
    off = min(polling_cpu_s(False) for _ in range(3))
    on = min(polling_cpu_s(True) for _ in range(3))
    print(f"track_queue_positions: {on:.3f} vs {off:.3f} CPU s, {on / off:.2f}x")


if __name__ == "__main__":
    main()
