"""Forecast benchmark: the commands users run on a queue of 20 shares with 1,000 waiting jobs.

Run: ``.venv/bin/python benchmarks/bench_forecast.py [--waiting 1000] [--repeat 3]``.

An emulator (virtual clock, in this process) holds an organisation of 20 shares of 4 x
ml.g5.xlarge (LEND_AND_BORROW, LEND and RESERVE in turn), a history of 10 finished jobs per
share, 4 jobs running per share and ``--waiting`` jobs waiting, spread evenly. Each command is
one child process (``quota status --json``, ``quota jobs ls --json``, ``quota jobs submit
--what-if --json``), timed by its CPU time (user + system, ``resource.getrusage(RUSAGE_CHILDREN)``),
never wall time: start-up, imports, the API reads (one describe per active job) and the
forecast. The emulator's own CPU (this process) is not counted. Goal (issue 44): under 2
CPU-seconds per command at 1,000 waiting jobs. The best of ``--repeat`` runs is reported.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.runtime import JobSubmission, TrainingJob

QUOTA = str(Path(sys.executable).with_name("quota"))
GPU = "ml.g5.xlarge"
SHARES = 20
STRATEGIES = ("LEND_AND_BORROW", "LEND", "RESERVE")
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"


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
        image="123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
        instance_type=GPU,
        instance_count=1,
        role_arn=ROLE,
        output_s3_uri="s3://bucket/out",
        max_runtime_s=4 * 3600,
    )
    tags = {"quota.local/duration-seconds": str(int(seconds))}
    request = JobSubmission(name, share, payload, tags=tags, priority=0).request(queue)
    batch.submit_service_job(**request)  # type: ignore[attr-defined]


def fill(emu: EmulatorServer, waiting: int, seed: int = 7) -> None:
    """History, then 4 running and ``waiting`` / 20 waiting jobs per share."""
    rng = random.Random(seed)
    batch = emu.client("batch")
    queue = emu.organisation("bench").job_queue_name
    shares = [f"team{i:02d}" for i in range(SHARES)]
    for share in shares:
        for n in range(10):
            submit(batch, queue, share, f"{share}-hist-{n}", rng.uniform(300, 1200))
    emu.advance(4 * 3600)
    for share in shares:
        for n in range(4 + waiting // SHARES):
            submit(batch, queue, share, f"{share}-job-{n}", rng.uniform(600, 3600))
    emu.advance(10)


def cpu_of(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    """CPU seconds (user + system) of one child process, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiting", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        org = organisation(Path(folder))
        with EmulatorServer(org_files=[org], start_epoch=1_780_000_000.0) as emu:
            fill(emu, args.waiting)
            env = {**emu.sandbox_env(Path(folder) / "aws"), "PATH": str(Path(QUOTA).parent)}
            base = ["--organisation", "bench", "--endpoint-url", emu.endpoint_url]
            commands = {
                "quota status --json": [QUOTA, "status", "--json", *base],
                "quota jobs ls --json": [QUOTA, "jobs", *base, "ls", "--json"],
                "quota jobs submit --what-if --json": [
                    QUOTA,
                    "jobs",
                    *base,
                    "submit",
                    "what-if",
                    "--share",
                    "team00",
                    "--image",
                    "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
                    "--instance-type",
                    GPU,
                    "--role-arn",
                    ROLE,
                    "--output-s3",
                    "s3://b/o",
                    "--what-if",
                    "--json",
                ],
            }
            print(f"{SHARES} shares, {args.waiting} waiting jobs, 80 running, 200 finished")
            for label, command in commands.items():
                runs = [cpu_of(command, env) for _ in range(args.repeat)]
                best = min(cpu for cpu, _ in runs)
                out = json.loads(runs[0][1])
                shown = _summary(out)
                print(f"{label:40s} {best:5.2f} CPU-s (best of {args.repeat}) {shown}")


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
