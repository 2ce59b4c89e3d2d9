"""Parallel efficiency of ``quota recommend --optimize --executor dask://...``: 2 workers vs 1.

Run: ``.venv/bin/python benchmarks/bench_optimize_dask.py [--days 2] [--seeds 2] [--rounds 2]``
(needs the optional extra, ``pip install '.[dask]'``).

The research teams' search (``stacks/teams/research.yaml``) runs on two local Dask clusters
started here, one and two worker processes of one thread each, alternating round after round
so that both see the same load on a shared machine. Wall time of each search, best of the
rounds; efficiency = T(1 worker) / (2 x T(2 workers)). The load average (``os.getloadavg``)
before and after is printed, as the machine's other work slows both. Both clusters must give
the same search result (checked).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from distributed import LocalCluster

from quota_constructs.advisor.optimize import SearchOptions, cluster_executor, optimize
from quota_constructs.advisor.profiles import load_teams

TEAMS = Path(__file__).resolve().parent.parent / "stacks" / "teams" / "research.yaml"


def timed_search(url: str, options: SearchOptions) -> tuple[float, object, int]:
    """Wall seconds of one search on the cluster at ``url``, its result and candidates."""
    teams = load_teams(TEAMS)
    with cluster_executor(url) as executor:
        started = time.perf_counter()
        result = optimize(teams, options=options, executor=executor)
        return time.perf_counter() - started, result.best, result.evaluated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    options = SearchOptions(seeds=tuple(range(args.seeds)), days=args.days)
    load_before = os.getloadavg()
    clusters = {
        n: LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0")
        for n in (1, 2)
    }
    times: dict[int, list[float]] = {1: [], 2: []}
    bests, evaluated = {}, 0
    try:
        for _ in range(args.rounds):
            for n, cluster in clusters.items():
                url = "dask://" + cluster.scheduler_address.removeprefix("tcp://")
                seconds, bests[n], evaluated = timed_search(url, options)
                times[n].append(seconds)
    finally:
        for cluster in clusters.values():
            cluster.close()
    assert bests[1] == bests[2], "the two clusters found different results"
    one, two = min(times[1]), min(times[2])
    print(
        f"--optimize on Dask, research teams, {args.seeds} workloads x {args.days} days, "
        f"{evaluated} candidates, best of {args.rounds}: 1 worker {one:.1f} s, 2 workers "
        f"{two:.1f} s; speed-up {one / two:.2f}x, efficiency {one / (2 * two):.0%}; "
        f"load average before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f} "
        f"({os.cpu_count()} cores)"
    )


if __name__ == "__main__":
    main()
