"""Whole-command benchmark: ``quota simulate ORG --workload W.csv --json`` as users run it.

Run: ``.venv/bin/python benchmarks/bench_command.py [--sizes 10000 100000] [--optimize]``.

Each measurement is one child process (``quota simulate ... --json``, output discarded), timed
by its CPU time (user + system, ``resource.getrusage(RUSAGE_CHILDREN)``), never wall time: start-up,
imports, reading the files, the simulation, its all-RESERVE baseline and the report. Traces
(``bench_overload.py``: 20 shares of 4 x ml.g5.xlarge, LEND_AND_BORROW / LEND / RESERVE, a job
every 30 s of 1-4 instances for 5-120 min): ``overloaded`` (offered work 3.9x the capacity) and
``underloaded`` (0.3x; arrivals and durations halved, so that 100k jobs are submitted within the
year a workload may span, ``advisor/limits.py``), at 10k and 100k jobs, pure Python
(``QUOTA_COMPILE=0``) and compiled
side by side in one run. Goals (issue 22): at 100k jobs overloaded, at least 20,000 jobs per
CPU-second compiled and 10,000 pure; 10k -> 100k growth at most 11x.

``--optimize``: ``quota recommend stacks/teams/research.yaml --optimize --workers 1 --json``
(3 workloads of 7 days) in one child process: CPU seconds per candidate.

``--against CHECKOUT`` (A/B): each command is also run with the code of another checkout of the
project (e.g. ``/work/main``: its ``quota_constructs`` and its own compiled build), the two
runs back to back, so both see the same load; prints both CPU times, the speed-up and whether
the two JSON outputs are byte for byte identical.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console
from rich.table import Table

from quota_constructs.advisor.workload import WorkloadJob, workload_csv
from quota_constructs.config import OrganisationFile
from quota_constructs.model import JobQueueSpec, Organisation

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_overload

ROOT = Path(__file__).resolve().parent.parent
QUOTA = str(Path(sys.executable).with_name("quota"))
FAMILIES = ("overloaded", "underloaded")
CORES = {"pure": "0", "compiled": "1"}
TIME_SCALE = {"overloaded": 1.0, "underloaded": 0.5}
"""Factor on arrival times and durations (same load): 100k underloaded jobs fit in a year."""


def write_trace(folder: Path, family: str, jobs: int, seed: int = 7) -> tuple[Path, Path]:
    """The benchmark's organisation and a ``jobs``-job trace of ``family``, as files."""
    rng = random.Random(seed)
    specs = bench_overload.organisation(rng, 20, 1)
    arrivals = bench_overload.trace(rng, specs, bench_overload.LOADS[family], jobs)
    org = Organisation(name=family, queue=JobQueueSpec(shares=tuple(specs)))
    scale = TIME_SCALE[family]
    workload = [
        WorkloadJob(
            submit_time_s=a.at * scale,
            share=a.share,
            instance_type=a.itype,
            instance_count=a.instances,
            duration_s=a.duration * scale,
            priority=a.priority,
        )
        for a in arrivals
    ]
    org_file, csv_file = folder / f"{family}.yaml", folder / f"{family}-{jobs}.csv"
    org_file.write_text(OrganisationFile.from_organisation(org).to_yaml())
    csv_file.write_text(workload_csv(workload))
    return org_file, csv_file


def child_cpu_s(
    args: list[str], compile_core: str, checkout: Path | None = None
) -> tuple[float, str]:
    """CPU seconds (user + system) of one child process running ``args``, and its stdout;
    ``checkout``: with that checkout's code (``python -m quota_constructs.commands`` there)."""
    env = {**os.environ, "QUOTA_COMPILE": compile_core}
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
        args = [sys.executable, "-m", "quota_constructs.commands", *args[1:]]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True, cwd=checkout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout


def commands(
    sizes: list[int], families: list[str]
) -> Iterator[tuple[str, int, str, str, list[str]]]:
    """(family, jobs, core, its QUOTA_COMPILE, the command) of each run (its files exist in a
    temporary folder while the caller runs it)."""
    with tempfile.TemporaryDirectory() as tmp:
        for family in families:
            for jobs in sizes:
                org_file, csv_file = write_trace(Path(tmp), family, jobs)
                args = [QUOTA, "simulate", str(org_file), "--workload", str(csv_file), "--json"]
                for core, flag in CORES.items():
                    yield family, jobs, core, flag, args


def simulate_rows(sizes: list[int], families: list[str]) -> list[tuple[str, str, int, float]]:
    """(family, core, jobs, CPU s) of each whole-command run."""
    return [
        (family, core, jobs, child_cpu_s(args, flag)[0])
        for family, jobs, core, flag, args in commands(sizes, families)
    ]


def ab_rows(
    sizes: list[int], families: list[str], other: Path
) -> list[tuple[str, str, int, float, float, bool]]:
    """(family, core, jobs, CPU s with ``other``'s code, CPU s with this one's, same JSON)."""
    rows = []
    for family, jobs, core, flag, args in commands(sizes, families):
        before, out_before = child_cpu_s(args, flag, other)
        after, out_after = child_cpu_s(args, flag, ROOT)
        rows.append((family, core, jobs, before, after, out_before == out_after))
    return rows


def print_ab(console: Console, rows: list[tuple[str, str, int, float, float, bool]]) -> None:
    table = Table(title="quota simulate --json, A/B: CPU s of the other checkout -> this one")
    for column in ("trace", "core", "jobs", "other", "this", "speed-up", "jobs per CPU s"):
        table.add_column(column, justify="right")
    table.add_column("same JSON")
    for family, core, jobs, before, after, same in rows:
        table.add_row(
            family,
            core,
            f"{jobs:,}",
            f"{before:.2f}",
            f"{after:.2f}",
            f"{before / after:.2f}x",
            f"{jobs / before:,.0f} -> {jobs / after:,.0f}",
            "yes" if same else "NO",
        )
    console.print(table)


def optimize_row() -> tuple[int, float]:
    """(candidates, CPU s) of one ``quota recommend --optimize`` on one worker (compiled)."""
    teams = ROOT / "stacks" / "teams" / "research.yaml"
    args = [QUOTA, "recommend", str(teams), "--optimize", "--workers", "1", "--json"]
    cpu, out = child_cpu_s(args, "1")
    return json.loads(out)["evaluated"], cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    parser.add_argument("--optimize", action="store_true")
    parser.add_argument("--against", type=Path, help="A/B: also run another checkout's code.")
    args = parser.parse_args()
    console = Console()
    if args.against is not None:
        print_ab(console, ab_rows(args.sizes, args.families, args.against.resolve()))
        return
    rows = simulate_rows(args.sizes, args.families)
    table = Table(title="quota simulate --json, whole child process (CPU time)")
    for column in ("trace", "core", "jobs", "CPU s", "jobs per CPU s", "growth"):
        table.add_column(column, justify="right")
    cpu = {(f, c, j): s for f, c, j, s in rows}
    small, large = min(args.sizes), max(args.sizes)
    for family, core, jobs, seconds in rows:
        growth = seconds / cpu[family, core, small] if jobs == large != small else None
        table.add_row(
            family,
            core,
            f"{jobs:,}",
            f"{seconds:.2f}",
            f"{jobs / seconds:,.0f}",
            f"{growth:.1f}x" if growth else "",
        )
    console.print(table)
    if args.optimize:
        candidates, seconds = optimize_row()
        console.print(
            f"quota recommend --optimize (research, 3 x 7 days, 1 worker): {candidates} "
            f"candidates, {seconds:.1f} CPU s, {seconds / candidates:.2f} CPU s per candidate"
        )


if __name__ == "__main__":
    main()
