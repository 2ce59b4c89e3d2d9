"""Pure Python vs the compiled scheduler core, side by side: jobs per CPU-second and growth.

Run: ``.venv/bin/python benchmarks/bench_compiled.py`` (options: ``--sizes``, ``--seed``) after
``make setup`` built the core (``tools/compile_core.py``). Each case of ``bench_overload.py``
(overloaded 20 shares x 1 and x 5 instance types, underloaded 20 x 5) runs in two fresh
processes one after the other, the first with ``QUOTA_COMPILE=0`` (pure Python), the second with
the build; each does what ``bench_overload.py`` does (a 2k warm-up, then the 10k, 100k and 10k
traces, collector paused, CPU time of the process) and says which core it ran. Growth is the 100k
CPU time over the mean of the two 10k ones; speed-up is compiled over pure at 100k jobs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_overload

CASES = [
    bench_overload.Case("overloaded", 20, 1),
    bench_overload.Case("overloaded", 20, 5),
    bench_overload.Case("underloaded", 20, 5),
]


def child(case: bench_overload.Case, sizes: list[int], seed: int) -> dict[str, object]:
    """Run one case in this process (the core it imported) and return its figures."""
    import quota_constructs.scheduling as scheduling

    small_n, large_n = sizes
    bench_overload.run(case, 2_000, seed + 1)  # warm-up, not measured
    small = bench_overload.run(case, small_n, seed)
    large = bench_overload.run(case, large_n, seed)
    again = bench_overload.run(case, small_n, seed)
    return {
        "compiled": scheduling.COMPILED,
        "small": [small.jobs_per_cpu_s, again.jobs_per_cpu_s],
        "large": large.jobs_per_cpu_s,
        "growth": large.cpu_s / ((small.cpu_s + again.cpu_s) / 2),
        "succeeded": large.succeeded,
    }


def measure(case: bench_overload.Case, sizes: list[int], seed: int, pure: bool) -> dict:
    env = {**os.environ, "QUOTA_COMPILE": "0"} if pure else dict(os.environ)
    args = [case.family, str(case.shares), str(case.types), *map(str, sizes), str(seed)]
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict = json.loads(out.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[10_000, 100_000])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        family, shares, types, small, large, seed = args.child
        case = bench_overload.Case(family, int(shares), int(types))
        print(json.dumps(child(case, [int(small), int(large)], int(seed))))
        return
    console = Console(width=140)
    table = Table(title="Scheduler core, pure Python vs compiled (mypyc): jobs per CPU-second")
    columns = ["family", "shares x types", "core", "10k", "100k", "growth", "speed-up", "goal"]
    for column in columns:
        table.add_column(column, justify="right")
    for case in CASES:
        pure = measure(case, args.sizes, args.seed, pure=True)
        native = measure(case, args.sizes, args.seed, pure=False)
        if not native["compiled"]:
            console.print("no compiled core in use: run `make setup` (QUOTA_COMPILE unset)")
            raise SystemExit(1)
        assert pure["succeeded"] == native["succeeded"], "the two cores disagree"
        speedup = native["large"] / pure["large"]
        for name, r in (("pure Python", pure), ("compiled", native)):
            fast = case.family != "overloaded" or r["large"] >= 20_000
            table.add_row(
                case.family,
                f"{case.shares} x {case.types}",
                name,
                " / ".join(f"{v:,.0f}" for v in r["small"]),
                f"{r['large']:,.0f}",
                f"{r['growth']:.1f}x",
                f"{speedup:.2f}x" if r is native else "",
                "met" if fast and r["growth"] <= 12 else "NOT MET",
            )
        console.print(
            f"{case.label}: pure {pure['large']:,.0f}, compiled {native['large']:,.0f} jobs "
            f"per CPU s at {args.sizes[1]:,} jobs ({speedup:.2f}x)",
            highlight=False,
        )
    console.print(table)


if __name__ == "__main__":
    main()
