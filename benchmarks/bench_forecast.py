"""Forecast benchmark: the commands users run on a queue of 20 shares with 1,000 waiting jobs.

Run: ``.venv/bin/python benchmarks/bench_forecast.py [--waiting 1000 ...] [--history-days 7]
[--arrivals] [--repeat 3] [--save DIR]``.

An emulator (virtual clock, in this process, job ids from a fixed seed) holds an organisation of
20 shares of 4 x ml.g5.xlarge (LEND_AND_BORROW, LEND and RESERVE in turn), a history of finished
jobs, 4 jobs running per share and ``--waiting`` jobs waiting, spread evenly. The history is 10
finished jobs per share over 4 virtual hours, or with ``--history-days D`` 10 jobs per share and
day submitted over ``D`` virtual days (the case where an arrival model has a history to learn
from). Each command is one child process (``quota status --json``, ``quota jobs ls --json``,
``quota jobs submit --what-if --json``; ``--arrivals`` adds that option to each), timed by its
CPU time (user + system, ``resource.getrusage(RUSAGE_CHILDREN)``), never wall time: start-up,
imports, the API reads (one describe per active job) and the forecast. The emulator's own CPU
(this process) is not counted. Measured side by side, the floor: a child that does only the
reads every forecast needs (boto3 imported, one client, the active jobs listed and each
described), so that a run on a slow moment of the machine shows what the commands add to it. The
children import the code this process imports (``PYTHONPATH`` is passed on). Goal (issue 44):
under 2 CPU-seconds per command at 1,000 waiting jobs. The best of ``--repeat`` runs is
reported; several ``--waiting`` sizes show how the cost grows. ``--save DIR`` writes each
command's output (``DIR/<waiting>/<command>.json``) to compare two versions of the code: the
forecasts must be the same for the same seed.
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
from pathlib import Path

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.runtime import JobSubmission, TrainingJob
from quota_constructs.runtime.jobs import ACTIVE_STATUSES

QUOTA = str(Path(sys.executable).with_name("quota"))
GPU = "ml.g5.xlarge"
SHARES = 20
STRATEGIES = ("LEND_AND_BORROW", "LEND", "RESERVE")
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1"
START_EPOCH = 1_780_000_000.0
HISTORY_PER_DAY = 10
"""Finished jobs per share and virtual day with ``--history-days``."""
PASSED_ON = ("PYTHONPATH", "QUOTA_COMPILE", "QUOTA_CORE_DIR")
"""Variables of this process the children get too: they then run the same code."""


def organisation(folder: Path) -> Path:
    """20 shares of 4 GPUs, the strategies in turn."""
    lines = ["organisation: bench", "shares:"]
    for index in range(SHARES):
        strategy = STRATEGIES[index % 3]
        borrow = ", borrow_limit: 100" if strategy == "LEND_AND_BORROW" else ""
        lines.append(
            f"  - {{name: team{index:02d}, capacity: {{{GPU}: 4}}, strategy: {strategy}{borrow}}}"
        )
    path = folder / "bench.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def submit(batch: object, queue: str, share: str, name: str, seconds: float) -> None:
    payload = TrainingJob(
        image=IMAGE,
        instance_type=GPU,
        instance_count=1,
        role_arn=ROLE,
        output_s3_uri="s3://bucket/out",
        max_runtime_s=4 * 3600,
    )
    tags = {"quota.local/duration-seconds": str(int(seconds))}
    request = JobSubmission(name, share, payload, tags=tags, priority=0).request(queue)
    batch.submit_service_job(**request)  # type: ignore[attr-defined]


def fill(emu: EmulatorServer, waiting: int, history_days: float = 0.0, seed: int = 7) -> None:
    """The history, then 4 running and ``waiting`` / 20 waiting jobs per share."""
    rng = random.Random(seed)
    batch = emu.client("batch")
    queue = emu.organisation("bench").job_queue_name
    shares = [f"team{i:02d}" for i in range(SHARES)]
    if history_days:
        _history_over_days(emu, batch, queue, shares, history_days, rng)
    else:
        for share in shares:
            for n in range(10):
                submit(batch, queue, share, f"{share}-hist-{n}", rng.uniform(300, 1200))
        emu.advance(4 * 3600)
    for share in shares:
        for n in range(4 + waiting // SHARES):
            submit(batch, queue, share, f"{share}-job-{n}", rng.uniform(600, 3600))
    emu.advance(10)


def _history_over_days(
    emu: EmulatorServer,
    batch: object,
    queue: str,
    shares: list[str],
    days: float,
    rng: random.Random,
) -> None:
    """:data:`HISTORY_PER_DAY` jobs per share and day at random times over ``days`` virtual
    days, each run to its end before the waiting jobs come (an hour of quiet at the end)."""
    span = days * 86400.0
    count = round(HISTORY_PER_DAY * days)
    arrivals = sorted((rng.uniform(0.0, span), share, n) for share in shares for n in range(count))
    now = 0.0
    for at, share, n in arrivals:
        emu.advance(at - now)
        now = at
        submit(batch, queue, share, f"{share}-hist-{n}", rng.uniform(300, 1200))
    emu.advance(span - now + 3600.0)


def cpu_of(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    """CPU seconds (user + system) of one child process, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout


FLOOR = """
import sys, boto3
batch = boto3.client("batch", endpoint_url=sys.argv[1])
pages = batch.get_paginator("list_service_jobs")
for status in sys.argv[3:]:
    for page in pages.paginate(jobQueue=sys.argv[2], jobStatus=status):
        for job in page["jobSummaryList"]:
            batch.describe_service_job(jobId=job["jobId"])
"""
"""The reads no forecast can do without, by boto3 alone: import, one client, the active jobs'
list (the statuses of :data:`ACTIVE_STATUSES`, as arguments) and one ``DescribeServiceJob``
each (the list tells no priority, ``MaxRuntimeInSeconds`` or tags)."""


def commands(endpoint_url: str, arrivals: bool) -> dict[str, list[str]]:
    """The three commands, as users type them."""
    base = ["--organisation", "bench", "--endpoint-url", endpoint_url]
    extra = ["--arrivals"] if arrivals else []
    return {
        "quota status --json": [QUOTA, "status", "--json", *base, *extra],
        "quota jobs ls --json": [QUOTA, "jobs", *base, "ls", "--json", *extra],
        "quota jobs submit --what-if --json": [
            *(QUOTA, "jobs", *base, "submit", "what-if", "--share", "team00"),
            *("--image", IMAGE, "--instance-type", GPU, "--role-arn", ROLE),
            *("--output-s3", "s3://b/o", "--what-if", "--json", *extra),
        ],
    }


def run(waiting: int, args: argparse.Namespace) -> None:
    """One emulator of ``waiting`` jobs: each command ``args.repeat`` times, the best shown."""
    with tempfile.TemporaryDirectory() as folder:
        org = organisation(Path(folder))
        with EmulatorServer(org_files=[org], start_epoch=START_EPOCH, seed=args.seed) as emu:
            fill(emu, waiting, args.history_days)
            env = {**emu.sandbox_env(Path(folder) / "aws"), "PATH": str(Path(QUOTA).parent)}
            env.update({k: os.environ[k] for k in PASSED_ON if k in os.environ})
            finished = SHARES * (
                round(HISTORY_PER_DAY * args.history_days) if args.history_days else 10
            )
            history = f"{args.history_days:g} days" if args.history_days else "4 hours"
            print(
                f"{SHARES} shares, {waiting} waiting jobs, {SHARES * 4} running, {finished} "
                f"finished over {history}{', --arrivals' if args.arrivals else ''}"
            )
            queue = emu.organisation("bench").job_queue_name
            statuses = [status.value for status in ACTIVE_STATUSES]
            floor = [sys.executable, "-c", FLOOR, emu.endpoint_url, queue, *statuses]
            best = min(cpu_of(floor, env)[0] for _ in range(args.repeat))
            label = "API reads alone (boto3 list + describes)"
            print(f"{label:40s} {best:5.2f} CPU-s (best of {args.repeat})")
            for label, command in commands(emu.endpoint_url, args.arrivals).items():
                runs = [cpu_of(command, env) for _ in range(args.repeat)]
                best = min(cpu for cpu, _ in runs)
                if args.save:
                    folder_out = args.save / str(waiting)
                    folder_out.mkdir(parents=True, exist_ok=True)
                    (folder_out / (label.replace(" ", "_") + ".json")).write_text(runs[0][1])
                shown = _summary(json.loads(runs[0][1]))
                print(f"{label:40s} {best:5.2f} CPU-s (best of {args.repeat}) {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiting", type=int, nargs="+", default=[1000])
    parser.add_argument("--history-days", type=float, default=0.0)
    parser.add_argument("--arrivals", action="store_true", help="Pass --arrivals to each.")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7, help="The emulator's job ids.")
    parser.add_argument("--save", type=Path, help="Write each command's stdout in this folder.")
    args = parser.parse_args()
    for waiting in args.waiting:
        run(waiting, args)


def _summary(out: object) -> str:
    if isinstance(out, list):
        starts = [j for j in out if "forecastStartS" in j]
        known = sum(j["forecastStartS"] is not None for j in starts)
        return f"{len(starts)} waiting jobs, {known} with a forecast start"
    if isinstance(out, dict) and "outcome" in out:
        return f"outcome {out['outcome']}, starts {out['startsInS']}"
    if isinstance(out, dict):
        heads = [r["headJob"] for r in out.get("quotaShares", []) if r.get("headJob")]
        known = sum(h["forecastStartS"] is not None for h in heads)
        return f"{len(heads)} share heads, {known} with a forecast start"
    return ""


if __name__ == "__main__":
    main()
