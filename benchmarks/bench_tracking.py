"""API calls needed to track 200 jobs to completion: list-based waits vs one describe per job.

Both trackers follow the same workload on the local emulator (virtual clock, so no real
waiting): ``--jobs`` jobs over two quota shares with ``--slots`` instances in all, each running
60-300 emulated seconds, polled every ``--interval`` emulated seconds (the SageMaker SDK and the
AWS sample poll every 5 s). The counts are the emulator's own ``request_counts``.

- sdk: every poll, ``DescribeServiceJob`` for each job not finished yet (``TrainingQueuedJob.wait``
  / the tutorial's ``await_jobs``);
- ours: :meth:`QueueClient.wait` at the same fixed interval (``ListServiceJobs`` pages);
- ours, backoff: :meth:`QueueClient.wait` with its default jittered backoff (5 s, x1.5, 60 s).

Goal: ours >= 20x fewer calls than sdk.

    .venv/bin/python benchmarks/bench_tracking.py [--jobs 200] [--slots 40] [--interval 5]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quota_constructs.commands.demo import emulator_client
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.runtime import (
    Backoff,
    JobHandle,
    JobStatus,
    QueueClient,
    TrainingJob,
    Until,
)

JOB = TrainingJob(
    image="123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
    instance_type="ml.g5.xlarge",
    role_arn="arn:aws:iam::123456789012:role/SageMakerExecutionRole",
    output_s3_uri="s3://bucket/out",
    max_runtime_s=3600,
)


def org_file(directory: Path, slots: int) -> Path:
    half = slots // 2
    path = directory / "bench.yaml"
    path.write_text(
        "organisation: bench\nshares:\n"
        f"  - name: A\n    capacity: {{ml.g5.xlarge: {half}}}\n    strategy: LEND_AND_BORROW\n"
        f"  - name: B\n    capacity: {{ml.g5.xlarge: {slots - half}}}\n    strategy: LEND\n"
    )
    return path


def submit_workload(client: QueueClient, jobs: int) -> list[JobHandle]:
    handles = []
    for i in range(jobs):
        seconds = 60 + (i * 37) % 241  # 60..300 s, deterministic
        tags = {"quota.local/duration-seconds": str(seconds)}
        handles.append(client.submit(f"job-{i}", "AB"[i % 2], JOB, tags=tags, priority=i % 5))
    return handles


def sdk_way(client: QueueClient, jobs: list[JobHandle], interval: float) -> None:
    """One DescribeServiceJob per unfinished job per poll."""
    pending = {j.job_id for j in jobs}
    while pending:
        for job_id in sorted(pending):
            if client.describe(job_id).status.is_terminal:
                pending.discard(job_id)
        if pending:
            client.clock.sleep(interval)


def run(
    org: Path, jobs: int, track: Callable[[QueueClient, list[JobHandle]], object]
) -> dict[str, Any]:
    """Submit the workload on a fresh emulator, track it, count the tracking calls."""
    with EmulatorServer(org_files=[org], clock="virtual") as emu:
        client = emulator_client(emu, organisation="bench")
        handles = submit_workload(client, jobs)
        before = dict(emu.request_counts)
        start = emu.now
        track(client, handles)
        after = emu.request_counts
        calls = {op: n - before.get(op, 0) for op, n in after.items() if n != before.get(op)}
        finished = client.list(statuses=[JobStatus.SUCCEEDED])
        if len(finished) != jobs:
            raise SystemExit(f"only {len(finished)} of {jobs} jobs SUCCEEDED; the run is invalid")
        return {"calls": calls, "total": sum(calls.values()), "emulated_s": round(emu.now - start)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--slots", type=int, default=40)
    parser.add_argument("--interval", type=float, default=5.0)
    args = parser.parse_args()
    fixed = Backoff(initial=args.interval, maximum=args.interval, jitter=0)
    with tempfile.TemporaryDirectory() as tmp:
        org = org_file(Path(tmp), args.slots)
        results = {
            "sdk": run(org, args.jobs, lambda c, j: sdk_way(c, j, args.interval)),
            "ours": run(
                org, args.jobs, lambda c, j: c.wait(j, until=Until.TERMINAL, backoff=fixed)
            ),
            "ours_backoff": run(org, args.jobs, lambda c, j: c.wait(j, until=Until.TERMINAL)),
        }
    sdk = results["sdk"]["total"]
    print(f"tracking {args.jobs} jobs, {args.slots} instances, poll every {args.interval:g} s")
    for name, result in results.items():
        ratio = sdk / result["total"] if result["total"] else float("inf")
        print(
            f"  {name:13s} {result['total']:7d} calls  {ratio:6.1f}x fewer than sdk  "
            f"{result['calls']}  ({result['emulated_s']} emulated s)"
        )
    print(json.dumps({"jobs": args.jobs, "slots": args.slots, **results}))


if __name__ == "__main__":
    main()
