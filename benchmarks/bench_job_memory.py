"""Memory the emulator keeps per finished service job (a 10 KiB payload), measured with
``tracemalloc`` over ``--jobs`` jobs submitted to seed-demo and run to completion in process.

    .venv/bin/python benchmarks/bench_job_memory.py --jobs 2000
"""

from __future__ import annotations

import argparse
import json
import tracemalloc

from quota_constructs.config import ORGS_DIR
from quota_constructs.local.emulator import Emulator
from tests.helpers import payload

HYPERPARAMETERS = {f"h{i}": "x" * 90 for i in range(95)}
"""Makes the payload about 10 KiB, like a real training job's request."""


def kib_per_finished_job(jobs: int) -> tuple[int, float]:
    """The payload's size in bytes and the KiB kept per finished job."""
    emulator = Emulator(seed=1)
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
    emulator.advance(10**6)
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return len(text), kept / jobs / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2000)
    size, kib = kib_per_finished_job(parser.parse_args().jobs)
    print(f"payload {size} bytes: {kib:.1f} KiB kept per finished job")


if __name__ == "__main__":
    main()
