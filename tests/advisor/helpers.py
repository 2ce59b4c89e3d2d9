"""Helpers for advisor tests: the research organisation and team files, and a small search
case with a known optimum."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from quota_constructs.advisor.optimize import SearchOptions, SearchResult, optimize
from quota_constructs.advisor.profiles import parse_teams
from quota_constructs.advisor.workload import WorkloadJob

STACKS = Path(__file__).resolve().parents[2] / "stacks"
TEAMS_FILE = STACKS / "teams" / "research.yaml"
ORG_FILE = STACKS / "orgs" / "research.yaml"
GPU = "ml.g5.xlarge"
MIN = 60.0


class CountingExecutor(ThreadPoolExecutor):
    """A caller's own executor: threads, counting what the search submits."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.submitted = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


# A small case with a known optimum. a (2 GPUs) runs five 1-GPU jobs at 0 for 120 min and
# needs half of them to start at once (p50 wait <= 10 min); b (3 GPUs, LEND or RESERVE) runs one
# 2-GPU job at 30 min and must never wait (p90 0). b RESERVE: a cannot borrow, 3 of its 5 jobs
# wait 120 min (a misses). a borrowing 2 or 3 of b's GPUs: b must reclaim one, its job waits
# the 20 s preemption (b misses). a borrowing exactly 1 (75 % of 2): both met.
SMALL = parse_teams(
    {
        "organisation": "lab",
        "teams": [
            {
                "name": "a",
                "capacity": {GPU: 2},
                "workload": "experimental",
                "preemption_tolerant": True,
                "checkpointing": True,
                "needs_burst": True,
                "lends_when_idle": True,
                "targets": {"p50_wait_minutes": 10},
            },
            {
                "name": "b",
                "capacity": {GPU: 3},
                "workload": "ad_hoc",
                "lends_when_idle": True,
                "targets": {"p90_wait_minutes": 0},
            },
        ],
    }
)
DAY = 24 * 60 * MIN
# The case three times a week, a day apart (each over long before the next): b's 3 jobs a week
# over 10 weeks are the 30 a verdict needs (targets.MIN_JOBS, MIN_JOBS_PER_WEEK).
SMALL_JOBS = [
    job
    for day in range(3)
    for job in (
        *(WorkloadJob(day * DAY, "a", GPU, 1, 120 * MIN, 5) for _ in range(5)),
        WorkloadJob(day * DAY + 30 * MIN, "b", GPU, 2, 30 * MIN, 5),
    )
]
SMALL_WEEKS = 10
"""The small case's week repeated."""


def search_small(**options: Any) -> tuple[SearchResult, CountingExecutor]:
    """The optimizer on the small case with ``options``, and the executor it ran on."""
    with CountingExecutor() as executor:
        result = optimize(
            SMALL,
            workloads=[SMALL_JOBS] * SMALL_WEEKS,
            executor=executor,
            options=SearchOptions(**options),
        )
    return result, executor
