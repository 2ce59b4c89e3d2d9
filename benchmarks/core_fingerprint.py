"""Behaviour fingerprint of the scheduler core: one hash per seeded scenario.

Run: ``.venv/bin/python benchmarks/core_fingerprint.py [--save F.json | --check F.json]``.

Each scenario plays a seeded random sequence of operations on a random organisation (1-20
shares, 1-5 instance types, every strategy, borrow limits, in-share preemption) under one option
set (strict order and ``backfill_depth``, LEAST_USAGE share order, delayed preemptions,
DISABLED shares that do not dispatch, preemptions that consume attempts, RUNNABLE time limits,
a binding service environment): submits (one or two instance types, some infeasible, failures,
retries, timeouts, checkpoints), time steps, priority updates, terminations, share updates
(limits, strategy, state), share removals and service-environment changes. The hash covers
every event the core emits, a snapshot, the ledger, the usage and every RUNNABLE job's
pending reason after each operation, and every job's final state. The overload benchmark's
traces (``bench_overload.py``) are hashed too. Same code, same hashes: run it before and
after a change of the core's mechanism (not of its rules) and compare with ``--check``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from quota_constructs.model import QuotaShareSpec, ShareState, SharingStrategy
from quota_constructs.scheduling import (
    COMPILED,
    Attempt,
    Capacity,
    Job,
    JobRequest,
    JobStatus,
    Outcome,
    Scheduler,
    SchedulerEvent,
    SchedulerOptions,
    ShareOrder,
    VictimCandidate,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_overload

TYPES = bench_overload.TYPES


class LongestRunningFirst:
    """A victim policy other than the default: longest-running candidates first, and only
    when they have run at least 30 s (so its answer depends on time)."""

    def choose(
        self, candidates: Sequence[VictimCandidate], need: Capacity
    ) -> list[VictimCandidate] | None:
        chosen: list[VictimCandidate] = []
        freed: dict[str, int] = {}
        for cand in sorted(candidates, key=lambda c: (-c.running_for, c.job.seq)):
            if all(freed.get(t, 0) >= n for t, n in need.items()):
                break
            if cand.running_for >= 30 and any(cand.frees.get(t, 0) for t in need):
                chosen.append(cand)
                for t, n in cand.frees.items():
                    freed[t] = freed.get(t, 0) + n
        covered = all(freed.get(t, 0) >= n for t, n in need.items())
        return chosen if covered else None


OPTION_SETS: dict[str, SchedulerOptions] = {
    "default": SchedulerOptions(),
    "simulator": bench_overload.OPTIONS,
    "backfill": SchedulerOptions(scheduled_to_starting_s=0.0, backfill_depth=3),
    "least-usage": SchedulerOptions(share_order=ShareOrder.LEAST_USAGE, preemption_duration_s=5),
    "strict-delayed": SchedulerOptions(preemption_duration_s=20.0, starting_to_running_s=0.0),
    "no-disabled-dispatch": SchedulerOptions(
        disabled_share_dispatches=False, preemption_consumes_attempt=True, backfill_depth=1
    ),
    "time-limits": SchedulerOptions(
        runnable_time_limits={"MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED": 60.0},
        submitted_to_runnable_s=2.0,
    ),
    "custom-policy": SchedulerOptions(
        victim_policy=LongestRunningFirst(), preemption_duration_s=10.0, backfill_depth=0
    ),
}


@dataclass(frozen=True)
class Scenario:
    name: str
    seed: int
    options: str
    shares: int
    types: int
    ops: int
    binding_se: bool = False


SHAPES = [
    (3, 1, False),
    (8, 2, False),
    (20, 1, False),
    (12, 5, True),
    (5, 3, True),
    (2, 1, False),
    (20, 5, False),
    (10, 3, False),
    (6, 2, True),
    (15, 4, False),
]
"""Shares, instance types and whether the service environment binds, one per seed."""
SCENARIOS = [
    Scenario(f"{opts}-{seed}", seed, opts, shares, types, 1500, binding)
    for seed, (shares, types, binding) in enumerate(SHAPES)
    for opts in OPTION_SETS
]


def random_share(rng: random.Random, name: str, types: int) -> QuotaShareSpec:
    own = rng.sample(TYPES[:types], rng.randint(1, min(types, 3)))
    strategy = rng.choice([*SharingStrategy, SharingStrategy.LEND_AND_BORROW])
    borrow = rng.choice([None, -1, 0, 50, 100, 200])
    return QuotaShareSpec(
        name=name,
        capacity={t: rng.randint(1, 8) for t in own},
        strategy=strategy,
        borrow_limit=borrow if strategy is SharingStrategy.LEND_AND_BORROW else None,
        in_share_preemption=rng.random() < 0.5,
    )


class Player:
    """Plays one scenario and feeds everything observable into a hash."""

    def __init__(self, scenario: Scenario) -> None:
        self.rng = random.Random(scenario.seed * 7919 + len(scenario.options))
        self.scenario = scenario
        self.digest = hashlib.sha256()
        shares = [random_share(self.rng, f"s{i}", scenario.types) for i in range(scenario.shares)]
        se = None
        if scenario.binding_se:
            total: dict[str, int] = {}
            for spec in shares:
                for t, n in spec.capacity.items():
                    total[t] = total.get(t, 0) + n
            se = {t: max(1, n * 2 // 3) for t, n in total.items()}
        self.sched = Scheduler(
            queue_name="fp",
            shares=shares,
            options=OPTION_SETS[scenario.options],
            service_environment=se,
        )
        self.sched.subscribe(self.on_event)
        self.now = 0.0
        self.created = scenario.shares

    def feed(self, *parts: object) -> None:
        self.digest.update(repr(parts).encode())

    def on_event(self, e: SchedulerEvent) -> None:
        self.feed("ev", e.time, e.kind, e.job.job_id, e.status, e.previous_status)
        self.feed(e.status_reason, e.preemption)

    def play(self) -> str:
        ops: list[tuple[int, Callable[[], None]]] = [
            (40, self.submit),
            (25, self.step),
            (8, self.priority),
            (5, self.terminate),
            (3, self.reshape),
            (1, self.remove_or_add),
            (1, self.service_environment),
        ]
        weights = [w for w, _ in ops]
        for _ in range(self.scenario.ops):
            op = self.rng.choices([f for _, f in ops], weights)[0]
            op()
            self.sched.advance(self.now)
            self.observe()
        self.sched.run_until_idle(limit=self.now + 50_000)
        self.observe()
        for job in self.sched.jobs:
            self.feed_job(job)
        return self.digest.hexdigest()

    def observe(self) -> None:
        sched = self.sched
        self.feed("at", sched.now, sched.next_event_time(), sched.snapshot(limit=30))
        self.feed(sched.ledger(), sched.usage(), sched.total_usage())
        for job in sched.jobs:
            if job.status is JobStatus.RUNNABLE:
                self.feed(job.job_id, sched.pending_reason(job.job_id))
            elif job.status.is_dispatched:
                self.feed(job.job_id, sched.preemption_in_progress(job.job_id))

    def feed_job(self, job: Job) -> None:
        self.feed("job", job.job_id, job.status, job.status_reason, job.priority, job.alloc)
        self.feed(job.created_at, job.runnable_at, job.scheduled_at, job.starting_at)
        self.feed(job.started_at, job.stopped_at, job.progress_s, job.is_terminated)
        self.digest.update(f"({attempts_text(job)}, {job.preemptions!r})".encode())

    # --- operations ---------------------------------------------------------------------------

    def _share(self) -> QuotaShareSpec | None:
        shares = self.sched.queue.shares
        return self.rng.choice(shares) if shares else None

    def submit(self) -> None:
        rng = self.rng
        spec = self._share()
        if spec is None or spec.state is ShareState.DISABLED:
            return
        own = list(spec.capacity)
        itypes = rng.sample(own, min(len(own), 2)) if rng.random() < 0.15 else [rng.choice(own)]
        if rng.random() < 0.03:
            itypes = [rng.choice(TYPES)]  # maybe not the share's: infeasible
        demand = {t: rng.choice([1, 1, 1, 2, 2, 3, 4, 6]) for t in itypes}
        self.sched.submit(
            JobRequest(
                job_name=f"j{len(self.sched.jobs)}",
                share_name=spec.name,
                demand=demand,
                duration_s=rng.choice([None, *(rng.uniform(5, 400) for _ in range(20))]),
                outcome=Outcome.FAILED if rng.random() < 0.05 else Outcome.SUCCEEDED,
                priority=rng.choice([None, 0, 1, 1, 1, 5, 9]),
                preemption_retries=rng.choice([None, None, 0, 1, 3]),
                retry_attempts=rng.choice([1, 1, 2, 3]),
                attempt_duration_s=rng.choice([None, None, None, 150.0]),
                checkpoint_interval_s=rng.choice([None, 30.0]),
            ),
            now=self.now,
        )

    def step(self) -> None:
        self.now += self.rng.choice([0.0, 1.0, 5.0, self.rng.uniform(0, 120)])

    def _job(self) -> Job | None:
        jobs = self.sched.jobs
        return jobs[-self.rng.randint(1, min(len(jobs), 60))] if jobs else None

    def priority(self) -> None:
        job = self._job()
        if job is not None:
            self.sched.update_priority(job.job_id, self.rng.randint(0, 9), now=self.now)

    def terminate(self) -> None:
        job = self._job()
        if job is not None:
            self.sched.terminate(job.job_id, "stopped", now=self.now)

    def reshape(self) -> None:
        spec = self._share()
        if spec is None:
            return
        new = random_share(self.rng, spec.name, self.scenario.types)
        state = ShareState.DISABLED if self.rng.random() < 0.2 else ShareState.ENABLED
        self.sched.upsert_share(replace(new, state=state), now=self.now)

    def remove_or_add(self) -> None:
        shares = self.sched.queue.shares
        if len(shares) > 1 and self.rng.random() < 0.5:
            self.sched.remove_share(self.rng.choice(shares).name, now=self.now)
        elif len(shares) < 20:
            self.created += 1
            name = f"s{self.created}"
            self.sched.upsert_share(random_share(self.rng, name, self.scenario.types), now=self.now)

    def service_environment(self) -> None:
        if self.rng.random() < 0.5:
            self.sched.set_service_environment(None, now=self.now)
            return
        se = self.sched.service_environment
        cut = {t: max(0, n - self.rng.randint(0, 6)) for t, n in se.items()}
        self.sched.set_service_environment(cut, now=self.now)


def trace_fingerprint(case: bench_overload.Case, jobs: int, seed: int) -> str:
    """Hash of every event and final job state of a benchmark trace."""
    digest = hashlib.sha256()
    rng = random.Random(seed)
    specs = bench_overload.organisation(rng, case.shares, case.types)
    arrivals = bench_overload.trace(rng, specs, bench_overload.LOADS[case.family], jobs)
    sched = Scheduler(queue_name="bench", shares=specs, options=bench_overload.OPTIONS)

    def on_event(e: SchedulerEvent) -> None:
        digest.update(repr((e.time, e.kind, e.job.job_id, e.status, e.preemption)).encode())

    sched.subscribe(on_event)
    bench_overload.drive(sched, arrivals)
    sched.run_until_idle()
    for job in sched.jobs:
        digest.update(final_state(job).encode())
    return digest.hexdigest()


def attempt_text(a: Attempt) -> str:
    """An attempt as its record's repr read before attempts kept their job's id instead of
    their own (hashes of either version's core compare)."""
    return (
        f"Attempt(number={a.number!r}, attempt_id={a.attempt_id!r}, "
        f"scheduled_at={a.scheduled_at!r}, started_at={a.started_at!r}, "
        f"stopped_at={a.stopped_at!r}, status_reason={a.status_reason!r}, "
        f"preempted={a.preempted!r})"
    )


def attempts_text(job: Job) -> str:
    """The job's attempts as the repr of their list read (:func:`attempt_text`)."""
    return f"[{', '.join(attempt_text(a) for a in job.attempts)}]"


def final_state(job: Job) -> str:
    """What the hash covers of a job at the end: id, status, attempts and preemptions."""
    return f"({job.job_id!r}, {job.status!r}, {attempts_text(job)}, {job.preemptions!r})"


TRACES = [
    bench_overload.Case(family, shares, types)
    for family, shares, types in [
        ("overloaded", 20, 1),
        ("overloaded", 5, 5),
        ("stationary", 20, 1),
        ("underloaded", 20, 5),
        ("overloaded", 1, 1),
    ]
]


def fingerprints(quick: bool) -> dict[str, str]:
    print(f"scheduler core: {'compiled' if COMPILED else 'pure Python'}", flush=True)
    out: dict[str, str] = {}
    for scenario in SCENARIOS:
        out[scenario.name] = Player(scenario).play()
        print(f"{scenario.name:32} {out[scenario.name][:16]}", flush=True)
    for case in TRACES:
        key = f"trace {case.label}"
        out[key] = trace_fingerprint(case, 3_000 if quick else 10_000, seed=7)
        print(f"{key:32} {out[key][:16]}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", type=Path)
    parser.add_argument("--check", type=Path)
    parser.add_argument("--quick", action="store_true", help="Shorter benchmark traces.")
    args = parser.parse_args()
    result = fingerprints(args.quick)
    if args.save is not None:
        args.save.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if args.check is not None:
        expected = json.loads(args.check.read_text(encoding="utf-8"))
        keys = expected.keys() | result.keys()
        differ = sorted(k for k in keys if expected.get(k) != result.get(k))
        print("identical" if not differ else f"DIFFERENT: {', '.join(differ)}")
        raise SystemExit(1 if differ else 0)


if __name__ == "__main__":
    main()
