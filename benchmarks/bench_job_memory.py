"""Memory the emulator keeps per finished service job (a 10 KiB payload), measured with
``tracemalloc`` over ``--jobs`` jobs submitted to seed-demo and run to completion in process:
once keeping every finished job, once with ``--max-finished`` of them kept (the retention bound;
what stays per expired job is the residue a bound cannot remove).

    .venv/bin/python benchmarks/bench_job_memory.py --jobs 2000 --max-finished 200
"""

from __future__ import annotations

import argparse
import json
import tracemalloc
from pathlib import Path

from quota_constructs.local.emulator import Emulator
from quota_constructs.local.state.job_service import JobRetention
from tests.helpers import payload

ORGS_DIR = Path(__file__).resolve().parents[1] / "stacks" / "orgs"

HYPERPARAMETERS = {f"h{i}": "x" * 90 for i in range(95)}
"""Makes the payload about 10 KiB, like a real training job's request."""


def kept_bytes(jobs: int, retention: JobRetention) -> tuple[int, int]:
    """The payload's size and the bytes kept after ``jobs`` jobs finished under ``retention``."""
    emulator = Emulator(seed=1, retention=retention)
    queue = emulator.provision_file(ORGS_DIR / "seed-demo.yaml").job_queue_arn
    text = json.dumps({**json.loads(payload()), "HyperParameters": HYPERPARAMETERS})
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for index in range(jobs):
        request = {
            "jobName": f"j{index}",
            "jobQueue": queue,
            "serviceJobType": "SAGEMAKER_TRAINING",
            "serviceRequestPayload": text,
            "quotaShareName": "QS1",
        }
        emulator.call("batch", "SubmitServiceJob", request)
        if index % 100 == 99:
            emulator.advance(emulator.clock.now() + 86_400)
    emulator.advance(emulator.clock.now() + 10**6)
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return len(text), kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--max-finished", type=int, default=200)
    args = parser.parse_args()
    forever = JobRetention(finished_for_s=None, max_finished=None)
    size, all_kept = kept_bytes(args.jobs, forever)
    _, bounded = kept_bytes(args.jobs, JobRetention(None, max_finished=args.max_finished))
    bound_kib = all_kept / args.jobs / 1024 * args.max_finished
    residue = (bounded - bound_kib * 1024) / (args.jobs - args.max_finished)
    print(f"payload {size} bytes: {all_kept / args.jobs / 1024:.1f} KiB kept per finished job")
    print(
        f"{args.jobs} jobs, at most {args.max_finished} kept: {bounded / 2**20:.2f} MiB kept "
        f"(vs {all_kept / 2**20:.2f} MiB keeping all); {residue:.0f} bytes per expired job remain"
    )


if __name__ == "__main__":
    main()
